package analysis

import (
	"fmt"
	"slices"

	"github.com/perflab/perflab/internal/observe"
)

// The rule by which perflab says a phase ran on a busy machine: processes
// other than perflab and the components it watches on this machine took
// CPU the system under test might have had. The machine-bound rule
// (machinebound.go) counts only perflab and what it started; when other
// work kept the machine full (a CI runner's other jobs, a neighbour on the
// same VM host, whose time shows as steal), the figures were sized as if
// the system had had the machine to itself.
//
// The figures, from the generator's samples of /proc/stat: the machine's
// CPU (busy and stolen, in cores) at each sample time, less the CPU of the
// generator and of every component on this machine (kinds run and attach)
// at the same time, is the others' share. A phase is machine-busy when, at
// the median of its samples, the machine was at MachineLimit of its
// cores or more, and the others had MachineOthersLimit of them or more.
// A machine that is full of the system's own work is not busy by this
// rule: that is machine-bound's, or the system's capacity.

// MachineOthersLimit is the share of the machine's cores that others than
// perflab and its components must take, with the machine full, for a
// phase to be machine-busy.
const MachineOthersLimit = 0.2

// judgeBusy marks the phase machine-busy by the rule above.
func (r *Resources) judgeBusy(windowed map[string]map[string][]Point, gen ComponentResources) {
	machine := windowed[gen.Name]
	cores := gen.Metrics[observe.MachineCores].Max
	if cores <= 0 || len(machine[observe.MachineBusyCores]) == 0 {
		return // a run stored before perflab sampled the machine
	}
	series := [][]Point{machine[observe.MachineBusyCores], machine[observe.MachineStealCores], windowed[gen.Name][gen.CPUMetric]}
	for _, c := range r.Components {
		if c.Kind == "run" || c.Kind == "attach" {
			series = append(series, windowed[c.Name][c.CPUMetric])
		}
	}
	if slices.ContainsFunc(series, func(ps []Point) bool { return len(ps) == 0 }) {
		return
	}
	sum := sumSeries(series)
	var full, others []float64
	for _, p := range sum.parts {
		full = append(full, p[0]+p[1])
		others = append(others, max(p[0]+p[1]-sumOf(p[2:]), 0))
	}
	fullAt, othersAt := median(full), median(others)
	if len(full) == 0 || fullAt < MachineLimit*cores || othersAt < MachineOthersLimit*cores {
		return
	}
	runnable := StatOf(values(machine[observe.MachineRunnable])).Avg
	r.MachineBusy = true
	r.BusyWhy = fmt.Sprintf("others than perflab and its components used %.2f of %.3g cores while the machine was %.2f busy "+
		"(medians over %d samples; stolen by the hypervisor %.2f; %.1f tasks runnable on average)",
		othersAt, cores, fullAt, len(full), median(column(sum.parts, 1)), runnable)
	r.warn("%s%s; %s", machineBusyPrefix, r.BusyWhy, MachineBusyAdvice)
}

// machineBusyPrefix begins the warning of a machine-busy phase.
const machineBusyPrefix = "machine-busy: "

// MachineBusyAdvice is what a machine-busy phase tells its reader to do.
const MachineBusyAdvice = "the system under test shared the machine's CPUs with other work, so its figures are of a system that did not have them: " +
	"run again on a machine (or at a time) without that work"

func sumOf(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s
}

func column(rows [][]float64, i int) []float64 {
	out := make([]float64, len(rows))
	for k, r := range rows {
		out[k] = r[i]
	}
	return out
}

// median is the nearest-rank median of vs (vs is not modified); 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
