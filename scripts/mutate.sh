#!/usr/bin/env bash
# Mutation testing of the core packages (issue 18): go-gremlins, pinned as a
# Go tool in tools/go.mod (a module of its own, so that its requirements
# stay out of perflab's go.mod), makes small changes to a package's code (a
# `<` made `<=`, a `+` made `-`, a condition inverted) and runs the package's
# own tests against each; a change no test notices "lived". At the end, one
# table: per package, killed / lived / not covered / timed out, the test
# efficacy (killed of killed + lived), the same with the lived mutants that
# the code documents as equivalent at their site ("equivalent mutant" in a
# comment on the line or just above it: no input tells the two programs
# apart) left out, and the mutant coverage (killed + lived of killed +
# lived + not covered).
#
#   scripts/mutate.sh                               # every core package (make mutate)
#   PKGS=internal/engine/pacer scripts/mutate.sh    # one package
#   WORKERS=2 COEFF=10 OUT=/tmp/m scripts/mutate.sh # more workers, the timeout factor, keep the JSON
#   PKGS=internal/analysis FILES="scaling.go sizing.go" scripts/mutate.sh # those files only
#
# WORKERS is 1 by default, so that a shared 2-core machine stays usable.
# gremlins times each mutant out after COEFF times its coverage run of the
# package; for a small package that run takes well under a second (the build
# is cached), shorter than rebuilding a mutant on a busy machine, so COEFF is
# raised for it until the timeout is at least MIN_TIMEOUT seconds. A
# package's subpackages are left out: each is mutated under its own name.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=${PKGS:-"internal/engine internal/engine/pacer internal/stats internal/analysis internal/results internal/plan internal/driver/http"}
WORKERS=${WORKERS:-1}
COEFF=${COEFF:-10}
MIN_TIMEOUT=${MIN_TIMEOUT:-20}
OUT=${OUT:-}
keep=$OUT
if [ -z "$OUT" ]; then
  OUT=$(mktemp -d)
fi
# gremlins runs in a session of its own (below), so that a mutant's test
# that it timed out is killed with its go command rather than left running
# on the machine; stopped, it first removes its work directory.
sid= reaper=
stop_gremlins() {
  [ -z "$reaper" ] || kill "$reaper" 2>/dev/null
  if [ -n "$sid" ]; then
    kill -INT -- "-$sid" 2>/dev/null && wait "$sid" 2>/dev/null
    kill -KILL -- "-$sid" 2>/dev/null
    sid=
  fi
  return 0
}
trap 'stop_gremlins; [ -n "$keep" ] || rm -rf "$OUT"' EXIT
trap 'exit 130' INT TERM

# When gremlins times a mutant out it kills `go test`, not the test binary,
# which runs on; a mutant that loops starting goroutines grew two engine
# test binaries to 23 GB that way. reap kills, every 5 s, the test binaries
# of session $1 whose go test is gone. Each process may also map at most
# MEM_LIMIT KiB (4 GiB; a test is far below it): beyond, it fails.
MEM_LIMIT=${MEM_LIMIT:-4194304}
reap() {
  while sleep 5; do
    ps -s "$1" -o pid=,ppid=,comm= 2>/dev/null | while read -r pid ppid comm; do
      case $comm in
      *.test) [ "$(ps -o comm= -p "$ppid" 2>/dev/null)" = go ] || kill -KILL "$pid" 2>/dev/null ;;
      esac
    done
  done
}
mkdir -p "$OUT"
GO=${GO:-go}
module=$($GO list -m)

# gremlins v0.6.0 finds a mutant's package by walking up from its file to
# a directory named like the package; for a package named otherwise
# (internal/driver/http is package httpdriver) it tests the module's root,
# which holds no package, so every mutant "is killed" in no time. gremlins
# therefore runs with a go of its own first in PATH (`go tool` would put
# GOROOT/bin first), which tests the package under test instead of the root.
gremlins=$("$GO" tool -modfile=tools/go.mod -n gremlins)
realgo=$(command -v "$GO")
mkdir -p "$OUT/bin"
cat >"$OUT/bin/go" <<EOF
#!/usr/bin/env bash
args=()
for a in "\$@"; do
  [ "\$1" = test ] && [ "\$a" = "$module" ] && a=$module/\$MUTATE_PKG
  args+=("\$a")
