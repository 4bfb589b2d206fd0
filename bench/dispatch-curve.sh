#!/usr/bin/env bash
# The open model's dispatch at RATE req/s against nginx: for each
# --dispatch-quantum in QUANTA, perflab's CPU per request, scheduler lag
# p50 and latency p50/p99, REPS times, builds and quanta interleaved in
# each repetition; medians at the end. nginx on core 1, perflab on core 0.
#
#   bench/dispatch-curve.sh                                  # this tree's build
#   BUILDS="/tmp/old-perflab" bench/dispatch-curve.sh        # and another build beside it
#   RATE=20000 DUR=10 REPS=3 QUANTA="1ms 500us 250us 100us" bench/dispatch-curve.sh
set -euo pipefail
RATE=${RATE:-20000}; DUR=${DUR:-10}; REPS=${REPS:-3}; QUANTA=${QUANTA:-1ms 500us 250us 100us}
GEN_CORE=${GEN_CORE:-0}; SRV_CORE=${SRV_CORE:-1}
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin"
work=$(mktemp -d); trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null; rm -rf "$work"' EXIT
go build -trimpath -ldflags '-s -w' -o "$work/perflab" ./cmd/perflab
builds="$work/perflab ${BUILDS:-}"
. bench/nginx-target.sh
start_nginx_target

for rep in $(seq "$REPS"); do
  for q in $QUANTA; do
    for b in $builds; do
      /usr/bin/time -f '%U %S' -o "$work/time" taskset -c "$GEN_CORE" "$b" http "$url" --rate "${RATE}/s" \
        --duration "${DUR}s" --dispatch-quantum "$q" --json --out "$work/runs" >"$work/out" 2>"$work/err" || true
      python3 - "$work/out" "$work/time" "$b" "$q" >>"$work/rows" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); w = s["workloads"][0]; op = w["operations"][0]
u, k = map(float, open(sys.argv[2]).read().split()[-2:])
print(sys.argv[3], sys.argv[4], (u + k) * 1e6 / w["requests_total"], w["scheduler_lag_ms"]["p50"],
      op["latency_ms"]["p50"], op["latency_ms"]["p99"])
PY
    done
  done
done

echo "date: $(date -u +%F); $RATE req/s for ${DUR}s; generator on core $GEN_CORE, nginx on core $SRV_CORE; medians of $REPS"
echo
echo "| build | quantum | CPU µs/req | lag p50 ms | latency p50 ms | p99 ms |"
echo "|---|---|---:|---:|---:|---:|"
python3 - "$work/rows" "$work/perflab" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    b, q, *v = line.split()
    rows.setdefault((b, q), []).append([float(x) for x in v])
for (b, q), vs in rows.items():
    med = [statistics.median(c) for c in zip(*vs)]
    name = "this tree" if b == sys.argv[2] else b
    print(f"| {name} | {q} | {med[0]:.1f} | {med[1]:.3f} | {med[2]:.3f} | {med[3]:.3f} |")
PY
