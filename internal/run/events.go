package run

import (
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// Events receives what a run does as it happens; internal/cli renders
// them on the terminal. Messages are whole sentences without the
// "perflab:" prefix the terminal adds. A run calls them from several
// goroutines.
type Events interface {
	// Note is a line of what the run is doing: a cell starts, a component
	// is ready, a step of a search passed.
	Note(msg string)
	// Warn is a problem the run goes on with.
	Warn(msg string)
	// Alert is news that breaks into the load's progress line: a
	// component exited, a worker failed.
	Alert(msg string)
	// LoadBegin starts the progress of a load named name, of duration d
	// at a target rate (0 when it is not one workload's).
	LoadBegin(name string, d time.Duration, rate float64)
	// LoadInterval is an interval of a workload, as it closes.
	LoadInterval(workload string, iv *stats.Interval)
	// LoadEnd ends the progress of the load.
	LoadEnd()
	// Count is how far a driver's preparation or cleanup has come.
	Count(label string, done, total int64)
	// CountEnd ends a Count: done of total when it stopped.
	CountEnd(label string, done, total int64)
}

// Discard is Events that shows nothing.
type Discard struct{}

var _ Events = Discard{}

func (Discard) Note(string)                              {}
func (Discard) Warn(string)                              {}
func (Discard) Alert(string)                             {}
func (Discard) LoadBegin(string, time.Duration, float64) {}
func (Discard) LoadInterval(string, *stats.Interval)     {}
func (Discard) LoadEnd()                                 {}
func (Discard) Count(string, int64, int64)               {}
func (Discard) CountEnd(string, int64, int64)            {}
