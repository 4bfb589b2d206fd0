package testutil

import (
	"errors"
	"fmt"
	"go/build"
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

// VersityGW credentials: the gateway's root account, in single-account mode.
const (
	VersityGWAccess = "perflabtestaccess"
	VersityGWSecret = "perflab-test-secret-key-0123456789"
)

const (
	versityStartTimeout = 15 * time.Second
	versityStopTimeout  = 10 * time.Second
	versityBindAttempts = 3
	versityHealthPath   = "/health"
)

// StartVersityGW starts versitygw, a real S3 gateway (SigV4, the S3 error
// codes), with its posix backend in a temporary directory, on 127.0.0.1 at
// a free port, with keep-alive on (versitygw closes every connection after
// one answer unless --keep-alive is given). It waits until GET /health answers and stops the gateway
// when the test ends. It returns the endpoint URL ("http://127.0.0.1:PORT")
// and the root account's keys. The gateway starts with no bucket.
//
// versitygw is looked up in PATH, $GOBIN and $(go env GOPATH)/bin, where
// scripts/install-deps.sh puts it; when missing the test is skipped (or
// fails, see Unavailable).
func StartVersityGW(t testing.TB) (endpoint, access, secret string) {
	t.Helper()
	bin := versityBinary(t)
	var err error
	for range versityBindAttempts {
		dir := t.TempDir()
		port := FreePort(t)
		var g *versityGW
		g, err = startVersityGW(bin, dir, port)
		if err == nil {
			t.Cleanup(func() {
				if err := g.stop(); err != nil {
					t.Errorf("cannot stop versitygw: %v", err)
				}
			})
			return "http://127.0.0.1:" + strconv.Itoa(port), VersityGWAccess, VersityGWSecret
		}
		if !errors.Is(err, errAddrInUse) {
			break
		}
	}
	t.Fatalf("cannot start versitygw: %v", err)
	return "", "", ""
}

// versityBinary finds versitygw in PATH, GOBIN or GOPATH/bin.
func versityBinary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("versitygw"); err == nil {
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
		p := filepath.Join(dir, "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	Unavailable(t, "versitygw is not installed (scripts/install-deps.sh, or go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)")
	return ""
}

// versityGW is one running gateway, started by us.
type versityGW struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

func startVersityGW(bin, dir string, port int) (*versityGW, error) {
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create versitygw root: %w", err)
	}
	logPath := filepath.Join(dir, "output.log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("cannot create versitygw output file: %w", err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(bin,
		"--port", "127.0.0.1:"+strconv.Itoa(port),
		"--access", VersityGWAccess, "--secret", VersityGWSecret,
		"--health", versityHealthPath, "--quiet",
		"--keep-alive", // off by default: every answer would close its connection
		"posix", "--sidecar", filepath.Join(dir, "meta"), root)
	cmd.Stdout, cmd.Stderr = out, out
	if err := os.Mkdir(filepath.Join(dir, "meta"), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create versitygw metadata directory: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot run %s: %w", bin, err)
	}
	g := &versityGW{cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(g.exited)
	}()
	if err := g.waitReady(port); err != nil {
		_ = g.stop()
		return nil, err
	}
	return g, nil
}

// waitReady polls GET /health until it answers 200, the gateway exits, or
// versityStartTimeout passes.
func (g *versityGW) waitReady(port int) error {
	url := "http://127.0.0.1:" + strconv.Itoa(port) + versityHealthPath
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(versityStartTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-g.exited:
			logs := g.logs()
			if strings.Contains(logs, "address already in use") {
				return fmt.Errorf("port %d: %w", port, errAddrInUse)
			}
			return fmt.Errorf("versitygw exited: %s", logs)
		default:
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("versitygw did not answer %s within %v: %s", url, versityStartTimeout, g.logs())
}

// stop sends SIGTERM to the gateway we started and kills it if it has not
// exited in time.
func (g *versityGW) stop() error {
	select {
	case <-g.exited:
		return nil
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
		return nil
	case <-time.After(versityStopTimeout):
	}
	_ = g.cmd.Process.Kill()
	<-g.exited
	return fmt.Errorf("versitygw (pid %d) ignored SIGTERM for %v and was killed", g.cmd.Process.Pid, versityStopTimeout)
}

func (g *versityGW) logs() string {
	b, _ := os.ReadFile(g.log)
	return strings.TrimSpace(string(b))
}
