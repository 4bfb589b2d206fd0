package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/units"
)

// The one rule by which perflab says a phase was machine-bound: the
// machine, not the load asked for, set the figures. The generator and the
// components perflab started share one machine; when together they
// reach MachineLimit of its cores, or of its memory, none of them may
// have been the limit alone, yet each was held back by the others (a
// target at 1.45 of 2 cores and a generator at 0.55 are each far from
// their own limit, and both are at the machine's).
//
// Which components count: those of kind "run" (processes perflab started,
// so on this machine) and the generator. Attached components (kind
// "attach") may run anywhere, and components read from Prometheus run
// elsewhere: they are left out, so an attached process on this machine
// can make the verdict missed, never made wrongly.
//
// The figures: CPU is the P99 of the summed series of their CPU, against
// the cores the generator could use (its cores_available samples, else
// GOMAXPROCS); memory the P99 of their summed memory against the
// machine's (the generator's machine_memory_bytes samples: MemTotal).
// Each component's share is named as its value at the sample time whose
// sum is that P99, so the parts add up to it. A sum above
// MachineOverLimit of the total shows that the processes had more than
// that: the generator's cores are then not the machine's (GOMAXPROCS set
// lower, or the generator in a cgroup of its own), and no verdict is
// made from them.

// MachineLimit is the share of the machine's cores or memory at which the
// generator and the components perflab started, together, make a phase
// machine-bound.
const MachineLimit = 0.9

// MachineOverLimit is the share of the machine's cores or memory above
// which a sum shows the total was not the machine's.
const MachineOverLimit = 1.25

// judgeMachine marks the phase machine-bound by the rule above, from the
// windowed series of every component.
func (r *Resources) judgeMachine(windowed map[string]map[string][]Point) {
	gen := slices.IndexFunc(r.Components, func(c ComponentResources) bool { return c.Kind == KindGenerator })
	if gen < 0 {
		return
	}
	g := r.Components[gen]
	r.judgeBusy(windowed, g)
	memTotal := g.Metrics[observe.MachineMemoryBytes].Max
	names := []string{"generator"} // named first, as the reasons give it
	cpu, mem := [][]Point{windowed[g.Name][g.CPUMetric]}, [][]Point{windowed[g.Name][g.MemoryMetric]}
	for _, c := range r.Components {
		if c.Kind == "run" {
			names = append(names, c.Name)
			cpu = append(cpu, windowed[c.Name][c.CPUMetric])
			mem = append(mem, windowed[c.Name][c.MemoryMetric])
		}
	}
	if len(names) == 1 {
		return // the generator alone: the client-bound rule's
	}
	var whys []string
	cores := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	if why := machineShare(names, cpu, r.CoresAvailable, cores, fmt.Sprintf("%.3g cores", r.CoresAvailable), "CPU"); why != "" {
		whys = append(whys, why)
	}
	if why := machineShare(names, mem, memTotal, units.FormatBytes, "the machine's "+units.FormatBytes(memTotal), "memory"); why != "" {
		whys = append(whys, why)
	}
	if len(whys) == 0 {
		return
	}
	r.MachineBound, r.MachineWhy = true, strings.Join(whys, "; ")
	r.warn("%s%s; %s", machineBoundPrefix, r.MachineWhy, MachineAdvice)
}

// machineBoundPrefix begins the warning of a machine-bound phase.
const machineBoundPrefix = "machine-bound: "

// MachineAdvice is what a machine-bound phase tells its reader to do.
const MachineAdvice = "the generator and the components it started shared this machine and filled it together, so the figures are the machine's, not the system's: " +
	"run the generator on another machine (perflab run --workers with workers elsewhere, see Distributed runs)"

// machineAdviceShort is MachineAdvice where the verdict is already said.
const machineAdviceShort = "the generator belongs on another machine (perflab run --workers with workers elsewhere)"

// machineShare is the reason the summed series reached MachineLimit of
// total, which of names ("perflab 0.55 + minio 1.45 = 2.00 of 2 cores (≥
// 90 %, the P99 of their summed CPU)"), or "" when it did not, when total
// is unknown, or when a series is missing or the sum has too few samples
// for a P99.
func machineShare(names []string, series [][]Point, total float64, format func(float64) string, of, what string) string {
	if total <= 0 || slices.ContainsFunc(series, func(ps []Point) bool { return len(ps) == 0 }) {
		return ""
	}
	sum := sumSeries(series)
	st := StatOf(sum.values)
	if !st.HasP99() || st.P99 < MachineLimit*total || st.P99 > MachineOverLimit*total {
		return ""
	}
	at := slices.Index(sum.values, st.P99)
	var parts []string
	for i, name := range names {
		parts = append(parts, name+" "+format(sum.parts[at][i]))
	}
	return fmt.Sprintf("%s = %s of %s (≥ %.0f %%; the P99 of their summed %s, split at that sample)", strings.Join(parts, " + "), format(st.P99), of, 100*MachineLimit, what)
}
