#!/usr/bin/env bash
# Measures perflab's HTTP load generation against peers (wrk, and hey, vegeta,
# oha where installed) on this machine, all against the same nginx on
# 127.0.0.1. nginx is pinned to core 1, the generator to core 0. Each case
# runs REPS times; the table shows medians.
#
#   bench/http-vs-peers.sh            # full run (about 15 minutes)
#   DUR=5 LONG=20 REPS=1 bench/http-vs-peers.sh   # quick look
#   PARTS=c bench/http-vs-peers.sh                # only (c), the memory figures
#
# (a) closed loop, 64 connections, DUR s: requests/s, generator CPU µs/request
# (b) open loop at RATE req/s for DUR s: achieved rate, CPU µs/request, p50/p99
# (c) perflab's peak RSS after DUR s and after LONG s at RSS_RATE req/s,
#     with its anonymous and file-backed parts (bench/peakmem.py)
set -euo pipefail
DUR=${DUR:-15}; LONG=${LONG:-60}; REPS=${REPS:-3}; RATE=${RATE:-20000}; RSS_RATE=${RSS_RATE:-10000}; PARTS=${PARTS:-abc}
GEN_CORE=${GEN_CORE:-0}; SRV_CORE=${SRV_CORE:-1}
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:$HOME/go/bin:$HOME/.cargo/bin"
work=$(mktemp -d); trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null; rm -rf "$work"' EXIT
if [ -n "${PERFLAB:-}" ]; then cp "$PERFLAB" "$work/perflab" # another build, e.g. an older commit's
else go build -trimpath -ldflags '-s -w' -o "$work/perflab" ./cmd/perflab # as make build
fi

. bench/nginx-target.sh
start_nginx_target

# timed CMD...: runs CMD on the generator core; prints "cpu_seconds peak_rss_kib" to fd 3
timed() { /usr/bin/time -f '%U %S %M' -o "$work/time" taskset -c "$GEN_CORE" "$@" >"$work/out" 2>"$work/err" || true
  awk '{printf "%.3f %d\n", $1+$2, $3}' "$work/time" | tail -1; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else print a[int((NR+1)/2)]}'; }

# Each parser prints "requests p50_ms p99_ms" from the tool's output.
parse_wrk()     { awk '/requests in/ {r=$1} END {print r, "n/a", "n/a"}' "$work/out"; }
parse_perflab() { python3 - "$work/out" <<'PY'
import json,sys
s=json.load(open(sys.argv[1])); w=s["workloads"][0]; op=w["operations"][0]
print(w["requests_total"], op["latency_ms"]["p50"], op["latency_ms"]["p99"])
PY
}
parse_hey()     { awk '/Requests\/sec/ {rps=$2} /Total:/ && !t {t=$2} /  50%/ {p50=$3*1000} /  99%/ {p99=$3*1000} END {printf "%d %s %s\n", rps*t, p50, p99}' "$work/out"; }
parse_vegeta()  { python3 - "$work/out" <<'PY'
import json,sys
s=json.load(open(sys.argv[1])); l=s["latencies"]
print(s["requests"], l["50th"]/1e6, l["99th"]/1e6)
PY
}
parse_oha_lc()  { parse_oha; }
parse_oha()     { python3 - "$work/out" <<'PY'
import json,sys
s=json.load(open(sys.argv[1])); p=s["latencyPercentiles"]; n=sum(s.get("statusCodeDistribution",{}).values())
print(n, p["p50"]*1000, p["p99"]*1000)
PY
}

declare -A CLOSED=(
  [wrk]="wrk -t1 -c64 -d${DUR}s $url"
  [perflab]="$work/perflab http $url --concurrency 64 --duration ${DUR}s --json --out $work/runs"
  [hey]="hey -c 64 -z ${DUR}s $url"
  [oha]="oha --no-tui --output-format json -c 64 -z ${DUR}s $url"
)
declare -A OPEN=(
  [perflab]="$work/perflab http $url --rate ${RATE}/s --duration ${DUR}s --json --out $work/runs"
  [vegeta]="sh -c 'echo GET $url | vegeta attack -rate ${RATE} -duration ${DUR}s | vegeta report -type=json'"
  [oha]="oha --no-tui --output-format json -q ${RATE} -z ${DUR}s $url"
  # oha timing each request from its intended start too, as perflab does
  [oha_lc]="oha --no-tui --output-format json --latency-correction -q ${RATE} -z ${DUR}s $url"
)

