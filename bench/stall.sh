#!/usr/bin/env bash
# Looks for generator stalls: RUNS runs of `perflab http URL --rate RATE/s
# --duration DUR s` pinned to core GEN_CORE against nginx on core SRV_CORE,
# with the machine sampled beside each run every 100 ms (/proc/stat: each
# core's busy, iowait and steal; procs_running) by bench/machine.py. For
# every run it prints the arrivals dropped and the scheduler lag's max, and
# for every interval that dropped arrivals, what the machine did in it:
# the generator core's busy share, steal, iowait, the runnable tasks, and
# perflab's own CPU in it (from /proc/PID/stat, sampled alike).
#
#   bench/stall.sh                      # RUNS=20 RATE=10000 DUR=30
#   RUNS=5 TRACE=1 bench/stall.sh       # with PERFLAB_TRACE files kept in $OUT
set -euo pipefail
RUNS=${RUNS:-20}; RATE=${RATE:-10000}; DUR=${DUR:-30}; TRACE=${TRACE:-0}
GEN_CORE=${GEN_CORE:-0}; SRV_CORE=${SRV_CORE:-1}
OUT=${OUT:-$(mktemp -d)}; mkdir -p "$OUT"
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin"
work=$(mktemp -d); trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null; rm -rf "$work"' EXIT
if [ -n "${PERFLAB:-}" ]; then cp "$PERFLAB" "$work/perflab"
else go build -trimpath -ldflags '-s -w' -o "$work/perflab" ./cmd/perflab
fi
. bench/nginx-target.sh
start_nginx_target
echo "date: $(date -u +%FT%TZ); $RUNS runs of $RATE/s for ${DUR}s; perflab on core $GEN_CORE, nginx on core $SRV_CORE; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$RUNS"); do
  runs="$work/runs$i"; mkdir -p "$runs"
  env_trace=()
  [ "$TRACE" = 1 ] && env_trace=(PERFLAB_TRACE="$OUT/trace$i.out")
  env "${env_trace[@]}" taskset -c "$GEN_CORE" "$work/perflab" http "$url" --rate "${RATE}/s" --duration "${DUR}s" \
    --json --out "$runs" >"$work/out$i" 2>"$work/err$i" &
  pid=$!
  bench/machine.py "$pid" "$GEN_CORE" >"$OUT/machine$i.tsv" &
  mon=$!
  wait "$pid" || true
  wait "$mon" || true
  db=$(ls -d "$runs"/*/results.db)
  cp "$db" "$OUT/results$i.db"
  python3 bench/stall_report.py "$i" "$work/out$i" "$db" "$OUT/machine$i.tsv"
done
echo "kept in $OUT: results*.db, machine*.tsv$( [ "$TRACE" = 1 ] && echo ', trace*.out')"
