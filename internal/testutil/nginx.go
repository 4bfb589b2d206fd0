package testutil

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// DefaultNginxLocations answers every request with 200 "ok\n".
const DefaultNginxLocations = `location / { return 200 "ok\n"; }`

const (
	nginxStartTimeout = 10 * time.Second
	nginxStopTimeout  = 10 * time.Second
	nginxBindAttempts = 3
)

var errAddrInUse = errors.New("address already in use")

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
	bin := RequireBinary(t, "nginx")
	var err error
	for range nginxBindAttempts {
		dir := t.TempDir()
		port := FreePort(t)
		var n *nginx
		n, err = startNginx(bin, dir, port, httpExtra, locations)
		if err == nil {
			t.Cleanup(func() {
				if err := n.stop(); err != nil {
					t.Errorf("cannot stop nginx: %v", err)
				}
			})
			return "http://127.0.0.1:" + strconv.Itoa(port)
		}
		if !errors.Is(err, errAddrInUse) { // a port taken meanwhile is worth another try
			break
		}
	}
	t.Fatalf("cannot start nginx: %v", err)
	return ""
}

// nginx is one running nginx master process, started by us.
type nginx struct {
	cmd    *exec.Cmd
	dir    string
	exited chan struct{} // closed when the master has exited
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

func startNginx(bin, dir string, port int, httpExtra, locations string) (*nginx, error) {
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConfig(dir, port, httpExtra, locations)), 0o644); err != nil {
		return nil, fmt.Errorf("cannot write nginx config: %w", err)
	}
	out, err := os.Create(filepath.Join(dir, "output.log"))
	if err != nil {
		return nil, fmt.Errorf("cannot create nginx output file: %w", err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"),
		"-c", conf, "-g", "daemon off;")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run %s: %w", bin, err)
	}
	n := &nginx{cmd: cmd, dir: dir, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(n.exited)
	}()
	if err := n.waitReady(port); err != nil {
		_ = n.stop()
		return nil, err
	}
	return n, nil
}

// waitReady polls until nginx has written its pid file (it does so after
// binding its listeners, so the port is ours) and the port accepts
// connections, or nginx exits, or nginxStartTimeout passes.
func (n *nginx) waitReady(port int) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	pid := strconv.Itoa(n.cmd.Process.Pid)
	deadline := time.Now().Add(nginxStartTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-n.exited:
			logs := n.logs()
			if strings.Contains(logs, "Address already in use") {
				return fmt.Errorf("port %d: %w", port, errAddrInUse)
			}
			return fmt.Errorf("nginx exited: %s", logs)
		default:
		}
		b, _ := os.ReadFile(filepath.Join(n.dir, "nginx.pid"))
		if strings.TrimSpace(string(b)) == pid {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("nginx did not answer on %s within %v: %s", addr, nginxStartTimeout, n.logs())
}

// stop asks the master we started for a fast shutdown (SIGTERM; it stops
// its workers) and kills it if it has not exited in time.
func (n *nginx) stop() error {
	select {
	case <-n.exited:
		return nil
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
		return nil
	case <-time.After(nginxStopTimeout):
	}
	_ = n.cmd.Process.Kill()
	<-n.exited
	return fmt.Errorf("nginx (pid %d) ignored SIGTERM for %v and was killed", n.cmd.Process.Pid, nginxStopTimeout)
}

// logs returns nginx's output and error log, for failure messages.
func (n *nginx) logs() string {
	out, _ := os.ReadFile(filepath.Join(n.dir, "output.log"))
	errLog, _ := os.ReadFile(filepath.Join(n.dir, "error.log"))
	return strings.TrimSpace(string(out) + "\n" + string(errLog))
}
