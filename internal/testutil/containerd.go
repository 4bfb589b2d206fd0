//go:build linux

package testutil

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Containerd is a containerd a test started, of its own: ctr reaches it
// at Socket.
type Containerd struct {
	Socket string
	ctr    string
}

// containerdConfig keeps everything of the daemon in dir, with the CRI
// plugin off: no kubelet talks to it, and it touches nothing of the host's.
const containerdConfig = `version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %[3]q
[ttrpc]
  address = "%[3]s.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
`

// StartContainerd starts a containerd whose root, state and socket are
// in a temporary directory, and stops it when the test ends. It needs
// root and Debian's containerd (ctr, runc); without them the test is
// skipped (fails, see Unavailable).
func StartContainerd(t testing.TB) Containerd {
	t.Helper()
	bin, ctr := RequireBinary(t, "containerd"), RequireBinary(t, "ctr")
	if os.Geteuid() != 0 {
		Unavailable(t, "containerd needs root")
	}
	dir, err := os.MkdirTemp("", "ctd") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	c := Containerd{Socket: filepath.Join(dir, "containerd.sock"), ctr: ctr}
	cfg := filepath.Join(dir, "config.toml")
	text := fmt.Sprintf(containerdConfig, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.Socket)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start containerd: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(serverStopTimeout):
			cmd.Process.Kill()
			<-done
		}
		log.Close()
		os.RemoveAll(dir)
	})
	for deadline := time.Now().Add(serverStartTimeout); ; time.Sleep(100 * time.Millisecond) {
		if _, err := c.Ctr(context.Background(), "version"); err == nil {
			return c
		}
		select {
		case <-done:
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("containerd exited:\n%s", out)
		default:
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("containerd did not answer within %v:\n%s", serverStartTimeout, out)
		}
	}
}

// Ctr runs ctr against c and returns its output (stdout and stderr).
func (c Containerd) Ctr(ctx context.Context, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, c.ctr, append([]string{"--address", c.Socket}, args...)...).CombinedOutput()
}
