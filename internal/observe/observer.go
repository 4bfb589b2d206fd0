package observe

// Observer is a kind of source a component of the system under test may
// have. It declares the metrics its sources sample, so that analysis and
// the reports can show them without knowing it, and makes the source of a
// component. Observers are listed in package observers; the process tree,
// cgroup and /metrics sources, whose metrics feed the CPU, memory and Go
// runtime tables, are wired by the run itself.
type Observer interface {
	Metrics() []Metric
	// Source is c's source, or nil when c has nothing for it to sample.
	Source(c Component) Source
}

// Component is what an observer may make a source of: a component that
// perflab samples on this machine (not one read from Prometheus only).
type Component struct {
	Name     string
	PID      int      // its root process
	DataDirs []string // the directories the plan lists as its data
}

// Metric declares a metric an observer samples: what a report needs to
// show it.
type Metric struct {
	Name string // as stored, e.g. "disk_bytes"
	Kind Kind   // which figures of the window a report gives
	Unit string // Bytes, Cores or Number: how a report writes its values
	// Title heads its table in Markdown and HTML, e.g. "Disk". Label, for
	// a Level, says what its last value is: "Used" heads the column "Used
	// at the end of the window".
	Title, Label string
	// Column is its column in the terminal's compact resource table, e.g.
	// "queue p99"; "" leaves it out, to keep that table narrow.
	Column string
	// Compare is its word when two sides or two runs are compared, e.g.
	// "disk" ("B uses x1.7 less disk"); "" leaves it out of comparisons.
	// A comparison is of the values as sampled, so a Counter has none.
	Compare string
}

// Kind is what a metric's values are, which decides the figures of a
// window that a report gives.
type Kind int

const (
	// Gauge is a value as sampled: its P99, Max and Avg.
	Gauge Kind = iota
	// Counter is a cumulative count that only grows (but for a restart):
	// the P99, Max and Avg of its rate per second between samples.
	Counter
	// Level is an amount that builds up over a run, such as the space a
	// component's data takes: its last value in the window and its Max.
	Level
)

// The units a Metric may be written in.
const (
	Bytes  = "bytes"
	Cores  = "cores"
	Number = "" // a count, or any other number: three significant digits
)