done
exec "$realgo" "\${args[@]}"
EOF
chmod +x "$OUT/bin/go"

for pkg in $PKGS; do
  exclude=()
  for sub in $($GO list "./$pkg/..."); do
    rel=${sub#"$module/$pkg"}
    [ -n "$rel" ] && exclude+=(--exclude-files "^${rel#/}/")
  done
  if [ -n "${FILES:-}" ]; then
    for f in "$pkg"/*.go; do
      f=${f##*/}
      case " $FILES " in *" $f "*) ;; *) exclude+=(--exclude-files "^$f\$") ;; esac
    done
  fi
  # The package's coverage run, as gremlins times it (-count=1: never a
  # cached result; the build cached by a first run), sets the coefficient
  # that gives MIN_TIMEOUT.
  GOFLAGS=-count=1 "$GO" test -cover "./$pkg/..." >/dev/null
  t0=$(date +%s%N)
  GOFLAGS=-count=1 "$GO" test -cover "./$pkg/..." >/dev/null
  coeff=$(( MIN_TIMEOUT * 1000000000 / ($(date +%s%N) - t0) + 1 ))
  coeff=$(( coeff > COEFF ? coeff : COEFF ))
  echo "== $pkg (timeout coefficient $coeff)" >&2
  (ulimit -v "$MEM_LIMIT" && GOFLAGS=-count=1 MUTATE_PKG=$pkg PATH="$OUT/bin:$PATH" exec setsid "$gremlins" unleash \
    --output-statuses l --workers "$WORKERS" --timeout-coefficient "$coeff" "${exclude[@]}" \
    --output "$OUT/${pkg//\//_}.json" "./$pkg") &
  sid=$!
  reap "$sid" &
  reaper=$!
  status=0
  wait "$sid" || status=$?
  kill "$reaper" 2>/dev/null
  kill -KILL -- "-$sid" 2>/dev/null || true # what is left of timed-out mutants
  sid= reaper=
  [ "$status" -eq 0 ] || exit "$status"
done

echo
python3 - "$OUT" $PKGS <<'PY'
import json, os, re, sys
out, pkgs = sys.argv[1], sys.argv[2:]

def documented(pkg, name, line):
    """Whether a mutant that lived is documented as equivalent at its site:
    "equivalent mutant" on its line, or in the comment lines just above."""
    for path in (name, os.path.join(pkg, os.path.basename(name))):
        if os.path.exists(path):
            break
    else:
        return False
    lines = open(path).read().split("\n")
    i = line - 1
    if i < len(lines) and re.search(r"(?i)equivalent mutant", lines[i]):
        return True
    i -= 1
    while i >= 0 and lines[i].strip().startswith("//"):
        if re.search(r"(?i)equivalent mutant", lines[i]):
            return True
        i -= 1
    return False

print("| package | killed | lived | of which documented equivalent | not covered | timed out | not viable | efficacy | efficacy, equivalents aside | mutant coverage | time |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for pkg in pkgs:
    r = json.load(open(f"{out}/{pkg.replace('/', '_')}.json"))
    n, eq = {}, 0
    for f in r["files"]:
        for m in f["mutations"]:
            n[m["status"]] = n.get(m["status"], 0) + 1
            if m["status"] == "LIVED" and documented(pkg, f["file_name"], m["line"]):
                eq += 1
    k, l, nc = n.get("KILLED", 0), n.get("LIVED", 0), n.get("NOT COVERED", 0)
    eff = 100 * k / (k + l) if k + l else 0
    eff2 = 100 * k / (k + l - eq) if k + l - eq else 0
    cov = 100 * (k + l) / (k + l + nc) if k + l + nc else 0
    print(f"| {pkg} | {k} | {l} | {eq} | {nc} | {n.get('TIMED OUT', 0)} | {n.get('NOT VIABLE', 0)} "
          f"| {eff:.1f} % | {eff2:.1f} % | {cov:.1f} % | {r['elapsed_time']:.0f} s |")
PY
