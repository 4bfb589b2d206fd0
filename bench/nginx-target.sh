# Sourced by the bench scripts: starts nginx answering `return 200 "ok"`
# (keep-alive) on 127.0.0.1, pinned to core $SRV_CORE, with its files in
# $work, and sets $url. The caller's EXIT trap kills it ($work/nginx.pid).
start_nginx_target() {
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  keepalive_requests 100000000;
  server { listen 127.0.0.1:$port; location / { return 200 "ok"; } }
}
CONF
  mkdir -p "$work/tmp"
  taskset -c "$SRV_CORE" nginx -c "$work/nginx.conf" -g 'daemon off;' &
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
  url="http://127.0.0.1:$port/"
}
