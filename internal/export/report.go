package export

import (
	"fmt"
	"strings"
)

// Report is what a target was sent over a run.
type Report struct {
	Target    string // the URL as perflab shows it
	Kind      Kind
	Pushes    int   // requests made
	Failed    int   // requests that failed
	Sent      int64 // values in the requests that succeeded
	Dropped   int64 // values dropped from a full queue
	Unsent    int64 // values still queued when Close's time was up
	LastError string
}

// OK reports whether everything queued reached the target.
func (r Report) OK() bool { return r.Failed == 0 && r.Dropped == 0 && r.Unsent == 0 }

// String is the report's line: "export to URL: 12 batches sent (3456
// values)", or "export to URL: 2 of 12 batches failed: last error …".
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "export to %s (%s): ", r.Target, r.Kind)
	if r.Failed == 0 {
		fmt.Fprintf(&b, "%d %s sent (%d values)", r.Pushes, plural(r.Pushes, "batch", "batches"), r.Sent)
	} else {
		fmt.Fprintf(&b, "%d of %d %s failed: last error %s", r.Failed, r.Pushes, plural(r.Pushes, "batch", "batches"), r.LastError)
	}
	if r.Dropped > 0 {
		fmt.Fprintf(&b, "; %d values dropped from a full queue (the target was slower than the run)", r.Dropped)
	}
	if r.Unsent > 0 {
		fmt.Fprintf(&b, "; %d values not sent when the run ended", r.Unsent)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (e *exporter) report() Report {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, dropped := e.q.counts()
	return Report{Target: e.target.Shown(), Kind: e.target.Kind, Pushes: e.pushes, Failed: e.failed, Sent: e.sent,
		Dropped: dropped, Unsent: e.unsent, LastError: e.lastErr}
}
