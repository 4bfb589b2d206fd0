// Package testutil starts real servers (nginx, …) on 127.0.0.1 for driver
// tests and stops them when the test ends.
//
// A test that needs a server binary that is not installed is skipped, with
// the reason, unless PERFLAB_REQUIRE_SERVERS=1 (CI sets it): then it fails,
// so a missing server can never turn a CI run green by skipping.
package testutil

import (
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// RequireServersEnv is the environment variable that turns a missing server
// from a skip into a failure.
const RequireServersEnv = "PERFLAB_REQUIRE_SERVERS"

// Unavailable skips the test with the reason, or fails it when
// PERFLAB_REQUIRE_SERVERS=1.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireServersEnv) == "1" {
		t.Fatalf(format+" ("+RequireServersEnv+"=1, so this fails instead of skipping)", args...)
		return
	}
	t.Skipf(format+" (set "+RequireServersEnv+"=1 to fail instead)", args...)
}

// sbinDirs are searched after PATH: Debian installs servers such as nginx in
// /usr/sbin, which is not on every user's PATH.
var sbinDirs = []string{"/usr/local/sbin", "/usr/sbin", "/sbin"}

// RequireBinary returns the path of the named program, looked up in PATH and
// then the sbin directories, or skips (fails, see Unavailable) the test.
// In -short mode it skips: the suite's race-detector line runs short, for
// the code's concurrency, and the real servers run in its main line.
func RequireBinary(t testing.TB, name string) string {
	t.Helper()
	skipShort(t, name)
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range sbinDirs {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	Unavailable(t, "%s is not installed (apt-get install %s)", name, name)
	return ""
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that no other test of this process was given: one drawn at random below
// the ephemeral range (see freePortLow) that a listener could bind.
// Another process may still take it before the test's server binds it.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		port := freePortLow + rand.IntN(freePortHigh-freePortLow+1)
		if !handedOut(port) {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // in use
		}
		_ = l.Close()
		return port
	}
	Unavailable(t, "cannot find a free port on 127.0.0.1 from %d to %d", freePortLow, freePortHigh)
	return 0
}

// FreePort's ports lie below the kernel's ephemeral range (32768–60999 by
// default), from which the clients of a load take their local ports: a
// port the kernel had just said was free could be some connection's local
// port by the time the server that was to bind it started ("address
// already in use"), the more so the more tests run at once.
const freePortLow, freePortHigh = 20000, 32767

var (
	portsMu sync.Mutex
	ports   = map[int]bool{}
)

// handedOut records port as given to a test and reports whether it was
// not given before: no two tests of a process get the same port.
func handedOut(port int) bool {
	portsMu.Lock()
	defer portsMu.Unlock()
	if ports[port] {
		return false
	}
	ports[port] = true
	return true
}

// skipShort skips a test of a real server in -short mode: the suite's
// race-detector line runs short, for the code's concurrency, and the real
// servers run in its main line.
func skipShort(t testing.TB, name string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s is a real server; they run without -short", name)
	}
}

// Timing skips a test whose assertions are timing figures (a latency
// within a few per cent of a set delay) under the race detector, which
// slows the code it watches several times: there the test would measure
// the detector. The suite runs such tests without it.
func Timing(t testing.TB) {
	t.Helper()
	skipRace(t, "timing figures under the race detector measure the detector")
}

// skipRace skips the test under the race detector, saying why; the suite
// runs it without the detector.
func skipRace(t testing.TB, why string) {
	t.Helper()
	if raceEnabled {
		t.Skip(why + "; this test runs without -race")
	}
}

// LineEnv names the line of make test a test runs in: "shared" where the
// tests run beside each other (several packages at once, and the race
// detector's line), "alone" where the tests that call Alone run one at a
// time.
const LineEnv = "PERFLAB_TEST_LINE"

// Alone marks a test whose figures other tests running beside it would
// change: latencies to a millisecond, CPU ratios, rates the machine must
// give. make test runs the tests that call it in a line of their own, one
// at a time, after the others, on a machine nothing else of the suite
// uses. The Makefile finds them by name in their files, so call it in the
// test function itself, not in a helper: a test that calls it and runs in
// the shared line (PERFLAB_TEST_LINE=shared) was not found there, and
// fails, rather than measure its neighbours.
func Alone(t testing.TB) {
	t.Helper()
	if os.Getenv(LineEnv) == "shared" {
		t.Fatalf("this test calls testutil.Alone, but make test ran it in its shared line, beside other tests: call testutil.Alone(t) in the test function itself, where the Makefile looks for it")
	}
}

// OneGoroutine skips under the race detector a test whose code runs on
// one goroutine (encoding, statistics over many draws): the detector has
// no sharing to find there, and would only slow it several times. The
// suite runs such tests without it.
func OneGoroutine(t testing.TB) {
	t.Helper()
	skipRace(t, "the code under test runs on one goroutine: nothing for the race detector to find")
}

// HeapFigures skips a test whose assertions are heap sizes under the race
// detector, whose shadow memory and slowed goroutines change what is in
// use at once. The suite runs such tests without it.
func HeapFigures(t testing.TB) {
	t.Helper()
	skipRace(t, "heap figures under the race detector measure the detector")
}
