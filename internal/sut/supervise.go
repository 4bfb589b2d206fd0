package sut

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SupervisorArg, as the first argument of perflab's own executable, makes
// it the supervisor of one component (see Supervise). A program that calls
// Start must hand such an invocation to Supervise before anything else, in
// main and in the TestMain of its tests.
const SupervisorArg = "__perflab-supervise"

// controlFD is the supervisor's end of its control socket.
const controlFD = 3

// wireSpec is what Start tells the supervisor: the component's command,
// with its whole environment. It goes over the control socket, not the
// command line, which every user can read in /proc.
type wireSpec struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []string `json:"env"`
	Dir     string   `json:"dir"`
}

// The supervisor's messages to Start, one line each.
const (
	msgStarted = "started" // started <pid>
	msgFailed  = "failed"  // failed <error text>
	msgExited  = "exited"  // exited <unix ns> <wait status>
)

// Supervise is the main of a component's supervisor, the process Start runs
// between perflab and the component so that the component's whole process
// tree ends with perflab, even when perflab is killed with SIGKILL:
//
//   - it reads the component's spec from its control socket (fd 3) and
//     starts the component in a process group of its own, with SIGKILL as
//     its parent-death signal;
//   - it is a child subreaper (Linux): every process of the tree whose
//     parent dies is handed to it rather than to init, so the tree stays
//     its descendants even when a process leaves the group (setsid);
//   - it reports the component's pid and, when it exits, its wait status;
//   - when the control socket reaches its end (Stop is done with the
//     component, or perflab died) it SIGKILLs the component's group and
//     every process left under it, reaps them, and exits.
//
// Signals from the terminal or sent to the supervisor itself are ignored:
// perflab alone decides when the component stops. It returns the exit
// status; the error is for a supervisor not started by Start.
func Supervise() (int, error) {
	f := os.NewFile(controlFD, "control")
	if f == nil {
		return 2, errors.New("cannot supervise: no control socket (only perflab starts a supervisor)")
	}
	conn, err := net.FileConn(f) // a close-on-exec duplicate: the component does not inherit it
	f.Close()
	if err != nil {
		return 2, fmt.Errorf("cannot supervise: no control socket (only perflab starts a supervisor): %w", err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return 2, fmt.Errorf("cannot read the component's spec: %w", err)
	}
	var spec wireSpec
	if err := json.Unmarshal(line, &spec); err != nil {
		return 2, fmt.Errorf("cannot read the component's spec: %w", err)
	}
	s := &supervisor{conn: conn}
	return s.run(spec, r), nil
}

// supervisor is the state of Supervise; one goroutine owns it.
type supervisor struct {
	conn      net.Conn
	pid       int  // the component's
	subreaper bool // orphans of the tree are the supervisor's children
	reaped    bool // the component has been reaped: its pid, and so its group id, may be reused
	killing   bool // the control socket ended: kill everything left
}

// run starts the component and reaps its tree until no child is left.
// Everything is done on one goroutine locked to its thread: the
// parent-death signal is tied to the thread that forks the component, not
// to the process (go.dev/issue/27505), so that thread must live as long as
// the supervisor; and only this goroutine reaps, so a pid it signals cannot
// have been reused.
func (s *supervisor) run(spec wireSpec, r io.Reader) int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	signal.Notify(make(chan os.Signal, 1), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	s.subreaper = becomeSubreaper() == nil
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env, cmd.Dir = spec.Env, spec.Dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		s.send(msgFailed, strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	s.pid = cmd.Process.Pid
	_ = cmd.Process.Release() // reaped below, not by os/exec
	s.send(msgStarted, fmt.Sprint(s.pid))
	quietOutput() // the log pipes end when the component's tree is done with them
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, r)
		close(eof)
	}()
	for !s.reap() {
		if s.killing {
			s.killAll()
		}
		select {
		case <-chld:
		case <-eof:
			eof, s.killing = nil, true
		}
	}
	return 0
}

// reap reaps every child that has exited, reports the component's exit, and
// tells whether no child is left.
func (s *supervisor) reap() (none bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return true
		case err != nil || pid <= 0:
			return false
		case pid == s.pid:
			s.reaped = true
			s.send(msgExited, fmt.Sprintf("%d %d", time.Now().UnixNano(), uint32(ws)))
		}
	}
}

// killAll SIGKILLs the component's group while its leader is unreaped (so
// the group id is still its), and every child of the supervisor. The
// children of a killed process become the supervisor's and are killed on
// the next call, after the dead are reaped. Without the subreaper, the
// orphans of the group are not its children: the group is signalled while
// it has live members.
func (s *supervisor) killAll() {
	if !s.reaped || !s.subreaper && !groupEmpty(s.pid) {
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	}
	for _, pid := range childrenOf(defaultProcRoot, os.Getpid()) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// send writes one message to Start; a Start that is gone is not an error.
func (s *supervisor) send(verb, rest string) {
	_, _ = io.WriteString(s.conn, verb+" "+rest+"\n")
}

// quietOutput points the supervisor's stdout and stderr at /dev/null, so
// that it does not hold the component's log pipes open.
func quietOutput() {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer null.Close()
	_ = unix.Dup2(int(null.Fd()), 1)
	_ = unix.Dup2(int(null.Fd()), 2)
}

// childrenOf returns the pids under procRoot whose parent is ppid, zombies
// included.
func childrenOf(procRoot string, ppid int) []int {
	pids, _ := listPIDs(procRoot)
	var out []int
	for _, pid := range pids {
		if st, err := readStat(procRoot, pid); err == nil && st.ppid == ppid {
			out = append(out, pid)
		}
	}
	return out
}
