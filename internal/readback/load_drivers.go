package readback

import (
	"strconv"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// loadDriverNotes reads what the drivers told (facts and read-back
// checks) into the phases of the workloads they are about.
func loadDriverNotes(store *results.Run, r *view.Run) error {
	facts, err := store.Facts()
	if err != nil {
		return err
	}
	checks, err := store.Checks()
	if err != nil {
		return err
	}
	if len(facts) == 0 && len(checks) == 0 {
		return nil
	}
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			for _, s := range p.Workloads {
				name := s.Workload.Name
				fs, cs := facts[name], checks[name]
				if len(fs) == 0 && len(cs) == 0 {
					continue
				}
				if p.Drivers == nil {
					p.Drivers = map[string]*view.DriverNotes{}
				}
				p.Drivers[name] = &view.DriverNotes{Facts: fs, Checks: cs}
				judgeLink(s, fs)
			}
		}
	}
	return nil
}

// judgeLink marks a workload link-bound when its driver said which
// throughput would be (the s3 driver does, given a `link`).
func judgeLink(s *analysis.Summary, facts []driver.Fact) {
	var bound float64
	var link string
	for _, f := range facts {
		switch f.Name {
		case "link_bound_bytes_per_second":
			bound, _ = strconv.ParseFloat(f.Value, 64)
		case "link":
			link = f.Value
		}
	}
	analysis.JudgeLink(s, bound, link)
}
