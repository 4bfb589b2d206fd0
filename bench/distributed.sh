#!/usr/bin/env bash
# What distributing the load over local worker processes costs: the total
# rate achieved and the generator's CPU per request for a plain run (one
# process) and for `perflab run --workers N`, N = 1, 2, 4, at one offered
# rate against the built-in target. The generator (the coordinator and its
# workers) is pinned to core 0, the target (5 ms latency) to core 1, both
# on 127.0.0.1. CPU is the user + system time of `perflab run` and of the
# workers it waited for (/usr/bin/time), over every request the run
# recorded; the rate is the steady-state window's. Medians of REPS runs,
# the variants interleaved in every repetition.
#
#   bench/distributed.sh            # RATE=5000 DUR=15 REPS=3
#
# Loopback only: the target listens on 127.0.0.1:18160.
set -euo pipefail
RATE=${RATE:-5000}
DUR=${DUR:-15}
REPS=${REPS:-3}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
go build -o "$work/perflab" ./cmd/perflab
taskset -c 1 "$work/perflab" target http --addr 127.0.0.1:18160 --latency 5ms >/dev/null 2>&1 &
target=$!
trap 'kill $target 2>/dev/null; wait $target 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do curl -fs http://127.0.0.1:18160/health >/dev/null && break; sleep 0.1; done
cat > "$work/plan.yaml" <<PLAN
name: distributed
profiles:
  - name: load
    duration: ${DUR}s
    workloads:
      - {name: get, driver: http, rate: ${RATE}/s, vus: {min: 50, max: 2000}, params: {url: "http://127.0.0.1:18160/"}}
PLAN
variants=("plain" 1 2 4)
for rep in $(seq "$REPS"); do
  for v in "${variants[@]}"; do
    args=()
    [ "$v" = plain ] || args=(--workers "$v")
    out="$work/$v-$rep"
    /usr/bin/time -f "%U %S" -o "$out.time" taskset -c 0 "$work/perflab" run "$work/plan.yaml" "${args[@]}" \
      --json --out "$out.runs" >"$out.json" 2>"$out.err" || { cat "$out.err" >&2; exit 1; }
    sqlite3 "$(ls -d "$out.runs"/*/results.db)" "SELECT SUM(ok + errors) FROM op_intervals" >"$out.requests"
  done
done
python3 - "$work" "$REPS" "$RATE" "${variants[@]}" <<'PY'
import json, statistics, sys
work, reps, rate, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
print(f"offered {rate}/s; generator on core 0, target on core 1; medians of {reps} runs\n")
print("| generator | achieved req/s | requests | CPU µs/req | (runs) | p50 ms | p99 ms |")
print("|---|---:|---:|---:|---|---:|---:|")
for v in variants:
    rows = []
    for i in range(1, reps + 1):
        base = f"{work}/{v}-{i}"
        s = json.load(open(base + ".json"))["workloads"][0]
        user, sys_ = map(float, open(base + ".time").read().split()[-2:])
        n = int(open(base + ".requests").read())
        op = s["operations"][0]
        rows.append((s["rate"], n, (user + sys_) / n * 1e6, op["latency_ms"]["p50"], op["latency_ms"]["p99"]))
    med = lambda k: statistics.median(r[k] for r in rows)
    name = "one process (plain run)" if v == "plain" else f"--workers {v}"
    runs = ", ".join(f"{r[2]:.1f}" for r in rows)
    print(f"| {name} | {med(0):.0f} | {med(1):.0f} | {med(2):.1f} | {runs} | {med(3):.3f} | {med(4):.3f} |")
PY
