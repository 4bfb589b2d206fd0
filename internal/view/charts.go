package view

// Chart is one chart of a phase: an SVG document, as report draws it.
type Chart struct {
	ID    string // unique in the run, a file name stem: cell0-phase1-latency
	Kind  string // throughput, latency, errors, cpu, memory, spectrum
	Title string
	SVG   []byte // a standalone SVG document, with its title
}

// File is where the chart is written beside report.md.
func (c Chart) File() string { return "charts/" + c.ID + ".svg" }

// PhaseCharts are the charts of one phase.
type PhaseCharts struct {
	Cell   *Cell
	Phase  *Phase
	Label  string // "profile small in cell ballast=0", "workload http"
	Charts []Chart
}
