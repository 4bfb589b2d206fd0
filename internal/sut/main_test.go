package sut

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// helperEnv switches the test binary into a fake component (see runHelper).
const helperEnv = "PERFLAB_TARGET_TEST_HELPER"

// Flood output: floodLines lines of floodLineBytes bytes, 10 MB in all.
const (
	floodLines     = 100_000
	floodLineBytes = 100
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == SupervisorArg { // Start runs the test binary as the supervisor
		code, err := Supervise()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(code)
	}
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runHelper is the fake component's main:
//
//	serve ADDR DELAY       print, wait DELAY, serve HTTP on ADDR, exit 0 on SIGTERM
//	serve-ignore-term ...  the same, ignoring SIGTERM
//	flood                  write 10 MB to stdout, a line to stderr, exit 0
//	sleep TOKEN            sleep until killed
//	spin                   burn a core until killed
//	alloc N                touch N MiB, print "allocated N", sleep until killed
//	parent FIFO            Start a child (see parentHelper), sleep until killed
//	parent-tree FIFO SCRIPT  Start sh -c SCRIPT sh FIFO, sleep until killed
func runHelper(mode string, args []string) int {
	switch mode {
	case "parent":
		return parentHelper(args[0])
	case "parent-tree":
		_, err := Start(context.Background(), Spec{Name: "child", Command: "sh", Args: []string{"-c", args[1], "sh", args[0]}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		select {}
	case "serve", "serve-ignore-term":
		return serveHelper(mode == "serve-ignore-term", args)
	case "flood":
		w := bufio.NewWriterSize(os.Stdout, 1<<20)
		for i := range floodLines {
			fmt.Fprintf(w, "line %08d %s\n", i, strings.Repeat("x", floodLineBytes-15))
		}
		if err := w.Flush(); err != nil {
			return 1
		}
		fmt.Fprintln(os.Stderr, "flood done")
		return 0
	case "sleep":
		select {}
	case "spin": // burn a core until killed
		for x := 0; ; x++ {
			_ = x
		}
	case "alloc": // touch N MiB, print "allocated", sleep until killed
		n, _ := strconv.Atoi(args[0])
		held := make([][]byte, 0, n)
		for range n {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = 1
			}
			held = append(held, b)
		}
		fmt.Println("allocated", len(held))
		select {}
	}
	fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
	return 2
}

func serveHelper(ignoreTerm bool, args []string) int {
	term := make(chan os.Signal, 1)
	if ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(term, syscall.SIGTERM)
	}
	fmt.Printf("pid=%d\n", os.Getpid())
	fmt.Fprintln(os.Stderr, "warming up")
	delay, err := time.ParseDuration(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	time.Sleep(delay) // the component's own start-up time
	ln, err := net.Listen("tcp", args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/pid", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, os.Getpid()) })
	go func() { _ = http.Serve(ln, mux) }()
	<-term
	fmt.Fprintln(os.Stderr, "got SIGTERM, shutting down")
	return 0
}

// parentHelper starts `sleep 100` as a component from a goroutine locked
// to its thread, lets that goroutine end (so the runtime ends the thread),
// and writes the child's pid to fifo, or 0 if the child died meanwhile.
// The 500 ms wait can only hide a failure, never make one up.
func parentHelper(fifo string) int {
	// Keep the main thread here: a locked goroutine ending on the main
	// thread does not end it.
	runtime.LockOSThread()
	started := make(chan *Process, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		p, err := Start(context.Background(), Spec{Name: "child", Command: "sleep", Args: []string{"100"}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		started <- p
	}()
	p := <-started
	if p == nil {
		return 1
	}
	pid := p.PID()
	select {
	case <-p.Done():
		pid = 0
	case <-time.After(500 * time.Millisecond):
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		return 1
	}
	fmt.Fprintf(f, "%d\n", pid)
	f.Close()
	select {}
}

// helperSpec describes the test binary run as a fake component.
func helperSpec(t *testing.T, name, mode string, args ...string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Name: name, Command: exe, Args: args,
		Env:       []string{helperEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}, // -race sleeps 1 s at exit by default
		StopGrace: 2 * time.Second,
		LogDir:    t.TempDir(),
	}
}

// shSpec describes a component run by sh -c script.
func shSpec(t *testing.T, name, script string, args ...string) Spec {
	t.Helper()
	return Spec{
		Name: name, Command: "sh", Args: append([]string{"-c", script, "sh"}, args...),
		StopGrace: 2 * time.Second, LogDir: t.TempDir(),
	}
}

// start starts s and stops it when the test ends.
func start(t *testing.T, s Spec) *Process {
	t.Helper()
	p, err := Start(context.Background(), s)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.Stop(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return p
}

// freeAddr returns a 127.0.0.1 address that was free a moment ago, below
// the ephemeral range (testutil.FreePort): a port the kernel gave a
// listener on :0 and took back was some connection's local port by the
// time the component bound it, beside another engineer's load ("address
// already in use").
func freeAddr(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
}

// within fails the test unless ch is closed within d.
func within(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
	}
}

// stopNow stops p, failing the test on error.
func stopNow(t *testing.T, p *Process) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

// readLog returns a component's log file.
func readLog(t *testing.T, s Spec, stream string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.LogDir, s.Name+"."+stream+".log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
