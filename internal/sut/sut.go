// Package sut starts, attaches to, watches and stops the components of
// the system under test (SUT).
//
// A started component runs in its own process group, so Stop reaches the
// children it forks; its stdout and stderr are copied to
// <LogDir>/<Name>.stdout.log and .stderr.log and the last lines are kept in
// memory for error messages (Tail). WaitReady polls a readiness probe and
// fails early, with the exit status and the last log lines, when the
// component exits first. Done fires as soon as the process exits, so a crash
// during the load is seen within one sample interval.
//
// # The component's tree ends with perflab
//
// A component is not perflab's child but a supervisor's: perflab's own
// executable run again (Supervise), one per component. The supervisor is a
// child subreaper, so every process of the component's tree stays its
// descendant even after its parent dies or it leaves the process group
// (setsid, a daemon's double fork). When perflab ends — Stop, or perflab
// killed with SIGKILL, which closes the control socket — the supervisor
// SIGKILLs the group and every process left under it. A parent-death
// signal alone reaches only the component's own process, and a cgroup
// (cgroup.kill) needs a writable cgroup v2 tree, which plain CI machines
// and containers seldom give, and someone alive to write to it.
//
// What still escapes: a process the component has another service start
// (systemd-run, docker run, an ssh to elsewhere), which is not its
// descendant; and everything below the component itself when the
// supervisor is killed with SIGKILL on its own (the component then gets
// SIGKILL as its parent-death signal, its children do not). Outside Linux
// there is no subreaper: only the process group is reached. Each
// supervisor costs a few MB of memory; it is not counted in the
// component's figures.
//
// An attached component (one perflab did not start) is found with Resolve
// by pid, pid file, command-line pattern or cgroup, and watched with Watch.
//
// The package is written for Linux: it reads /proc, uses pidfds, a child
// subreaper and the parent-death signal. Elsewhere it builds, without
// those.
package sut

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"time"
)

// Defaults applied to zero fields of Spec and Probe.
const (
	DefaultStopGrace     = 10 * time.Second
	DefaultReadyTimeout  = 60 * time.Second
	DefaultReadyInterval = 200 * time.Millisecond
)

// Spec describes a component that perflab starts.
type Spec struct {
	// Name identifies the component in errors and names its log files.
	Name string
	// Command is the program, looked up in PATH when it has no slash.
	Command string
	Args    []string
	// Env holds "K=V" entries added to the inherited environment; for a key
	// given more than once, the last entry wins.
	Env []string
	// Dir is the working directory; empty means perflab's.
	Dir string
	// Ready is the readiness probe; the zero Probe means ready once started.
	Ready Probe
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL
	// (DefaultStopGrace when zero).
	StopGrace time.Duration
	// LogDir receives <Name>.stdout.log and <Name>.stderr.log, created or
	// appended to. Empty keeps only the in-memory tail.
	LogDir string
	// Scrub, when set, is applied to the output before it is written to
	// the log files or kept in the tail, whole lines at a time: where the
	// caller removes secrets the component prints. It must be safe for
	// concurrent use.
	Scrub func(string) string
	// Limits, when set, confine the component to a size (confine.go): its
	// supervisor is moved into cgroups of its own before it starts the
	// component, so the component and all it starts are held to them.
	Limits Limits
}

// Probe tells when a component is ready. At most one of HTTP and TCP is set.
//
// HTTP is ready when a GET of the URL answers with a status below 400;
// redirects are not followed (a 3xx answer shows the server is up). A 4xx
// answer is not ready, as a 5xx is: the error after the timeout shows the
// last status, so a wrong path is easy to spot. TCP is ready when a
// connection to host:port is accepted.
type Probe struct {
	HTTP string // URL, http:// or https://
	TCP  string // host:port
	// Timeout bounds the whole wait (DefaultReadyTimeout when zero).
	Timeout time.Duration
	// Interval is the pause between attempts (DefaultReadyInterval when zero).
	Interval time.Duration
}

// IsZero reports whether the probe is unset: the component is ready once
// started.
func (p Probe) IsZero() bool { return p.HTTP == "" && p.TCP == "" }

// namePattern keeps component names usable as file names.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate reports every problem with the spec at once.
func (s Spec) Validate() []error {
	var errs []error
	if !namePattern.MatchString(s.Name) {
		errs = append(errs, fmt.Errorf("component name %q must be letters, digits, '.', '_' or '-', starting with a letter or digit", s.Name))
	}
	if s.Command == "" {
		errs = append(errs, errors.New("command is empty"))
	}
	if s.StopGrace < 0 {
		errs = append(errs, fmt.Errorf("stop grace %v is negative", s.StopGrace))
	}
	if s.Limits.CPU < 0 || s.Limits.Memory < 0 {
		errs = append(errs, fmt.Errorf("limits %+v: a limit is not negative", s.Limits))
	}
	return append(errs, s.Ready.validate()...)
}

func (p Probe) validate() []error {
	var errs []error
	if p.HTTP != "" && p.TCP != "" {
		errs = append(errs, errors.New("readiness probe sets both http and tcp; choose one"))
	}
	if p.HTTP != "" {
		u, err := url.Parse(p.HTTP)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("readiness probe url: %w", err))
		case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
			errs = append(errs, fmt.Errorf("readiness probe url %q must be http:// or https:// with a host", p.HTTP))
		}
	}
	if p.TCP != "" {
		if _, _, err := net.SplitHostPort(p.TCP); err != nil {
			errs = append(errs, fmt.Errorf("readiness probe address %q must be host:port: %w", p.TCP, err))
		}
	}
	if p.Timeout < 0 || p.Interval < 0 {
		errs = append(errs, errors.New("readiness probe timeout and interval must not be negative"))
	}
	return errs
}

// withDefaults returns the spec with zero durations set to the defaults.
func (s Spec) withDefaults() Spec {
	if s.StopGrace == 0 {
		s.StopGrace = DefaultStopGrace
	}
	if s.Ready.Timeout == 0 {
		s.Ready.Timeout = DefaultReadyTimeout
	}
	if s.Ready.Interval == 0 {
		s.Ready.Interval = DefaultReadyInterval
	}
	return s
}
