#!/usr/bin/env bash
# Installs what perflab's tests need on a fresh Debian machine: the real
# servers the drivers are tested against (nginx for http; VictoriaMetrics
# and Prometheus (Debian's 2.42, and 3.x built as prometheus3) for remote
# write and PromQL, and Prometheus with Debian's
# process and nginx exporters for the Prometheus source; Jaeger for OTLP traces;
# versitygw for S3; LiteLLM's proxy as an LLM gateway), Chromium to
# open the HTML report headless; skopeo and containerd for the image of
# perflab k8s image; and containerd, runc, the CNI plugins and etcd for the
# real Kubernetes node of make test-k8s (whose Kubernetes binaries
# scripts/k8s-build.sh builds).
# Safe to run again.
set -euo pipefail

need=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v victoria-metrics >/dev/null 2>&1 || need+=(victoria-metrics)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)  # promtool too
# the Prometheus source's tests: Prometheus scrapes these exporters
command -v prometheus-process-exporter >/dev/null 2>&1 || need+=(prometheus-process-exporter)
command -v prometheus-nginx-exporter >/dev/null 2>&1 || need+=(prometheus-nginx-exporter)
# headless Chromium opens report.html in the HTML report's test
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# the real Kubernetes node of make test-k8s (internal/testutil/k8scluster):
# containerd (and its ctr), runc, the CNI loopback plugin, etcd. None of
# them starts a service on install here (no systemd); the tests start and
# stop their own.
command -v containerd >/dev/null 2>&1 || need+=(containerd)
command -v runc >/dev/null 2>&1 || [ -x /usr/sbin/runc ] || need+=(runc)
[ -x /usr/lib/cni/loopback ] || need+=(containernetworking-plugins)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
# perflab k8s image's archive: skopeo reads it
command -v skopeo >/dev/null 2>&1 || need+=(skopeo)
# the sqlite3 CLI and curl: docs/format/results.md's queries and
# docs/export.md's read-back run in TestDocsCommandsRun
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
command -v curl >/dev/null 2>&1 || need+=(curl)

if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Jaeger all-in-one (the otlp driver's tests) is not in Debian: go install
# it into GOPATH/bin, where internal/testutil looks for it (~1 min).
gobin="$(go env GOBIN)"
[ -n "$gobin" ] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
if ! command -v all-in-one >/dev/null 2>&1 && [ ! -x "$gobin/all-in-one" ]; then
  echo "install-deps: installing jaeger all-in-one v1.42.0 into $gobin"
  (cd / && GOBIN="$gobin" go install github.com/jaegertracing/jaeger/cmd/all-in-one@v1.42.0)
fi
# versitygw (the s3 driver's tests) is not in Debian either: go install the
# version that resolves from the module proxy into the same place (~2 min).
if ! command -v versitygw >/dev/null 2>&1 && [ ! -x "$gobin/versitygw" ]; then
  echo "install-deps: installing versitygw v1.8.0 into $gobin"
  (cd / && GOBIN="$gobin" go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)
fi
# Prometheus 3 (the remote_write driver's 2.0 and native histogram tests):
# Debian has 2.42 only. Built from the module proxy's
# github.com/prometheus/prometheus v0.316.0 (Prometheus 3.16; ~6 min on 2
# cores, a 147 MB binary without the web UI's assets, which need npm) and
# installed beside Debian's as prometheus3, so neither shadows the other.
if ! command -v prometheus3 >/dev/null 2>&1 && [ ! -x "$gobin/prometheus3" ]; then
  echo "install-deps: building prometheus v0.316.0 (Prometheus 3) into $gobin/prometheus3"
  p3tmp="$(mktemp -d)"
  (cd / && GOBIN="$p3tmp" go install github.com/prometheus/prometheus/cmd/prometheus@v0.316.0)
  mv "$p3tmp/prometheus" "$gobin/prometheus3"
  rmdir "$p3tmp"
fi
# LiteLLM's proxy (an LLM gateway in Python: the gateway-overhead test
# through it) from PyPI, with every package pinned, into a virtualenv
# where internal/testutil looks for it (~3 min, ~750 MB).
here="$(cd "$(dirname "$0")" && pwd)"
litellm_venv="${PERFLAB_LITELLM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/perflab/litellm}"
if ! command -v litellm >/dev/null 2>&1 && [ ! -x "$litellm_venv/bin/litellm" ]; then
  if ! python3 -m venv --help >/dev/null 2>&1; then
    echo "install-deps: installing python3-venv"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null
  fi
  echo "install-deps: installing LiteLLM's proxy into $litellm_venv"
  python3 -m venv "$litellm_venv"
  "$litellm_venv/bin/pip" install -q --disable-pip-version-check -r "$here/litellm-requirements.txt"
fi
echo "install-deps: ok"
