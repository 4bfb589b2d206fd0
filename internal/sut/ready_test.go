//go:build unix

package sut

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWaitReadyProbes(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"http", "tcp"} {
		t.Run(kind, func(t *testing.T) {
			addr := freeAddr(t)
			s := helperSpec(t, "api", "serve", addr, "200ms")
			s.StopGrace = 30 * time.Second
			s.Ready = Probe{Timeout: 30 * time.Second, Interval: 20 * time.Millisecond}
			if kind == "http" {
				s.Ready.HTTP = "http://" + addr + "/ready"
			} else {
				s.Ready.TCP = addr
			}
			p := start(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := p.WaitReady(ctx); err != nil {
				t.Fatalf("WaitReady: %v", err)
			}
			if got := pidOf(t, addr); got != p.PID() {
				t.Errorf("PID() = %d, the component says %d", p.PID(), got)
			}
			if e := p.Exit(); e != nil {
				t.Fatalf("Exit() = %v while running", e)
			}
			stopNow(t, p)
			e := p.Exit()
			if e == nil || e.Code != 0 || e.Signal != "" || !e.Stopped {
				t.Errorf("Exit() = %+v, want status 0, stopped", e)
			}
			out, errOut := readLog(t, s, "stdout"), readLog(t, s, "stderr")
			for _, want := range []string{"pid=" + strconv.Itoa(p.PID()), "listening on " + addr} {
				if !strings.Contains(out, want) {
					t.Errorf("stdout log %q lacks %q", out, want)
				}
			}
			if errOut != "warming up\ngot SIGTERM, shutting down\n" {
				t.Errorf("stderr log = %q", errOut)
			}
		})
	}
}

// pidOf asks the serve helper at addr for its pid.
func pidOf(t *testing.T, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/pid")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestWaitReadyExitsFirst(t *testing.T) {
	t.Parallel()
	s := shSpec(t, "api", `echo starting; echo "fatal: bad config" >&2; exit 3`)
	s.Ready = Probe{TCP: freeAddr(t), Timeout: time.Minute, Interval: 20 * time.Millisecond}
	p := start(t, s)
	begin := time.Now()
	err := p.WaitReady(context.Background())
	if took := time.Since(begin); took > 20*time.Second {
		t.Errorf("WaitReady took %v, want well under the %v timeout", took, s.Ready.Timeout)
	}
	var nre *NotReadyError
	if !errors.As(err, &nre) || nre.Exit == nil || nre.Exit.Code != 3 || nre.Exit.Stopped {
		t.Fatalf("WaitReady = %v, want a NotReadyError with exit status 3", err)
	}
	for _, want := range []string{`"api"`, "exited with status 3", "| starting", "| fatal: bad config"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestWaitReadyTimeout(t *testing.T) {
	t.Parallel()
	s := shSpec(t, "api", `echo "waiting for config"; exec sleep 100`)
	s.Ready = Probe{TCP: freeAddr(t), Timeout: 500 * time.Millisecond, Interval: 20 * time.Millisecond}
	p := start(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	begin := time.Now()
	err := p.WaitReady(ctx)
	if took := time.Since(begin); took < s.Ready.Timeout {
		t.Errorf("WaitReady gave up after %v, before the %v timeout", took, s.Ready.Timeout)
	}
	var nre *NotReadyError
	if !errors.As(err, &nre) || nre.Exit != nil {
		t.Fatalf("WaitReady = %v, want a NotReadyError without exit", err)
	}
	for _, want := range []string{"not ready after 500ms", "connection refused", "| waiting for config"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if p.Exit() != nil {
		t.Errorf("the component exited: %v", p.Exit())
	}
}

func TestWaitReadyHTTPStatus(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	s := helperSpec(t, "api", "serve", addr, "0s")
	s.Ready = Probe{HTTP: "http://" + addr + "/nope", Timeout: 2 * time.Second, Interval: 20 * time.Millisecond}
	p := start(t, s)
	err := p.WaitReady(context.Background())
	if err == nil || !strings.Contains(err.Error(), "last probe: HTTP 404 Not Found") {
		t.Fatalf("WaitReady = %v, want a timeout naming the 404", err)
	}
}

func TestWaitReadyContextEnds(t *testing.T) {
	t.Parallel()
	s := shSpec(t, "api", `exec sleep 100`)
	s.Ready = Probe{TCP: freeAddr(t), Timeout: time.Minute, Interval: 20 * time.Millisecond}
	p := start(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err := p.WaitReady(ctx)
	if took := time.Since(begin); took > 20*time.Second {
		t.Errorf("WaitReady took %v after its context ended", took)
	}
	var nre *NotReadyError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nre) {
		t.Fatalf("WaitReady = %v, want the context's error", err)
	}
}

func TestWaitReadyNoProbe(t *testing.T) {
	t.Parallel()
	p := start(t, shSpec(t, "api", `exec sleep 100`))
	if err := p.WaitReady(context.Background()); err != nil {
		t.Fatalf("WaitReady = %v, want ready once started", err)
	}
	dead := start(t, shSpec(t, "dead", `echo bye; exit 4`))
	within(t, dead.Done(), 20*time.Second, "Done")
	err := dead.WaitReady(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exited with status 4") || !strings.Contains(err.Error(), "| bye") {
		t.Fatalf("WaitReady = %v, want the exit status and output", err)
	}
}

func TestCrashDetected(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	s := helperSpec(t, "api", "serve", addr, "0s")
	s.Ready = Probe{TCP: addr, Timeout: 30 * time.Second, Interval: 20 * time.Millisecond}
	p := start(t, s)
	if err := p.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	within(t, p.Done(), 10*time.Second, "Done after SIGKILL")
	e := p.Exit()
	if e == nil || e.Signal != "SIGKILL" || e.Code != -1 || e.Stopped || e.String() != "killed by signal SIGKILL" {
		t.Fatalf("Exit() = %+v", e)
	}
}
