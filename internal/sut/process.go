package sut

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
	// Killed is true when Stop had to send SIGKILL: something in the
	// component's process group was still running when the stop grace
	// after SIGTERM ended (Grace is then the stop grace), or Stop's context
	// ended first (Grace is then zero).
	Killed bool
	Grace  time.Duration
}

// String says how the process ended: "exited with status 2" or "killed by
// signal SIGSEGV".
func (e *Exit) String() string {
	if e.Signal != "" {
		return "killed by signal " + e.Signal
	}
	return fmt.Sprintf("exited with status %d", e.Code)
}

// StopString says how Stop ended the component: "exited with status 0
// after SIGTERM", "still running 10s after SIGTERM: killed with SIGKILL".
func (e *Exit) StopString() string {
	switch {
	case e.Killed && e.Grace > 0:
		return fmt.Sprintf("still running %v after SIGTERM (its stop grace): killed with SIGKILL", e.Grace)
	case e.Killed:
		return "killed with SIGKILL before its stop grace ended: perflab was told to stop at once"
	case e.Stopped:
		return e.String() + " after SIGTERM"
	}
	return e.String()
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

	sup      *exec.Cmd     // the supervisor (see Supervise)
	ctl      *net.UnixConn // its control socket
	released sync.Once     // the control socket's write side is shut
	supDone  chan struct{} // closed when the supervisor has exited and been reaped

	mu       sync.Mutex
	exit     *Exit
	stopping bool // Stop was called before the process exited
	killed   bool // Stop sent SIGKILL
	grace    time.Duration

	stopMu    sync.Mutex // serialises Stop
	groupGone bool       // the process group was seen empty; never signal it again

	conf     *Confinement // the cgroups of a confined component; nil when it is not
	evidence Evidence     // conf's evidence, read as Stop removed its groups
}

// Start starts the component described by s in its own process group and
// returns once the program is running (not ready: see WaitReady). ctx only
// bounds the start; the process runs until it exits or Stop is called.
//
// The component runs under a supervisor, perflab's own executable run
// again with SupervisorArg, which ends the component's whole process tree
// when perflab dies (see Supervise).
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
	p := &Process{
		spec: s, done: make(chan struct{}), streams: streams,
		logs: newRing(ringLines), copied: make(chan struct{}), supDone: make(chan struct{}),
	}
	if !s.Limits.IsZero() {
		p.conf, err = cgroupFS{}.confine(s.Name, s.Limits)
	}
	var started <-chan error
	if err == nil {
		started, err = p.supervise(writers)
	}
	writers[0].Close() // the supervisor has its own copies
	writers[1].Close()
	if err == nil {
		err = p.awaitStart(ctx, started)
	}
	if err != nil {
		for _, st := range streams {
			st.r.Close()
			closeFile(st.file)
		}
		if p.conf != nil {
			err = errors.Join(err, p.conf.remove())
		}
		return nil, fmt.Errorf("cannot start component %q: %w", s.Name, err)
	}
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

// supervise starts the supervisor with the component's output pipes as its
// stdout and stderr, sends it the spec, and follows its messages.
func (p *Process) supervise(out [2]*os.File) (<-chan error, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, err
	}
	ctl, theirs, err := controlSocket()
	if err != nil {
		return nil, err
	}
	defer theirs.Close()
	sup := &exec.Cmd{Path: exe, Args: []string{"perflab", SupervisorArg, p.spec.Name},
		Stdout: out[0], Stderr: out[1], ExtraFiles: []*os.File{theirs},
		SysProcAttr: supervisorProcAttr()}
	if err := sup.Start(); err != nil {
		ctl.Close()
		return nil, fmt.Errorf("cannot start its supervisor: %w", err)
	}
	if p.conf != nil { // before the spec: the component starts inside
		if err := p.conf.add(sup.Process.Pid); err != nil {
			ctl.Close() // the supervisor ends with its control socket
			_ = sup.Wait()
			return nil, err
		}
	}
	p.sup, p.ctl = sup, ctl
	started := make(chan error, 1)
	go p.follow(started)
	spec, _ := json.Marshal(wireSpec{Command: p.spec.Command, Args: p.spec.Args, Dir: p.spec.Dir,
		Env: append(os.Environ(), p.spec.Env...)}) // exec keeps the last value of a key
	_, _ = ctl.Write(append(spec, '\n')) // a supervisor that died says so through follow
	return started, nil
}

// awaitStart waits for the supervisor to say whether the component started.
// When ctx ends first the supervisor is told to end it.
func (p *Process) awaitStart(ctx context.Context, started <-chan error) error {
	select {
	case err := <-started:
		if err != nil {
			p.release()
			<-p.supDone
		}
		return err
	case <-ctx.Done():
		p.release()
		<-p.supDone
		return ctx.Err()
	}
}

// follow reads the supervisor's messages until it exits, then reaps it.
// If it exits without reporting the component's exit (it was killed, and
// the component with it through its parent-death signal), the component's
// exit is taken to be the supervisor's.
func (p *Process) follow(started chan<- error) {
	sc := bufio.NewScanner(p.ctl)
	ok, told := false, false
	for sc.Scan() {
		verb, rest, _ := strings.Cut(sc.Text(), " ")
		switch {
		case verb == msgStarted && !told:
			p.pid, _ = strconv.Atoi(rest)
			ok, told = true, true
			started <- nil
		case verb == msgFailed && !told:
			told = true
			started <- errors.New(rest)
		case verb == msgExited:
			var ns int64
			var ws uint32
			if _, err := fmt.Sscan(rest, &ns, &ws); err == nil {
				p.exited(time.Unix(0, ns), waitStatus(ws))
			}
		}
	}
	_ = p.sup.Wait()
	p.ctl.Close()
	switch {
	case !told:
		started <- fmt.Errorf("its supervisor ended first (%v)", p.sup.ProcessState)
	case ok && p.Exit() == nil:
		ws, _ := p.sup.ProcessState.Sys().(syscall.WaitStatus)
		p.exited(time.Now(), ws)
	}
	close(p.supDone)
}

// release tells the supervisor that perflab is done with the component: it
// kills whatever is left of the tree and exits.
func (p *Process) release() {
	p.released.Do(func() { _ = p.ctl.CloseWrite() })
}

// exited records how the process ended and closes done.
func (p *Process) exited(at time.Time, ws syscall.WaitStatus) {
	e := &Exit{Time: at, Code: -1}
	if ws.Signaled() {
		e.Signal = signalName(ws.Signal())
	} else {
		e.Code = ws.ExitStatus()
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
	e.Killed, e.Grace = p.killed, p.grace
	return &e
}

// Confinement is the cgroups that hold the component to Spec.Limits; nil
// when it is not confined.
func (p *Process) Confinement() *Confinement { return p.conf }

// Evidence is what the kernel counted of a confined component: read live
// while it runs, and as Stop removed its cgroups after that.
func (p *Process) Evidence() (Evidence, error) {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.conf == nil {
		return Evidence{}, errors.New("component " + p.spec.Name + " is not confined")
	}
	if p.conf.removed {
		return p.evidence, nil
	}
	return p.conf.Evidence()
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
