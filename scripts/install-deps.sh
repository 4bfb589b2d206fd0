#!/usr/bin/env bash
# Installs what perflab's tests need on a fresh Debian machine: the real
# servers the drivers are tested against. Safe to run again.
set -euo pipefail

need=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)

if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
echo "install-deps: ok"
