package testutil

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DefaultNginxLocations answers every request with 200 "ok\n".
const DefaultNginxLocations = `location / { return 200 "ok\n"; }`

// StartNginx starts nginx on 127.0.0.1 at a free port with locations as the
// body of its only server block (DefaultNginxLocations when empty), waits
// until it answers, and stops it when the test ends. It returns the base
// URL, "http://127.0.0.1:PORT". Relative paths in locations (root, alias)
// resolve against a temporary prefix directory. keepalive_requests is
// raised so that keep-alive tests are not cut at nginx's default 1000.
func StartNginx(t testing.TB, locations string) (baseURL string) {
	t.Helper()
	if locations == "" {
		locations = DefaultNginxLocations
	}
	return startNginxTest(t, "", locations)
}

// startNginxTest starts nginx for a test with httpExtra in its http block
// and locations in its server block, retrying on a port taken meanwhile,
// and stops it when the test ends.
func startNginxTest(t testing.TB, httpExtra, locations string) (baseURL string) {
	t.Helper()
	return startNginxProcess(t, httpExtra, locations).URL
}

// startNginxProcess is startNginxTest, also telling the master's pid and
// the prefix directory.
func startNginxProcess(t testing.TB, httpExtra, locations string) Started {
	t.Helper()
	return startServerProcess(t, server{
		name: "nginx",
		bin:  RequireBinary(t, "nginx"),
		args: func(dir string, port int) ([]string, error) {
			return writeNginxConfig(dir, port, httpExtra, locations)
		},
		up:   nginxUp,
		logs: []string{"error.log"},
	})
}

// nginxConfig is the configuration of an nginx in dir listening on port,
// with httpExtra in its http block and locations in its server block.
func nginxConfig(dir string, port int, httpExtra, locations string) string {
	user := ""
	if os.Geteuid() == 0 {
		// Workers would otherwise run as nobody and could not use the
		// temporary directory, which only root may enter.
		user = "user root;"
	}
	return fmt.Sprintf(`# written by perflab testutil
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
%[2]s
events { worker_connections 1024; }
http {
    access_log off;
    default_type text/plain;
    keepalive_requests 1000000;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    %[5]s
    server {
        listen 127.0.0.1:%[3]d;
        %[4]s
    }
}
`, dir, user, port, locations, httpExtra)
}

// writeNginxConfig writes the configuration of an nginx in dir listening
// on port (see nginxConfig) and returns nginx's arguments to run it in the
// foreground.
func writeNginxConfig(dir string, port int, httpExtra, locations string) ([]string, error) {
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConfig(dir, port, httpExtra, locations)), 0o644); err != nil {
		return nil, fmt.Errorf("cannot write nginx config: %w", err)
	}
	return []string{"-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf, "-g", "daemon off;"}, nil
}

// nginxUp reports whether the nginx master pid in dir has written its pid
// file (it does so after binding its listeners, so the port is ours) and
// the port accepts connections.
func nginxUp(dir string, pid, port int) bool {
	b, _ := os.ReadFile(filepath.Join(dir, "nginx.pid"))
	if strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		return false
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
