//go:build linux

package k8scluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// takeHost waits for the host lock, puts back a host that a dead test
// process left changed, makes the cluster's directory and notes how the
// host is, before anything changes it.
func (c *Cluster) takeHost(t testing.TB) error {
	t.Helper()
	root := cacheRoot()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", root, err)
	}
	lock, err := lockHost(filepath.Join(root, "cluster.lock"), lockTimeout)
	if err != nil {
		return err
	}
	c.lock = lock
	c.statePath = filepath.Join(root, "cluster.json")
	if err := recoverHost(t, c.statePath); err != nil {
		c.unlock()
		return err
	}
	dir, err := os.MkdirTemp("", "perflab-k8s-")
	if err != nil {
		c.unlock()
		return fmt.Errorf("cannot create the cluster directory: %w", err)
	}
	c.Dir, c.lay = dir, newLayout(dir)
	if c.state, err = snapshotHost(dir); err == nil {
		err = saveState(c.statePath, c.state)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		c.unlock()
		return err
	}
	return nil
}

// Recover puts back the host that a cluster left changed when its test
// process died before its Stop could run (Start does it first too). A test
// that reads how the host is before Start calls Recover before.
func Recover(t testing.TB) {
	t.Helper()
	root := cacheRoot()
	if _, err := os.Stat(filepath.Join(root, "cluster.json")); err != nil {
		return // nothing left, or not ours to read
	}
	lock, err := lockHost(filepath.Join(root, "cluster.lock"), lockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Flock(int(lock.Fd()), unix.LOCK_UN); lock.Close() }()
	if err := recoverHost(t, filepath.Join(root, "cluster.json")); err != nil {
		t.Fatal(err)
	}
}

// recoverHost puts the host back from the state at path, if any: the
// caller holds the lock, so the process that wrote it is gone.
func recoverHost(t testing.TB, path string) error {
	t.Helper()
	old, err := loadState(path)
	if err != nil || old == nil {
		return err
	}
	t.Logf("a cluster of process %d was not stopped (%s): putting the host back first", old.Owner, old.Dir)
	if err := restoreHost(old); err != nil {
		return fmt.Errorf("cannot put back the host a previous cluster changed: %w", err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("cannot remove cluster state: %w", err)
	}
	return nil
}

// lockHost takes an exclusive lock on path, waiting up to wait for the
// cluster that holds it to stop.
func lockHost(path string, wait time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot open the cluster lock: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("cannot lock %s (another test cluster running for over %v?): %w", path, wait, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (c *Cluster) unlock() {
	if c.lock != nil {
		_ = unix.Flock(int(c.lock.Fd()), unix.LOCK_UN)
		c.lock.Close()
		c.lock = nil
	}
}

// watchSignals stops the cluster when the test process gets SIGINT or
// SIGTERM (the components, in their own sessions, do not get it), then
// lets the signal do what it would have done.
func (c *Cluster) watchSignals() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer signal.Stop(sigs)
		select {
		case sig := <-sigs:
			fmt.Fprintf(os.Stderr, "k8scluster: %v: stopping the cluster and putting the host back\n", sig)
			if err := c.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "k8scluster: %v\n", err)
			}
			signal.Stop(sigs)
			_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		case <-c.quit:
		}
	}()
}

// Stop stops the cluster and puts the host back as Start found it:
// processes ended by PID (SIGTERM, then SIGKILL), container processes
// killed, mounts detached, kubepods cgroups and created directories
// removed, sysctls written back. It runs once; later calls return the
// first result. It fails when something could not be put back.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		begin := time.Now()
		close(c.quit)
		c.stopErr = c.stop()
		c.stopped = time.Since(begin)
	})
	return c.stopErr
}

func (c *Cluster) stop() error {
	if c.state == nil {
		return nil
	}
	var errs []error
	// The kubelet (and kube-state-metrics, if a test started it) first, so
	// that it restarts nothing; then the containers it left; then the
	// control plane and containerd, etcd last.
	errs = append(errs, c.stopComponents("kubelet", "kube-state-metrics"))
	errs = append(errs, killContainers(c.state))
	errs = append(errs, c.stopComponents("containerd", "kube-scheduler", "kube-controller-manager", "kube-apiserver"))
	errs = append(errs, c.stopComponents("etcd"))
	if err := restoreHost(c.state); err != nil {
		errs = append(errs, err)
	} else if err := os.Remove(c.statePath); err != nil {
		errs = append(errs, fmt.Errorf("cannot remove cluster state: %w", err))
	}
	c.unlock()
	return errors.Join(errs...)
}

// stopComponents stops the named components at once and waits for them.
func (c *Cluster) stopComponents(names ...string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(c.comps))
	for i, p := range c.comps {
		for _, n := range names {
			if p.name == n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = p.stop(stopGrace)
				}()
			}
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// killContainers kills the processes in the kubepods cgroups the cluster
// created: the pods' containers, which outlive the kubelet.
func killContainers(s *hostState) error {
	var pids []int
	for _, h := range s.Cgroups {
		pids = append(pids, cgroupProcs(filepath.Join(h, cgroupName))...)
	}
	if len(pids) == 0 {
		return nil
	}
	return killAll(pids, stopGrace)
}

// restoreHost puts the host back from s: whatever process is left of the
// cluster is killed (found by the cluster's own directory in its command
// line, or by its kubepods cgroup), mounts under its directories detached, the kubepods
// cgroups, created directories and the cluster's directory removed, and
// the sysctls written back. A directory with a mount still under it is
// not removed.
func restoreHost(s *hostState) error {
	var errs []error
	roots := s.roots()
	for range 3 { // a shim may start a process as its neighbour is killed
		pids := processesUnder([]string{s.Dir})
		for _, h := range s.Cgroups {
			pids = append(pids, cgroupProcs(filepath.Join(h, cgroupName))...)
		}
		if len(pids) == 0 {
			break
		}
		if err := killAll(pids, stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	mountErr := unmountUnder(roots)
	errs = append(errs, mountErr)
	for _, h := range s.Cgroups {
		errs = append(errs, retry(5*time.Second, func() error { return removeCgroupTree(filepath.Join(h, cgroupName)) }))
	}
	if mountErr == nil {
		errs = append(errs, s.removeCreated())
		if err := os.RemoveAll(s.Dir); err != nil {
			errs = append(errs, fmt.Errorf("cannot remove %s: %w", s.Dir, err))
		}
	}
	errs = append(errs, s.restoreSysctls())
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if left := s.changes(); len(left) > 0 {
		return fmt.Errorf("the host is not as it was: %s", strings.Join(left, "; "))
	}
	return nil
}

// retry calls f until it succeeds or wait has passed.
func retry(wait time.Duration, f func() error) error {
	deadline := time.Now().Add(wait)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exited returns an error naming the first component that has exited,
// with the end of its log.
func (c *Cluster) exited() error {
	for _, p := range c.comps {
		if p.done() {
			return fmt.Errorf("%s exited (%v): %s", p.name, p.cmd.ProcessState, p.tail())
		}
	}
	return nil
}

// waitFor polls cond until it holds, a component exits or ctx ends.
func (c *Cluster) waitFor(ctx context.Context, what string, cond func(ctx context.Context) error) error {
	var last error
	for {
		if err := c.exited(); err != nil {
			return fmt.Errorf("while waiting for %s: %w", what, err)
		}
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = cond(attempt)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not in time (%w); last: %v", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
