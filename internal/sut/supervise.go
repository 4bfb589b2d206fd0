package sut

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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

// send writes one message to Start; a Start that is gone is not an error.
func (s *supervisor) send(verb, rest string) {
	_, _ = io.WriteString(s.conn, verb+" "+rest+"\n")
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
