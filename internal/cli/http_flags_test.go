package cli

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

// countingListener listens on 127.0.0.1 and counts the connections made
// to it; count returns how many there were before it was called.
func countingListener(t *testing.T) (url string, count func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	accepted := sync.NewCond(&mu)
	seen := map[string]bool{} // the clients' addresses
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			seen[c.RemoteAddr().String()] = true
			accepted.Broadcast()
			mu.Unlock()
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String() + "/", func() int {
		// Connections are accepted in the order they were made: once a
		// last one of our own is, every earlier one was counted.
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		mu.Lock()
		defer mu.Unlock()
		for !seen[c.LocalAddr().String()] {
			accepted.Wait()
		}
		return len(seen) - 1
	}
}

// TestHTTPRefusesInvalidFlags: invalid values of perflab http's flags are
// refused, every problem listed, with exit 2, before any connection is
// made or a run directory created.
func TestHTTPRefusesInvalidFlags(t *testing.T) {
	url, conns := countingListener(t)
	out := t.TempDir()
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"-c", "0"}, []string{"--concurrency 0 must be >= 1"}},
		{[]string{"--concurrency", "-3"}, []string{"--concurrency -3 must be >= 1"}},
		{[]string{"--rate", "10/s", "--vus-min", "20", "--vus-max", "10"}, []string{"--vus-min 20 is larger than --vus-max 10"}},
		{[]string{"--warmup", "2s"}, []string{"--warmup 2s must be >= 0 and shorter than --duration 2s"}},
		{[]string{"--warmup", "-1s"}, []string{"--warmup -1s must be >= 0"}},
		{[]string{"--rate", "10/s", "--dispatch-quantum", "-1ms"}, []string{"--dispatch-quantum -1ms must be > 0"}},
		{[]string{"--dispatch-quantum", "-1ms"}, []string{"--dispatch-quantum applies to the open model"}},
		{[]string{"-c", "4", "--vus-max", "8", "--backlog", "3"}, []string{"--vus-max applies to the open model", "--backlog applies to the open model"}},
		{[]string{"--rate", "10/s", "-c", "5"}, []string{"give one of --rate and --concurrency, not both"}},
		{[]string{"--timeout", "-1s"}, []string{"--timeout -1s must be > 0"}},
		{[]string{"--timeout", "0"}, []string{"--timeout 0s must be > 0"}},
		{[]string{"--grace", "-1s"}, []string{"--grace -1s must be >= 0"}},
		{[]string{"--rate", "10/s", "--backlog", "-1"}, []string{"--backlog -1 must be >= 0"}},
		{[]string{"--rate", "0/s"}, []string{`--rate "0/s": want a positive rate`}},
		{[]string{"--rate", "100"}, []string{`--rate "100" needs a unit: 100/s`}},
		{[]string{"--rate", "10/s", "--vus-max", "0", "--vus-min", "-1"}, []string{"--vus-max 0 must be >= 1", "--vus-min -1 must be >= 0"}},
		// Every problem at once.
		{[]string{"--rate", "0/s", "--vus-min", "9", "--vus-max", "3", "--backlog", "-2", "--dispatch-quantum", "0", "--timeout", "-2s",
			"--grace", "-3s", "--warmup", "5s", "--slo", "p99 <"}, []string{`--rate "0/s"`, "--vus-min 9 is larger than --vus-max 3", "--backlog -2",
			"--dispatch-quantum 0s", "--timeout -2s", "--grace -3s", "--warmup 5s", "--slo: "}},
	} {
		args := append([]string{"http", url, "--duration", "2s", "--out", out}, tt.args...)
		code, _, errs := mainOut(args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", tt.args, code, ExitUsage, errs)
		}
		for _, w := range tt.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: no %q in\n%s", tt.args, w, errs)
			}
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connections made to the target", n)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("%d run directories created", len(entries))
	}
	// Valid values that only look odd still run: --vus-max alone below
	// the default --vus-min takes it as --vus-min.
	f := httpFlags{loadFlags: loadFlags{rate: "10/s", vusMin: 10, vusMax: 5, duration: 1e9, quantum: 1e6}, timeout: 1e9}
	if _, _, err := f.checkedPlan(url, func(name string) bool { return name == "rate" || name == "vus-max" }); err != nil {
		t.Errorf("--vus-max 5 alone: %v", err)
	}
}

// TestHTTPRefusesImpossibleValues (issue 16, item 11): a port out of range
// and a rate no generator issues are refused before any request, exit 2,
// with no run directory left; before, the first ran and exited 1, the
// second ran and exited 0 having issued a sliver of its arrivals.
func TestHTTPRefusesImpossibleValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"http://127.0.0.1:99999/", "--rate", "10/s"}, "port 99999 is not one from 1 to 65535"},
		{[]string{"http://127.0.0.1:1/", "--rate", "1e12/s"}, "is above 100000000/s"},
	} {
		out := t.TempDir()
		code, _, errs := mainOut(append(append([]string{"http"}, c.args...), "--duration", "1s", "--out", out)...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", c.args, code, ExitUsage, c.want, errs)
		}
		if dirs, _ := filepath.Glob(filepath.Join(out, "*")); len(dirs) != 0 {
			t.Errorf("%v: a refused run left %v", c.args, dirs)
		}
	}
}

// TestRefusesMoreVUsThanFiles (issue 16, item 10): a concurrency, or a
// vus.max, whose connections the open-file limit cannot hold is refused
// before any request, saying how to raise the limit; before, -c 1000000
// ran until the machine gave out.
func TestRefusesMoreVUsThanFiles(t *testing.T) {
	soft, _ := run.OpenFiles()
	if soft == 0 || soft > 1<<24 {
		t.Skipf("open-file limit %d: cannot exceed it", soft)
	}
	over := strconv.FormatUint(soft+1, 10)
	for _, args := range [][]string{{"-c", over}, {"--rate", "10/s", "--vus-max", over}} {
		out := t.TempDir()
		code, _, errs := mainOut(append([]string{"http", "http://127.0.0.1:1/", "--duration", "1s", "--out", out}, args...)...)
		if code != ExitUsage || !strings.Contains(errs, "open files") || !strings.Contains(errs, "ulimit -n") {
			t.Errorf("%v: exit %d, want %d saying how to raise the limit:\n%s", args, code, ExitUsage, errs)
		}
		if dirs, _ := filepath.Glob(filepath.Join(out, "*")); len(dirs) != 0 {
			t.Errorf("%v: a refused run left %v", args, dirs)
		}
	}
	planPath := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(planPath, []byte(`name: many
profiles:
  - name: p
    duration: 1s
    workloads:
      - {name: a, driver: http, concurrency: `+over+`, params: {url: "http://127.0.0.1:1/"}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := mainOut("run", planPath, "--out", t.TempDir()); code != ExitUsage || !strings.Contains(errs, "profile p: its workloads' "+over+" VUs") {
		t.Errorf("plan: exit %d:\n%s", code, errs)
	}
}