# run_case NAME CMD: one run; appends "rps us p50 p99" to $work/res.NAME
run_case() { local name=$1 cmd=$2 cpu n a b
  read -r cpu _ < <(eval "timed $cmd")
  read -r n a b < <("parse_$name")
  echo "$(echo "$n / $DUR" | bc -l) $(echo "$cpu * 1000000 / $n" | bc -l) $a $b" >> "$work/res.$name"
}
# table NAME...: one row per tool, medians over its runs
table() { local name col
  for name in "$@"; do [ -s "$work/res.$name" ] || continue
    col() { awk -v c="$1" '{print $c}' "$work/res.$name" | median; }
    printf '| %s | %.0f | %.1f | %s | %s |\n' "$name" "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)"
  done
}

have() { command -v "$1" >/dev/null 2>&1; }
echo "date: $(date -u +%F); machine: $(nproc) cores; generator on core $GEN_CORE, nginx on core $SRV_CORE; medians of $REPS, tools interleaved in each repetition"
# Repetition-major: every tool runs once per repetition, so a slow spell of
# the machine touches all of them alike.
closed=(); for t in wrk perflab hey oha; do have "${CLOSED[$t]%% *}" && closed+=("$t"); done
open_=(perflab); for t in vegeta oha oha_lc; do have "${t%_lc}" && open_+=("$t"); done
if [[ $PARTS == *a* ]]; then
for _ in $(seq "$REPS"); do
  for t in "${closed[@]}"; do run_case "$t" "${CLOSED[$t]}"; done
done
echo; echo "(a) closed loop, 64 connections, ${DUR} s"; echo
echo "| tool | req/s | CPU µs/req | p50 ms | p99 ms |"; echo "|---|---:|---:|---:|---:|"
table "${closed[@]}"
rm -f "$work"/res.*
fi
if [[ $PARTS == *b* ]]; then
for _ in $(seq "$REPS"); do
  for t in "${open_[@]}"; do run_case "$t" "${OPEN[$t]}"; done
done
echo; echo "(b) open loop at ${RATE} req/s, ${DUR} s"; echo
echo "| tool | achieved req/s | CPU µs/req | p50 ms | p99 ms |"; echo "|---|---:|---:|---:|---:|"
table "${open_[@]}"
fi
[[ $PARTS == *c* ]] || exit 0
echo; echo "(c) perflab peak RSS at ${RSS_RATE} req/s (open model)"; echo
echo "| duration | peak RSS MiB | anon MiB | file MiB | max VUs |"; echo "|---|---:|---:|---:|---:|"
# bench/peakmem.py reads the process's own VmHWM; anon is its heap, stacks
# and SQLite's cache, file the binary's pages the kernel mapped. The
# durations interleave, so that a busy spell of the machine touches both.
for _ in $(seq "$REPS"); do for d in "$DUR" "$LONG"; do
  read -r _ _ hwm anon filep < <(bench/peakmem.py "$work/out" taskset -c "$GEN_CORE" "$work/perflab" http "$url" \
    --rate "${RSS_RATE}/s" --duration "${d}s" --json --out "$work/runs")
  vus=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["workloads"][0]["max_vus_used"])' "$work/out")
  echo "$hwm $anon $filep $vus" >> "$work/rss.$d"
done; done
for d in "$DUR" "$LONG"; do
  col() { awk -v c="$1" '{print $c}' "$work/rss.$d" | median; }
  printf '| %s s | %.1f | %.1f | %.1f | %s |\n' "$d" "$(echo "$(col 1) / 1024" | bc -l)" "$(echo "$(col 2) / 1024" | bc -l)" \
    "$(echo "$(col 3) / 1024" | bc -l)" "$(col 4)"
done
