package view

import "github.com/perflab/perflab/internal/driver"

// DriverNotes is what a workload's driver told about it: facts, and the
// read-back checks it made after its profile's load.
type DriverNotes struct {
	Facts  []driver.Fact
	Checks []driver.Check
}

// LostChecks is every check of the run that lost data, by workload name,
// in the order of the cells and phases.
func (r *Run) LostChecks() (workloads []string, checks [][]driver.Check) {
	return r.ChecksIn(driver.CheckLost)
}

// ChecksIn is every check of the run in state, by workload name, in the
// order of the cells and phases.
func (r *Run) ChecksIn(state string) (workloads []string, checks [][]driver.Check) {
	for _, c := range r.AllCells() {
		for _, p := range c.Phases {
			for _, s := range p.Workloads {
				var in []driver.Check
				for _, ch := range p.Drivers[s.Workload.Name].checks() {
					if ch.State == state {
						in = append(in, ch)
					}
				}
				if len(in) > 0 {
					workloads, checks = append(workloads, s.Workload.Name), append(checks, in)
				}
			}
		}
	}
	return workloads, checks
}

// checks are n's checks; none when the driver told nothing (n is nil).
func (n *DriverNotes) checks() []driver.Check {
	if n == nil {
		return nil
	}
	return n.Checks
}
