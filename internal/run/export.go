package run

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/perflab/perflab/internal/export"
	"github.com/perflab/perflab/internal/results"
)

// EventExport is the kind of the event that says what an export sent.
const EventExport = "export"

// ExportCloseTimeout bounds the time the end of a run waits for its
// exports to send what is queued.
const ExportCloseTimeout = 10 * time.Second

// startExport starts the job's exports, labelled with the run directory's
// name; nil when it has none. A target's first failure is shown once; the
// run goes on.
func (r *runner) startExport() error {
	if len(r.job.Export) == 0 {
		return nil
	}
	set, err := export.Start(r.job.Export, export.Options{Run: filepath.Base(r.rec.Store.Dir()), Scrub: r.scrub,
		OnError: func(t export.Target, err error) {
			r.events.Warn(fmt.Sprintf("cannot export to %s: %v; the run goes on, and its report counts the failures", t.Shown(), err))
		}})
	if err != nil {
		return failed(err, "check the --export URL or the plan's export block")
	}
	r.exp = set
	for _, t := range r.job.Export {
		r.rec.note(fmt.Sprintf("exporting live to %s (%s)", t.Shown(), t.Kind))
	}
	return nil
}

// closeExport sends what the exports hold and records, as an event of
// kind "export" that report.md shows, what each sent and what failed.
func (r *runner) closeExport() {
	for _, rep := range r.exp.Close(ExportCloseTimeout) {
		r.rec.Event(EventExport, rep.String())
		if rep.OK() {
			r.events.Note(rep.String())
		} else {
			r.events.Warn(rep.String())
		}
	}
}

// exportWorkload is how the series of the phase's workload named name
// are labelled: its cell, profile and short name.
func (p *PhaseRun) exportWorkload(name string) export.Workload {
	w := export.Workload{Cell: p.Cell.Name, Profile: p.Profile.Name, Name: name}
	for _, pw := range p.Workloads {
		if pw.Eng.Name == name && pw.Desc.Short != "" {
			w.Name = pw.Desc.Short
		}
	}
	return w
}

// exportSamples exports the samples of cell taken at t.
func (r *runner) exportSamples(cell int, t time.Time, byComponent map[string][]results.Sample) {
	if r.exp == nil {
		return
	}
	out := make(map[string][]export.Sample, len(byComponent))
	for name, ss := range byComponent {
		for _, s := range ss {
			out[name] = append(out[name], export.Sample{Metric: s.Metric, Value: s.Value})
		}
	}
	name := ""
	if cell >= 0 && cell < len(r.cellNames) {
		name = r.cellNames[cell]
	}
	r.exp.Samples(name, t, out)
}
