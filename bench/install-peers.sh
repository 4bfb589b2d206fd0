#!/usr/bin/env bash
# Installs the load generators bench/http-vs-peers.sh compares perflab with:
# wrk and hyperfine (Debian packages), oha (cargo install, into
# ~/.cargo/bin), vegeta v12.13.0 and hey (go install, into ~/go/bin). Each
# one already installed is left as it is.
#
#   bench/install-peers.sh
set -euo pipefail
export PATH="$PATH:$HOME/go/bin:$HOME/.cargo/bin"
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
need=()
for p in wrk hyperfine; do command -v "$p" >/dev/null || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
command -v oha >/dev/null || cargo install --locked oha
command -v vegeta >/dev/null || go install github.com/tsenart/vegeta/v12@v12.13.0
command -v hey >/dev/null || go install github.com/rakyll/hey@latest
for p in wrk hyperfine oha vegeta hey; do
  printf '%-10s %s\n' "$p" "$(command -v "$p" || echo 'not installed')"
done
