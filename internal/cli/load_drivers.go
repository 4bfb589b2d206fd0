package cli

import (
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
)

// loadDriverNotes reads what the drivers told (facts and read-back
// checks) into the phases of the workloads they are about.
func loadDriverNotes(store *results.Run, r *report.Run) error {
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
				n := &report.DriverNotes{}
				for _, f := range fs {
					n.Facts = append(n.Facts, report.Fact{Name: f.Name, Value: f.Value})
				}
				for _, ch := range cs {
					n.Checks = append(n.Checks, report.Check{Name: ch.Name, Expected: ch.Expected, Found: ch.Found,
						Unit: ch.Unit, Lost: ch.Lost, Note: ch.Note})
				}
				if p.Drivers == nil {
					p.Drivers = map[string]*report.DriverNotes{}
				}
				p.Drivers[name] = n
			}
		}
	}
	return nil
}
