#!/usr/bin/env bash
# The generator's peak memory in every example plan this machine can run:
# `perflab run examples/NAME.yaml` (and `perflab demo`), each against the
# local servers the plan starts, with the perflab process's own peak RSS
# read from /proc every 50 ms (its VmHWM: the components it starts are
# other processes and are not counted). A plan whose servers are not
# installed is skipped, with what it needs.
#
#   bench/plan-memory.sh                          # every plan (about 20 minutes)
#   PLANS="quickstart llm-mock" bench/plan-memory.sh
#   PERFLAB=/path/to/perflab bench/plan-memory.sh # another build (e.g. an older commit's)
#   bench/plan-memory.sh http                     # the open model at 10,000/s (about 4 minutes)
#
# Prints a Markdown table: the run's wall time, its peak RSS, and at the
# moment each was highest the anonymous memory (Go heap, stacks, SQLite's
# page cache) and the file-backed pages (the perflab binary's code and data
# as the kernel mapped them).
#
# The http mode runs `perflab http URL --rate RATE/s` (RATE=10000) for
# SHORT (15) and LONG (60) seconds, REPS (3) times each, interleaved, on
# core GEN_CORE (0), against nginx (`return 200 "ok"`) on core SRV_CORE (1),
# or perflab's built-in target where nginx is not installed; it prints the
# medians and the growth from SHORT to LONG, and the most VUs the runs used
# (a stall at the start, as on a busy machine, starts up to 1000; VUS_MAX=N
# caps them). MEMPROFILE=DIR keeps each run's heap profile and memory
# classes (PERFLAB_MEMPROFILE) in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:$HOME/go/bin:$HOME/.cache/perflab/litellm/bin"
work=$(mktemp -d)
cleanup() { local f
  for f in "$work/nginx.pid" "$work/target.pid"; do [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
  rm -rf "$work"; }
trap cleanup EXIT
if [ -n "${PERFLAB:-}" ]; then cp "$PERFLAB" "$work/perflab"
else go build -trimpath -ldflags '-s -w' -o "$work/perflab" ./cmd/perflab # as make build
fi

# What each plan needs besides perflab; k8s-tempo needs a cluster.
declare -A NEEDS=(
  [attach-nginx]="nginx" [gateway-litellm]="litellm" [prometheus-source]="prometheus prometheus-process-exporter"
  [s3-get-sizes]="versitygw" [traces-jaeger]="all-in-one" [vm-vs-prometheus]="victoria-metrics prometheus"
)
declare -A CANNOT=(
  [k8s-tempo]="a Kubernetes cluster running Tempo, its Prometheus and an S3 store (perflab k8s run)"
)

# start_nginx PORT [PREFIX...]: an nginx answering 200 "ok" on 127.0.0.1:PORT,
# its master's pid in $work/nginx.pid (attach-nginx attaches to one on port 80).
start_nginx() { local port=$1; shift
  mkdir -p "$work/nginx-tmp"
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off; keepalive_requests 100000000;
  client_body_temp_path $work/nginx-tmp; proxy_temp_path $work/nginx-tmp; fastcgi_temp_path $work/nginx-tmp;
  uwsgi_temp_path $work/nginx-tmp; scgi_temp_path $work/nginx-tmp;
  server { listen 127.0.0.1:$port; location / { return 200 "ok"; } }
}
CONF
  "$@" nginx -c "$work/nginx.conf" && sleep 0.5
}

row() { local name=$1; shift; local rc secs hwm anon filep result=ok
  read -r rc secs hwm anon filep < <(bench/peakmem.py "$work/$name.log" "$@")
  if [ "$rc" != 0 ]; then
    result="exit $rc: $(grep -m1 -i 'perflab:.*\(cannot\|fail\)' "$work/$name.log.err" | cut -c1-80 || true)"
  fi
  printf '| %s | %s | %.1f | %.1f | %.1f | %s |\n' "$name" "$secs" "$(echo "$hwm/1024" | bc -l)" \
    "$(echo "$anon/1024" | bc -l)" "$(echo "$filep/1024" | bc -l)" "$result"
}

mib() { echo "$1 / 1024" | bc -l; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else print a[int((NR+1)/2)]}'; }

