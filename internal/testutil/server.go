package testutil

import (
	"errors"
	"fmt"
	"go/build"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var errAddrInUse = errors.New("address already in use")

const (
	serverStartTimeout = 30 * time.Second
	serverStopTimeout  = 10 * time.Second
	serverBindAttempts = 3
)

// server says how to start one kind of server and see that it is ready.
type server struct {
	name  string
	bin   string
	args  func(dir string, port int) ([]string, error)
	path  string                             // GET'ed until ready says so
	ready func(status int, body string) bool // is the server ready?
	// up, when set, replaces path and ready: is the process pid, run in
	// dir, ready on port?
	up func(dir string, pid, port int) bool
	// logs are files in dir that the server writes besides its output,
	// shown with it in failure messages.
	logs []string
}

// startServer starts s at a free port, trying another port when the one
// picked was taken meanwhile, and registers its stop with t.Cleanup.
func startServer(t testing.TB, s server) string {
	t.Helper()
	return startServerProcess(t, s).URL
}

// Started is a server a test started: its base URL, the process id and
// its temporary directory (its configuration, data and logs).
type Started struct {
	URL string
	PID int
	Dir string
}

// startServerProcess is startServer, also telling the process and its
// directory.
func startServerProcess(t testing.TB, s server) Started {
	t.Helper()
	skipShort(t, s.name)
	var err error
	for range serverBindAttempts {
		dir := t.TempDir()
		port := FreePort(t)
		var p *process
		p, err = startProcess(s, dir, port)
		if err == nil {
			t.Cleanup(func() {
				// The server is not perflab's: one slow to honour SIGTERM
				// (versitygw once took over 10 s on a loaded machine) is
				// killed and said, not a failure of the test that used it.
				if err := p.stop(); err != nil {
					t.Logf("%s: %v", s.name, err)
				}
			})
			return Started{URL: "http://127.0.0.1:" + strconv.Itoa(port), PID: p.cmd.Process.Pid, Dir: dir}
		}
		if !errors.Is(err, errAddrInUse) {
			break
		}
	}
	t.Fatalf("cannot start %s: %v", s.name, err)
	return Started{}
}

// process is one server process we started.
type process struct {
	name   string
	cmd    *exec.Cmd
	logs   []string      // its output first
	exited chan struct{} // closed when it has exited
}

func startProcess(s server, dir string, port int) (*process, error) {
	args, err := s.args(dir, port)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "output.log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("cannot create %s output file: %w", s.name, err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = out, out, dir
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run %s: %w", s.bin, err)
	}
	p := &process{name: s.name, cmd: cmd, logs: []string{logPath}, exited: make(chan struct{})}
	for _, l := range s.logs {
		p.logs = append(p.logs, filepath.Join(dir, l))
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitReady(s, dir, port); err != nil {
		_ = p.stop()
		return nil, err
	}
	return p, nil
}

// waitReady polls until s.up, or s.ready on a GET of s.path, says so, the
// process exits, or serverStartTimeout passes.
func (p *process) waitReady(s server, dir string, port int) error {
	url := "http://127.0.0.1:" + strconv.Itoa(port) + s.path
	client := &http.Client{Timeout: time.Second}
	up := func() bool {
		if s.up != nil {
			return s.up(dir, p.cmd.Process.Pid, port)
		}
		resp, err := client.Get(url)
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		resp.Body.Close()
		return s.ready(resp.StatusCode, string(body))
	}
	deadline := time.Now().Add(serverStartTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			logs := p.output()
			if strings.Contains(strings.ToLower(logs), "address already in use") {
				return fmt.Errorf("port %d: %w", port, errAddrInUse)
			}
			return fmt.Errorf("%s exited: %s", s.name, logs)
		default:
		}
		if up() {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s was not ready at %s within %v: %s", s.name, url, serverStartTimeout, p.output())
}

// stop sends SIGTERM to the process we started and kills it if it has not
// exited in time.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(serverStopTimeout):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return fmt.Errorf("%s (pid %d) ignored SIGTERM for %v and was killed", p.name, p.cmd.Process.Pid, serverStopTimeout)
}

// output returns the last few KiB of the process's output and logs, for
// failure messages.
func (p *process) output() string {
	var b []byte
	for _, l := range p.logs {
		text, _ := os.ReadFile(l)
		b = append(append(b, text...), '\n')
	}
	if len(b) > 4<<10 {
		b = b[len(b)-4<<10:]
	}
	return strings.TrimSpace(string(b))
}

// goBinary finds a go-installed server binary in PATH, GOBIN or
// GOPATH/bin (where scripts/install-deps.sh puts them); when it is missing
// the test is skipped (or fails, see Unavailable) with install as the hint.
func goBinary(t testing.TB, name, install string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	dirs := []string{os.Getenv("GOBIN")}
	for _, gp := range filepath.SplitList(build.Default.GOPATH) {
		dirs = append(dirs, filepath.Join(gp, "bin"))
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	Unavailable(t, "%s is not installed (scripts/install-deps.sh, or %s)", name, install)
	return ""
}
