#!/usr/bin/env bash
# What a gateway adds, measured by perflab's gateway-overhead method: the
# mock LLM provider (`perflab target llm`, 20 ms, 64 tokens) behind four
# gateways in one run, each with its own chat workload sent every other
# request straight to the provider and through its gateway:
#   perflab-0ms  the built-in gateway (net/http), no delay: a proxy hop
#   perflab-2ms  the built-in gateway adding a fixed 2 ms: the known answer
#   nginx        nginx as a keep-alive reverse proxy (the peer of the hop)
#   litellm      LiteLLM's proxy (Python), when installed
# Each gateway gets 50 requests/s (25 each way) for DUR; the script prints
# the median over REPS runs of each gateway's p50 and p99 overhead, its
# peak memory and its CPU P99. The machine's two cores are shared by all:
# compare the rows of one run with each other, not with another machine.
#
#   bench/gateway-overhead.sh           # REPS=3 DUR=30s
#
# Loopback only: every process listens on 127.0.0.1, ports 18150-18154.
set -euo pipefail
REPS=${REPS:-3}
DUR=${DUR:-30s}
cd "$(dirname "$0")/.."
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
go build -o "$work/perflab" ./cmd/perflab

nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "nginx is not installed (scripts/install-deps.sh)" >&2; exit 1; }
mkdir -p "$work/nginx/logs"
cat > "$work/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    upstream provider { server 127.0.0.1:18150; keepalive 64; }
    server {
        listen 127.0.0.1:18153;
        location / {
            proxy_pass http://provider;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }
    }
}
EOF

litellm=$(command -v litellm || true)
venv="${PERFLAB_LITELLM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/perflab/litellm}"
[ -n "$litellm" ] || [ ! -x "$venv/bin/litellm" ] || litellm="$venv/bin/litellm"
export PERFLAB_BENCH_LITELLM_KEY="sk-bench-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
cat > "$work/litellm.yaml" <<EOF
model_list:
  - model_name: perflab-mock
    litellm_params: {model: openai/perflab-mock, api_base: "http://127.0.0.1:18150/v1", api_key: upstream-needs-no-key}
litellm_settings: {telemetry: false}
EOF

gateway() { # name port delay
  cat <<EOF
  - name: $1
    group: gateway
    run:
      command: "{{perflab}}"
      args: [target, gateway, --addr, "127.0.0.1:$2", --upstream, "http://127.0.0.1:18150", --delay, $3]
      ready: {http: "http://127.0.0.1:$2/health"}
EOF
}
workload() { # gateway-component port
  cat <<EOF
      - name: $1
        driver: openai
        rate: 50/s
        params:
          url: http://127.0.0.1:18150
          model: perflab-mock
          api_key: \${PERFLAB_BENCH_LITELLM_KEY}
          prompts: ["How much does the gateway add?"]
          gateway: {url: "http://127.0.0.1:$2", component: $1}
EOF
}
{
  cat <<EOF
name: gateway-overhead-bench
components:
  - name: provider
    run:
      command: "{{perflab}}"
      args: [target, llm, --addr, "127.0.0.1:18150", --latency, 20ms, --tokens, "64"]
      ready: {http: "http://127.0.0.1:18150/health"}
EOF
  gateway perflab-0ms 18151 0s
  gateway perflab-2ms 18152 2ms
  cat <<EOF
  - name: nginx
    group: gateway
    run:
      command: $nginx
      args: [-p, "$work/nginx", -c, "$work/nginx/nginx.conf", -g, "daemon off;"]
      ready: {tcp: "127.0.0.1:18153"}
EOF
  if [ -n "$litellm" ]; then
    cat <<EOF
  - name: litellm
    group: gateway
    run:
      command: $litellm
      args: [--config, "$work/litellm.yaml", --host, 127.0.0.1, --port, "18154", --num_workers, "1"]
      env: {LITELLM_MASTER_KEY: "\${PERFLAB_BENCH_LITELLM_KEY}", LITELLM_LOCAL_MODEL_COST_MAP: "True", LITELLM_LOG: ERROR}
      ready: {http: "http://127.0.0.1:18154/health/liveliness", timeout: 90s}
EOF
  fi
  cat <<EOF
profiles:
  - name: load
    duration: $DUR
    warmup: 3s
    workloads:
EOF
  workload perflab-0ms 18151
  workload perflab-2ms 18152
  workload nginx 18153
  [ -z "$litellm" ] || workload litellm 18154
} > "$work/plan.yaml"
[ -n "$litellm" ] || echo "LiteLLM is not installed: its row is left out (scripts/install-deps.sh)" >&2

for i in $(seq "$REPS"); do
  "$work/perflab" run "$work/plan.yaml" --out "$work/runs" --json > "$work/run$i.json" 2>"$work/err$i" ||
    { cat "$work/err$i" >&2; exit 1; }
done
python3 - "$work" "$REPS" <<'PY'
import json, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
rows = {}
for i in range(1, reps + 1):
    s = json.load(open(f"{work}/run{i}.json"))
    for g in s["gateway_overhead"]:
        added = {a["quantile"]: a["value"] for a in g["added_latency_ms"]}
        rows.setdefault(g["component"], []).append((added[0.5], added[0.99], g["gateway_memory_bytes"]["max"] / 2**20,
                                                    g["gateway_cpu_cores"]["p99"]))
print(f"medians of {reps} runs, 25 requests/s each way per gateway, all in one run\n")
print("| gateway | overhead p50 | overhead p99 | peak memory | CPU P99 (cores) |")
print("|---|---:|---:|---:|---:|")
for name, v in rows.items():
    med = [statistics.median(x[k] for x in v) for k in range(4)]
    print(f"| {name} | {med[0]:.3f} ms | {med[1]:.2f} ms | {med[2]:.1f} MiB | {med[3]:.3f} |")
PY