# http_mode: the open model's peak RSS at SHORT and LONG seconds.
http_mode() { local rate=${RATE:-10000} short=${SHORT:-15} long=${LONG:-60} reps=${REPS:-3}
  local gen=${GEN_CORE:-0} srv=${SRV_CORE:-1} port target d i
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  if command -v nginx >/dev/null; then target="nginx 1 worker on core $srv"
    start_nginx "$port" taskset -c "$srv"
  else target="perflab target http on core $srv"
    taskset -c "$srv" "$work/perflab" target http --addr "127.0.0.1:$port" --size 2B >/dev/null 2>&1 &
    echo $! > "$work/target.pid"
  fi
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
  echo "date: $(date -u +%F); machine: $(nproc) cores; perflab ${PERFLAB:-$(git rev-parse --short HEAD)} on core $gen; $target"
  echo "perflab http http://127.0.0.1:$port/ --rate ${rate}/s, medians of $reps"
  echo
  [ -n "${MEMPROFILE:-}" ] && mkdir -p "$MEMPROFILE"
  for i in $(seq "$reps"); do for d in "$short" "$long"; do
    PERFLAB_MEMPROFILE=${MEMPROFILE:+$MEMPROFILE/heap-${d}s-$i.pprof} bench/peakmem.py "$work/out" \
      taskset -c "$gen" "$work/perflab" http "http://127.0.0.1:$port/" --rate "${rate}/s" --duration "${d}s" \
      ${VUS_MAX:+--vus-max "$VUS_MAX"} --json --out "$work/runs" | tr '\n' ' ' >> "$work/rss.$d"
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["workloads"][0]["max_vus_used"])' "$work/out" >> "$work/rss.$d" \
      || echo n/a >> "$work/rss.$d"
    rm -rf "$work/runs"
  done; done
  echo "| duration | peak RSS MiB | anon MiB | file MiB | max VUs | runs (MiB) |"; echo "|---|---:|---:|---:|---:|---|"
  for d in "$short" "$long"; do
    col() { awk -v c="$1" '{print $c}' "$work/rss.$d" | median; }
    printf '| %s s | %.1f | %.1f | %.1f | %s | %s |\n' "$d" "$(mib "$(col 3)")" "$(mib "$(col 4)")" "$(mib "$(col 5)")" \
      "$(col 6)" "$(awk '{printf "%s%.1f", (NR>1 ? ", " : ""), $3/1024}' "$work/rss.$d")"
  done
  echo
  printf 'growth %s s → %s s: %+.1f %%\n' "$short" "$long" \
    "$(echo "($(awk '{print $3}' "$work/rss.$long" | median) / $(awk '{print $3}' "$work/rss.$short" | median) - 1) * 100" | bc -l)"
}
if [ "${1:-}" = http ]; then http_mode; exit 0; fi

plans=${PLANS:-"$(cd examples && ls *.yaml | sed 's/\.yaml$//') demo"}
echo "date: $(date -u +%F); machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; perflab ${PERFLAB:-$(git rev-parse --short HEAD)}"
echo
echo "| plan | wall s | peak RSS MiB | anon MiB | file MiB | result |"
echo "|---|---:|---:|---:|---:|---|"
skipped=()
for p in $plans; do
  if [ -n "${CANNOT[$p]:-}" ]; then skipped+=("$p: needs ${CANNOT[$p]}"); continue; fi
  missing=""; for b in ${NEEDS[$p]:-}; do command -v "$b" >/dev/null || missing+=" $b"; done
  if [ -n "$missing" ]; then skipped+=("$p: needs$missing"); continue; fi
  case $p in
    demo) row demo "$work/perflab" demo --out "$work/runs" ;;
    attach-nginx) # attached by its pid file: other nginx masters may run here
      if ! start_nginx 80; then skipped+=("$p: cannot start nginx on 127.0.0.1:80"); continue; fi
      sed "s|attach: {process: .*}|attach: {pid_file: $work/nginx.pid}|" "examples/$p.yaml" > "$work/$p.yaml"
      row "$p" "$work/perflab" run "$work/$p.yaml" --out "$work/runs"
      kill "$(cat "$work/nginx.pid")"; rm -f "$work/nginx.pid" ;;
    gateway-litellm)
      export LITELLM_MASTER_KEY=sk-$(openssl rand -hex 16)
      row "$p" "$work/perflab" run "examples/$p.yaml" --out "$work/runs"
      unset LITELLM_MASTER_KEY ;;
    *) row "$p" "$work/perflab" run "examples/$p.yaml" --out "$work/runs" ;;
  esac
  rm -rf "$work/runs"
done
for s in "${skipped[@]}"; do echo "skipped $s"; done
