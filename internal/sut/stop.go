package sut

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

const (
	// groupPollInterval is how often Stop looks for members of the process
	// group left after its leader exited. The leader itself is not polled:
	// its exit closes Done.
	groupPollInterval = 20 * time.Millisecond
	// killWait bounds the wait after SIGKILL.
	killWait = 5 * time.Second
	// supervisorWait bounds the wait for the supervisor to kill and reap
	// what is left of the component's tree and exit.
	supervisorWait = 5 * time.Second
	// logDrainTimeout bounds the wait for the output pipes to reach their
	// end once the tree is gone. Only a process that escaped the
	// supervisor can hold them longer; its output is then cut.
	logDrainTimeout = 5 * time.Second
)

// Stop ends the component: SIGTERM to its whole process group, up to
// StopGrace for every member to exit, then SIGKILL to the group (Exit then
// says Killed). Its supervisor then SIGKILLs any process of its tree that
// left the group, and exits. Stop returns once the tree is gone and the log
// files are complete and closed; Exit is then set. Stop is idempotent and
// safe after the process died by itself (children it left in its group are
// still stopped). When ctx ends first, the group is SIGKILLed at once and
// ctx's error is returned.
func (p *Process) Stop(ctx context.Context) error {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	p.mu.Lock()
	if p.exit == nil {
		p.stopping = true
	}
	p.mu.Unlock()
	err := p.terminate(ctx)
	err = errors.Join(err, p.endSupervisor(ctx))
	err = errors.Join(err, p.unconfine())
	return errors.Join(err, p.finishLogs(ctx))
}

// unconfine reads a confined component's evidence a last time and removes
// its cgroups, once its tree is gone.
func (p *Process) unconfine() error {
	if p.conf == nil || p.conf.removed {
		return nil
	}
	ev, err := p.conf.Evidence()
	p.evidence = ev
	return errors.Join(err, p.conf.remove())
}

// endSupervisor lets the supervisor go and waits until it has killed and
// reaped what is left and exited. If ctx ends first it finishes on its own.
func (p *Process) endSupervisor(ctx context.Context) error {
	p.release()
	t := time.NewTimer(supervisorWait)
	defer t.Stop()
	select {
	case <-p.supDone:
	case <-ctx.Done():
	case <-t.C:
		return fmt.Errorf("cannot stop component %q: its supervisor (pid %d) still waits for its processes to end %v after SIGKILL",
			p.spec.Name, p.sup.Process.Pid, supervisorWait)
	}
	return nil
}

// markKilled records that Stop sends SIGKILL, after the stop grace when
// graceOver, else because its context ended.
func (p *Process) markKilled(graceOver bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killed, p.grace = true, 0
	if graceOver {
		p.grace = p.spec.StopGrace
	}
}

// terminate signals the process group until it is gone.
func (p *Process) terminate(ctx context.Context) error {
	if p.groupGone {
		return nil
	}
	if p.Exit() != nil && groupEmpty(p.pid) {
		// Never signal an empty group: its id may be reused.
		p.groupGone = true
		return nil
	}
	signalGroup(p.pid, syscall.SIGTERM)
	grace := time.NewTimer(p.spec.StopGrace)
	defer grace.Stop()
	gone, err := p.waitGroup(ctx, grace.C)
	if gone {
		p.groupGone = true
		return nil
	}
	p.markKilled(err == nil)
	signalGroup(p.pid, syscall.SIGKILL)
	if err != nil {
		return fmt.Errorf("cannot stop component %q: %w", p.spec.Name, err)
	}
	kill := time.NewTimer(killWait)
	defer kill.Stop()
	gone, err = p.waitGroup(ctx, kill.C)
	switch {
	case gone:
		p.groupGone = true
		return nil
	case err != nil:
		return fmt.Errorf("cannot stop component %q: %w", p.spec.Name, err)
	}
	return fmt.Errorf("cannot stop component %q: process group %d still alive %v after SIGKILL", p.spec.Name, p.pid, killWait)
}

// waitGroup waits for the leader to exit and then for the other members of
// its group. It returns gone=false when deadline fires first, and ctx's
// error when ctx ends first.
func (p *Process) waitGroup(ctx context.Context, deadline <-chan time.Time) (gone bool, err error) {
	select {
	case <-p.done:
	case <-deadline:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
	tick := time.NewTicker(groupPollInterval)
	defer tick.Stop()
	for !groupEmpty(p.pid) {
		select {
		case <-tick.C:
		case <-deadline:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return true, nil
}

// finishLogs waits for the output to be copied, closes the streams and
// reports a failure to write the log files.
func (p *Process) finishLogs(ctx context.Context) error {
	if !p.awaitLogs(ctx, logDrainTimeout) {
		for _, st := range p.streams {
			st.r.Close() // ends the copy: a descendant outside the group holds the pipe
		}
		<-p.copied
	}
	var errs []error
	for i, st := range p.streams {
		if st.err != nil {
			errs = append(errs, fmt.Errorf("cannot write %s log of component %q: %w", [2]string{"stdout", "stderr"}[i], p.spec.Name, st.err))
		}
	}
	return errors.Join(errs...)
}
