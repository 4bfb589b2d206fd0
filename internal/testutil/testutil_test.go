package testutil

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeTB records Skipf, Fatalf and Errorf instead of ending or failing
// the test.
type fakeTB struct {
	testing.TB
	skipped, fatal, failed string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Skipf(format string, a ...any)  { f.skipped = fmt.Sprintf(format, a...) }
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Errorf(format string, a ...any) { f.failed = fmt.Sprintf(format, a...) }

// A test that calls Alone fails in make test's shared line, where the
// Makefile did not find it, and runs anywhere else.
func TestAloneFailsInTheSharedLine(t *testing.T) {
	for _, line := range []string{"", "alone", "shared"} {
		t.Setenv(LineEnv, line)
		f := &fakeTB{TB: t}
		Alone(f)
		if failed := strings.Contains(f.fatal, "ran it in its shared line"); failed != (line == "shared") {
			t.Errorf("%s=%q: fatal %q", LineEnv, line, f.fatal)
		}
	}
}

func TestRequireBinary(t *testing.T) {
	if p := RequireBinary(t, "sh"); !strings.HasSuffix(p, "/sh") {
		t.Errorf("RequireBinary(sh) = %q", p)
	}
	t.Setenv(RequireServersEnv, "")
	f := &fakeTB{TB: t}
	RequireBinary(f, "perflab-no-such-server")
	if !strings.Contains(f.skipped, "perflab-no-such-server is not installed") || f.fatal != "" {
		t.Errorf("without %s: skipped %q, fatal %q; want a skip", RequireServersEnv, f.skipped, f.fatal)
	}
	t.Setenv(RequireServersEnv, "1")
	f = &fakeTB{TB: t}
	RequireBinary(f, "perflab-no-such-server")
	if !strings.Contains(f.fatal, "fails instead of skipping") || f.skipped != "" {
		t.Errorf("with %s=1: skipped %q, fatal %q; want a failure", RequireServersEnv, f.skipped, f.fatal)
	}
}

func TestFreePort(t *testing.T) {
	port := FreePort(t)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("port %d from FreePort is not free: %v", port, err)
	}
	l.Close()
}

func TestStartNginx(t *testing.T) {
	base := StartNginx(t, `location = /hello { return 200 "hello\n"; }`)
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(base + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "hello\n" {
		t.Errorf("GET /hello: %d %q", resp.StatusCode, b)
	}
}

func TestStartNginxBadConfig(t *testing.T) {
	RequireBinary(t, "nginx")
	f := &fakeTB{TB: t}
	if url := StartNginx(f, "no_such_directive on;"); url != "" || !strings.Contains(f.fatal, "unknown directive") {
		t.Errorf("bad config: url %q, fatal %q; want nginx's complaint", url, f.fatal)
	}
}
