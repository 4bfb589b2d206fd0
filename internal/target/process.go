package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Exit describes how a component's process ended.
type Exit struct {
	Time time.Time
	// Code is the exit status, or -1 when a signal ended the process.
	Code int
	// Signal names the signal that ended the process ("SIGKILL"), or is
	// empty when it exited by itself.
	Signal string
	// Stopped is true when Stop had been called before the process ended.
	Stopped bool
}

// String says how the process ended: "exited with status 2" or "killed by
// signal SIGSEGV".
func (e *Exit) String() string {
	if e.Signal != "" {
		return "killed by signal " + e.Signal
	}
	return fmt.Sprintf("exited with status %d", e.Code)
}

// Process is a component started by Start. Its methods are safe for
// concurrent use.
type Process struct {
	spec    Spec
	pid     int
	done    chan struct{} // closed when the process has exited and been reaped
	streams [2]*stream    // stdout, stderr
	logs    *ring
	copied  chan struct{} // closed when both streams are fully copied

	mu       sync.Mutex
	exit     *Exit
	stopping bool // Stop was called before the process exited

	stopMu    sync.Mutex // serialises Stop
	groupGone bool       // the process group was seen empty; never signal it again
}

// Start starts the component described by s in its own process group and
// returns once the program is running (not ready: see WaitReady). ctx only
// bounds the start; the process runs until it exits or Stop is called.
func Start(ctx context.Context, s Spec) (*Process, error) {
	if errs := s.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("cannot start component %q: %w", s.Name, errors.Join(errs...))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cannot start component %q: %w", s.Name, err)
	}
	s = s.withDefaults()
	streams, writers, err := openStreams(s)
	if err != nil {
		return nil, fmt.Errorf("cannot start component %q: %w", s.Name, err)
	}
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), s.Env...) // exec keeps the last value of a key
	cmd.Stdout, cmd.Stderr = writers[0], writers[1]
	cmd.SysProcAttr = sysProcAttr()

	p := &Process{
		spec: s, done: make(chan struct{}), streams: streams,
		logs: newRing(ringLines), copied: make(chan struct{}),
	}
	err = launch(cmd, p.exited)
	writers[0].Close() // the child has its own copies
	writers[1].Close()
	if err != nil {
		for _, st := range streams {
			st.r.Close()
			closeFile(st.file)
		}
		return nil, fmt.Errorf("cannot start component %q: %w", s.Name, err)
	}
	p.pid = cmd.Process.Pid
	for _, st := range streams {
		go st.copy(&lineSplitter{ring: p.logs, scrub: s.Scrub})
	}
	go func() {
		<-streams[0].done
		<-streams[1].done
		close(p.copied)
	}()
	return p, nil
}

// launch starts cmd and waits for it on a goroutine locked to its OS thread
// for the whole life of the child. The parent-death signal is tied to the
// thread that forked the child, not to the process (go.dev/issue/27505):
// the Go runtime ends a thread when a goroutine exits while locked to it,
// which would SIGKILL the child early. Here the forking thread stays locked
// and alive, blocked in wait, until the child has exited; it is then
// unlocked, not ended. Waiting blocks a thread anyway, so this costs none.
func launch(cmd *exec.Cmd, exited func(*os.ProcessState)) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait() // the exit status is in ProcessState; output goes through our own pipes
		exited(cmd.ProcessState)
	}()
	return <-started
}

// exited records how the process ended and closes done.
func (p *Process) exited(state *os.ProcessState) {
	e := &Exit{Time: time.Now(), Code: -1}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = signalName(ws.Signal())
	} else {
		e.Code = state.ExitCode()
	}
	p.mu.Lock()
	e.Stopped = p.stopping
	p.exit = e
	p.mu.Unlock()
	close(p.done)
}

// Name returns the component's name.
func (p *Process) Name() string { return p.spec.Name }

// PID returns the process id, which is also the id of its process group.
func (p *Process) PID() int { return p.pid }

// Done returns a channel closed as soon as the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit returns how the process ended, or nil while it runs.
func (p *Process) Exit() *Exit {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exit == nil {
		return nil
	}
	e := *p.exit
	return &e
}

// Tail returns up to the last n lines the component wrote, stdout and
// stderr interleaved in the order they were read. At most 256 lines are
// kept, each cut at 2 KiB; the log files keep everything.
func (p *Process) Tail(n int) []string { return p.logs.last(n) }

// awaitLogs waits until the output is fully copied, for at most d or until
// ctx ends. It reports whether the copy finished.
func (p *Process) awaitLogs(ctx context.Context, d time.Duration) bool {
	select {
	case <-p.copied:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.copied:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
