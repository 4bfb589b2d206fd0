package sut

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

const (
	// readyTailLines is how many log lines a NotReadyError carries.
	readyTailLines = 20
	// attemptTimeout bounds one probe attempt.
	attemptTimeout = 2 * time.Second
	// exitLogWait bounds the wait for the last output of a component that
	// exited, so the error shows what it printed before dying.
	exitLogWait = time.Second
)

// NotReadyError says why a component did not become ready: it exited
// (Exit is set) or the probe did not succeed within Timeout. Tail holds the
// component's last log lines.
type NotReadyError struct {
	Name      string
	Exit      *Exit
	Timeout   time.Duration
	LastProbe string // the last probe failure, when the probe timed out
	Tail      []string
}

func (e *NotReadyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cannot wait for component %q to become ready: ", e.Name)
	if e.Exit != nil {
		b.WriteString(e.Exit.String())
	} else {
		fmt.Fprintf(&b, "not ready after %v", e.Timeout)
		if e.LastProbe != "" {
			fmt.Fprintf(&b, " (last probe: %s)", e.LastProbe)
		}
	}
	if len(e.Tail) == 0 {
		b.WriteString("; it wrote no output")
		return b.String()
	}
	fmt.Fprintf(&b, "; its last %d log lines:", len(e.Tail))
	for _, line := range e.Tail {
		b.WriteString("\n  | ")
		b.WriteString(line)
	}
	return b.String()
}

// WaitReady polls the readiness probe every Interval until it succeeds,
// and returns nil. It returns a *NotReadyError as soon as the process
// exits, or when Timeout passes; and ctx's error, wrapped, as soon as ctx
// ends. With no probe it returns nil unless the process has already exited.
func (p *Process) WaitReady(ctx context.Context) error {
	probe := p.spec.Ready
	if probe.IsZero() {
		if p.Exit() != nil {
			return p.exitedError(ctx)
		}
		return nil
	}
	c := newChecker(probe)
	defer c.close()
	wctx, cancel := context.WithTimeout(ctx, probe.Timeout)
	defer cancel()
	go func() { // the process exiting ends the wait, even mid-attempt
		select {
		case <-p.done:
			cancel()
		case <-wctx.Done():
		}
	}()
	var last string
	wait := time.NewTimer(0)
	defer wait.Stop()
	for {
		select {
		case <-wait.C:
		case <-wctx.Done():
			return p.notReady(ctx, last)
		}
		actx, acancel := context.WithTimeout(wctx, attemptTimeout)
		err := c.try(actx)
		acancel()
		if err == nil {
			if p.Exit() != nil { // something else answered the probe
				return p.exitedError(ctx)
			}
			return nil
		}
		// Keep the last informative failure: not one cut by the wait's own
		// end, which a dial can see (as an i/o timeout) before wctx does.
		if dl, _ := wctx.Deadline(); wctx.Err() == nil && time.Now().Before(dl) {
			last = err.Error()
		}
		wait.Reset(probe.Interval)
	}
}

// notReady builds the error for a wait that ended without success.
func (p *Process) notReady(ctx context.Context, lastProbe string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cannot wait for component %q to become ready: %w", p.spec.Name, err)
	}
	if p.Exit() != nil {
		return p.exitedError(ctx)
	}
	return &NotReadyError{
		Name: p.spec.Name, Timeout: p.spec.Ready.Timeout,
		LastProbe: lastProbe, Tail: p.Tail(readyTailLines),
	}
}

// exitedError reports a process that exited before it was ready, with what
// it wrote last.
func (p *Process) exitedError(ctx context.Context) error {
	p.awaitLogs(ctx, exitLogWait)
	return &NotReadyError{Name: p.spec.Name, Exit: p.Exit(), Tail: p.Tail(readyTailLines)}
}

// checker makes probe attempts.
type checker struct {
	try   func(ctx context.Context) error
	close func()
}

func newChecker(p Probe) checker {
	if p.TCP != "" {
		var d net.Dialer
		return checker{
			try: func(ctx context.Context) error {
				conn, err := d.DialContext(ctx, "tcp", p.TCP)
				if err != nil {
					return err
				}
				return conn.Close()
			},
			close: func() {},
		}
	}
	// Like Kubernetes HTTPS probes: no proxy, no certificate verification.
	tr := &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
	}
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return checker{
		try: func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.HTTP, nil)
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			if resp.StatusCode >= 400 {
				return fmt.Errorf("HTTP %s", resp.Status)
			}
			return nil
		},
		close: tr.CloseIdleConnections,
	}
}
