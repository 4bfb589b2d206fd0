package sut

import (
	"context"
	"time"
)

// watchPollInterval is how often Watch looks at /proc when pidfds are not
// available.
const watchPollInterval = 100 * time.Millisecond

// Watch returns a channel closed when process pid exits (a zombie counts
// as exited). It is meant for attached components; for started ones use
// Process.Done. On Linux 5.10 and later it waits on a pidfd through the Go
// runtime's poller, so it fires at once and holds no thread; elsewhere it
// looks at /proc every 100 ms. If ctx ends first the channel is never
// closed: select on ctx.Done() too.
//
// A pid names a process only while it runs: if the process exited and its
// pid was reused between Resolve and Watch, Watch follows the newcomer.
func Watch(ctx context.Context, pid int) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		exited, err := waitPidfd(ctx, pid)
		if err != nil {
			exited = pollExit(ctx, defaultProcRoot, pid, watchPollInterval)
		}
		if exited {
			close(ch)
		}
	}()
	return ch
}

// pollExit looks at procRoot every interval until pid is gone or a zombie,
// and reports true; it reports false when ctx ends first.
func pollExit(ctx context.Context, procRoot string, pid int, interval time.Duration) bool {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if st, err := readStat(procRoot, pid); err != nil || !st.running() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}
