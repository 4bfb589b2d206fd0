package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/shard"
)

// localStopWait is how long local workers get to exit once told the run
// is over, before they are killed.
const localStopWait = 10 * time.Second

// Local are the workers of `perflab run --workers N`: perflab
// processes on this machine, each told its index as a Kubernetes Indexed
// Job would tell it (JOB_COMPLETION_INDEX), its output in logDir.
type Local struct {
	Exe    string // the perflab binary
	plan   string // the plan file, as the workers load it
	logDir string

	mu    sync.Mutex
	cmds  []*exec.Cmd
	exits map[int]string // workers that exited: why, "" for exit 0
	done  []chan struct{}
}

var _ Launcher = (*Local)(nil)

// start starts the workers; their environment is the coordinator's, with
// the run's.
func (l *Local) Start(_ context.Context, run shard.Run, url string, n int) error {
	if err := os.MkdirAll(l.logDir, 0o755); err != nil {
		return fmt.Errorf("cannot make the workers' log directory: %w", err)
	}
	l.exits = map[int]string{}
	for i := range n {
		if err := l.startOne(run, url, n, i); err != nil {
			return err
		}
	}
	return nil
}

func (l *Local) startOne(run shard.Run, url string, n, i int) error {
	log, err := os.Create(l.Logs(i))
	if err != nil {
		return fmt.Errorf("cannot start worker %d: %w", i, err)
	}
	cmd := exec.Command(l.Exe, "worker", "--plan", l.plan)
	cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX="+strconv.Itoa(i), "PERFLAB_WORKERS="+strconv.Itoa(n),
		"PERFLAB_RUN_ID="+run.ID, "PERFLAB_STORE="+url)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = workerProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("cannot start worker %d: %w", i, err)
	}
	done := make(chan struct{})
	l.mu.Lock()
	l.cmds, l.done = append(l.cmds, cmd), append(l.done, done)
	l.mu.Unlock()
	go func() {
		defer close(done)
		err := cmd.Wait()
		log.Close()
		l.mu.Lock()
		defer l.mu.Unlock()
		l.exits[i] = exitText(err)
	}()
	return nil
}

// exitText says how a worker process ended: "" for exit 0.
func exitText(err error) string {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by " + signalName(ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", ee.ExitCode())
}

// failed is every worker that exited: while the run goes on, none
// should (they exit when told the run is over).
func (l *Local) Failed() map[int]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[int]string{}
	for i, why := range l.exits {
		if why == "" {
			why = "exited"
		}
		out[i] = why + "; its output is in " + l.Logs(i)
	}
	return out
}

// stop waits for the workers, told that the run is over, to exit; those
// that do not within localStopWait, or all at once with kill, are killed.
func (l *Local) Stop(kill bool) {
	l.mu.Lock()
	cmds, done := l.cmds, l.done
	l.mu.Unlock()
	deadline := time.Now().Add(localStopWait)
	for i, d := range done {
		if kill {
			_ = cmds[i].Process.Kill()
		}
		select {
		case <-d:
		case <-time.After(time.Until(deadline)):
			_ = cmds[i].Process.Kill()
			<-d
		}
	}
}

func (l *Local) Logs(i int) string {
	return filepath.Join(l.logDir, fmt.Sprintf("worker-%d.log", i))
}

// ExternalHelloIn is how long workers started elsewhere get to register.
const ExternalHelloIn = 15 * time.Minute

// External are workers this process does not start: the pods of a
// Job applied from perflab k8s manifest, say. It knows of their failures
// only through the store (an end with an error, or none by the deadline).
type External struct{}

func (External) Start(context.Context, shard.Run, string, int) error { return nil }
func (External) Failed() map[int]string                              { return nil }
func (External) Stop(bool)                                           {}
func (External) Logs(i int) string                                   { return fmt.Sprintf("worker %d's own output", i) }
