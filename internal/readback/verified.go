package readback

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// VerifiedFile is where a run keeps the verdicts on its sizes (perflab
// size --verify), beside the store; the confined runs are its siblings
// under VerifyDir.
const (
	VerifyDir    = "verify"
	VerifiedFile = VerifyDir + "/verified.json"
)

// SaveVerified keeps vs with the run, replacing an earlier verdict on the
// same size of the same cell.
func SaveVerified(store *results.Run, vs []analysis.Verified) error {
	old, err := readVerified(store)
	if err != nil {
		return err
	}
	for _, v := range vs {
		old = slices.DeleteFunc(old, func(o analysis.Verified) bool { return o.Cell == v.Cell && o.Size == v.Size })
		old = append(old, v)
	}
	b, err := json.MarshalIndent(old, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode the verdicts on the sizes: %w", err)
	}
	path := store.Path(VerifiedFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return os.Rename(tmp, path) // whole, or as it was
}

func readVerified(store *results.Run) ([]analysis.Verified, error) {
	b, err := os.ReadFile(store.Path(VerifiedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the verdicts on the sizes: %w", err)
	}
	var vs []analysis.Verified
	if err := json.Unmarshal(b, &vs); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", store.Path(VerifiedFile), err)
	}
	return vs, nil
}

// attachVerified gives each size of r the verdict and the limit curve
// kept on it, if any.
func attachVerified(store *results.Run, r *view.Run) error {
	if err := attachCurves(store, r); err != nil {
		return err
	}
	vs, err := readVerified(store)
	if err != nil || len(vs) == 0 {
		return err
	}
	for _, c := range r.Cells {
		if c.Insights == nil {
			continue
		}
		for i := range c.Insights.Sizes {
			t := &c.Insights.Sizes[i]
			k := slices.IndexFunc(vs, func(v analysis.Verified) bool { return v.Cell == c.Index && v.Size == t.Size })
			if k >= 0 && sameLimits(*t, vs[k]) {
				t.Verified = &vs[k]
			}
		}
	}
	return nil
}

// CurveFile is where a run keeps the limit curve of a resource
// (analysis.LimitCPU, LimitMemory) of its size in a cell.
func CurveFile(cell int, size, resource string) string {
	if resource == analysis.LimitMemory {
		return fmt.Sprintf("%s/memory-limits-%d-%s.json", VerifyDir, cell, size)
	}
	return fmt.Sprintf("%s/limits-%d-%s.json", VerifyDir, cell, size)
}

// attachCurves gives each size of r the limit curves searched from its
// limits, CPU first, if any (not those searched from other limits:
// perflab size --strategy computes other sizes).
func attachCurves(store *results.Run, r *view.Run) error {
	for _, c := range r.Cells {
		if c.Insights == nil {
			continue
		}
		for i := range c.Insights.Sizes {
			t := &c.Insights.Sizes[i]
			for _, resource := range []string{analysis.LimitCPU, analysis.LimitMemory} {
				curve, err := readCurve(store, c.Index, t.Size, resource)
				if err != nil {
					return err
				}
				if curve != nil && math.Abs(curve.SizeCPU-SizeCPU(*t)) < 1e-9 && curve.SizeMemory == SizeMemory(*t) {
					t.Curves = append(t.Curves, curve)
				}
			}
		}
	}
	return nil
}

// readCurve is a size's curve of resource as the run keeps it; nil when
// it has none.
func readCurve(store *results.Run, cell int, size, resource string) (*analysis.LimitCurve, error) {
	b, err := os.ReadFile(store.Path(CurveFile(cell, size, resource)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var curve analysis.LimitCurve
	if err == nil {
		err = json.Unmarshal(b, &curve)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the %s limit curve of size %s: %w", resource, size, err)
	}
	return &curve, nil
}

// SizeMemory is the sum of a size's components' memory limits, in bytes.
func SizeMemory(t analysis.TShirt) int64 {
	var sum int64
	for _, r := range t.Components {
		sum += r.MemoryLimit.Amount
	}
	return sum
}

// SizeCPU is the sum of a size's components' CPU limits, in cores: what a
// limit search scales.
func SizeCPU(t analysis.TShirt) float64 {
	var sum float64
	for _, r := range t.Components {
		if !r.NoCPULimit {
			sum += r.CPULimit.Value()
		}
	}
	return sum
}

// sameLimits reports whether v verified t's limits: a size computed again
// with other settings (perflab size --strategy) is another claim.
func sameLimits(t analysis.TShirt, v analysis.Verified) bool {
	for _, c := range v.Components {
		k := slices.IndexFunc(t.Components, func(r analysis.TShirtRow) bool { return r.Component == c.Component })
		if k < 0 {
			return false
		}
		r := t.Components[k]
		cpu := r.CPULimit
		if r.NoCPULimit {
			cpu = analysis.Quantity{}
		}
		if cpu.Amount != c.CPULimit.Amount || r.MemoryLimit.Amount != c.MemoryLimit.Amount {
			return false
		}
	}
	return true
}

// JudgeConfined judges size (a profile of cell) of the run orig on the
// run that made its load again inside the size's limits (confined), beside
// the same load made unconfined just before it (baseline; nil compares
// with orig's phase): analysis.JudgeVerified, fed with the load
// workload's latency of both runs, the confined phase's verdicts, its
// gates, and what the kernel counted of each component (extra: of those
// confined in a cluster, as the kubelet counted it). A baseline of the
// same hour keeps a machine that got busier since the sizing run from
// passing for a size that is too small.
func JudgeConfined(orig *view.Run, cell int, size string, baseline, confined *results.Run, tolerance float64, extra []analysis.Confined) (analysis.Verified, error) {
	v := analysis.Verified{Cell: cell, Size: size, Run: confined.Dir()}
	before, in, err := sizedPhase(orig, cell, size)
	if err != nil {
		return v, err
	}
	if baseline != nil {
		b, err := Load(baseline)
		if err != nil {
			return v, err
		}
		if before = phaseNamed(b, size); before == nil {
			return v, fmt.Errorf("the unconfined run %s has no phase %s: %s", baseline.Dir(), size, b.Message)
		}
	}
	after, err := Load(confined)
	if err != nil {
		return v, err
	}
	var phase *view.Phase
	var ac *view.Cell
	for _, c := range after.Cells {
		for _, p := range c.Phases {
			if p.Profile == size {
				phase, ac = p, c
			}
		}
	}
	if phase == nil { // a component that cannot start inside the limits: the size does not hold
		return neverLoaded(v, in, confined, after)
	}
	name := in.LoadWorkload
	b, a := summaryNamed(before.Workloads, name), summaryNamed(phase.Workloads, name)
	if b == nil || a == nil {
		return v, fmt.Errorf("workload %s is missing from the unconfined or the confined run", name)
	}
	held := analysis.JudgeHeld([]analysis.PhaseData{{Profile: size, Resources: phase.Resources, Summaries: phase.Workloads}})[0]
	held.MachineBound, held.MachineBusy = "", "" // the limits, not the machine, were the point
	samples, err := confined.Samples(ac.Index)
	if err != nil {
		return v, err
	}
	comps, err := confinedComponents(confined, ac.Index, samples, phase, before)
	if err != nil {
		return v, err
	}
	for _, x := range extra { // confined in a cluster: their CPU use and GC from the runs' samples
		sampledFigures(&x, samples[x.Component], phase, before)
		comps = append(comps, x)
	}
	out := analysis.JudgeVerified(analysis.VerifyInput{Size: size, Load: sizeLoad(in, size), BeforeLatency: b.LatencyByInterval,
		AfterLatency: a.LatencyByInterval, Held: held, HasGates: len(after.SLO) > 0, FailedGates: failedGates(after.SLO),
		Components: comps, Tolerance: tolerance, MachineBusy: busyWhy(before, phase)})
	out.Cell, out.Run, out.Achieved, out.Target = cell, confined.Dir(), a.Rate, a.Workload.TargetRate
	if why := busyWhy(before, phase); why != "" && !out.Inconclusive {
		out.Warnings = append(out.Warnings, "the machine was busy with other work during a run the verdict compares: "+why+"; the verdict may be the machine's")
	}
	return out, nil
}

// neverLoaded is the verdict on a size whose confined run ended before
// its load: the run's message, and what the kernel counted of its
// components (an OOM kill as it started).
func neverLoaded(v analysis.Verified, in *analysis.Insights, confined *results.Run, after *view.Run) (analysis.Verified, error) {
	v.Load = sizeLoad(in, v.Size)
	if len(after.Cells) == 0 {
		return v, fmt.Errorf("the confined run %s ended before it started a cell: %s", confined.Dir(), after.Message)
	}
	samples, err := confined.Samples(after.Cells[0].Index)
	if err != nil {
		return v, err
	}
	comps, err := confinedComponents(confined, after.Cells[0].Index, samples, &view.Phase{}, &view.Phase{})
	if err != nil {
		return v, err
	}
	v.Components = comps
	v.Reasons = append(v.Reasons, "the load never ran inside the limits: "+after.Message)
	for _, c := range comps {
		if c.OOMKills > 0 {
			v.Reasons = append(v.Reasons, fmt.Sprintf("component %s was OOM-killed (%d kills) under its %s memory limit", c.Component, c.OOMKills, c.MemoryLimit))
		}
	}
	return v, nil
}

// busyWhy is why the machine was busy during either phase; "" when it
// was not.
func busyWhy(phases ...*view.Phase) string {
	for _, p := range phases {
		if p.Resources != nil && p.Resources.MachineBusy {
			return p.Resources.BusyWhy
		}
	}
	return ""
}

// phaseNamed is r's phase of profile name; nil when it has none.
func phaseNamed(r *view.Run, name string) *view.Phase {
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			if p.Profile == name {
				return p
			}
		}
	}
	return nil
}

// sizedPhase is the phase of orig's cell that size was sized from, and
// the cell's insights.
func sizedPhase(orig *view.Run, cell int, size string) (*view.Phase, *analysis.Insights, error) {
	for _, c := range orig.Cells {
		if c.Index != cell || c.Insights == nil {
			continue
		}
		for _, p := range c.Phases {
			if p.Profile == size {
				return p, c.Insights, nil
			}
		}
	}
	return nil, nil, fmt.Errorf("the run has no size %s in cell %d", size, cell)
}

func summaryNamed(sums []*analysis.Summary, display string) *analysis.Summary {
	for _, s := range sums {
		if s.Workload.DisplayName() == display || s.Workload.Short == display {
			return s
		}
	}
	return nil
}

// sizeLoad is the load size was sized at, as the sizes table says it.
func sizeLoad(in *analysis.Insights, size string) string {
	for _, t := range in.Sizes {
		if t.Size == size {
			return t.Load
		}
	}
	return ""
}

// failedGates are the gates that failed, in words.
func failedGates(gates []view.Gate) []string {
	var out []string
	for _, g := range gates {
		if g.State != analysis.GatePass {
			out = append(out, fmt.Sprintf("SLO gate %s on workload %s: %s (%s)", g.Expr, g.Workload, g.Measured, g.State))
		}
	}
	return out
}

// confinedComponents reads what the kernel counted of each component of
// the confined run (the samples of its cell it recorded as it stopped
// them), how each ended, and what its samples say (sampledFigures).
func confinedComponents(store *results.Run, cell int, samples map[string]map[string][]results.TimePoint, phase, before *view.Phase) ([]analysis.Confined, error) {
	stored, err := store.Components(cell)
	if err != nil {
		return nil, err
	}
	var out []analysis.Confined
	for _, comp := range stored {
		s := samples[comp.Name]
		last := func(m string) float64 {
			if ps := s[m]; len(ps) > 0 {
				return ps[len(ps)-1].V
			}
			return -1
		}
		if last(observe.ConfinedPeriods) < 0 {
			continue // not confined: attached, or read from Prometheus
		}
		x := analysis.Confined{Component: comp.Name, Periods: uint64(last(observe.ConfinedPeriods)),
			Throttled: uint64(last(observe.ConfinedThrottled)), Stalled: time.Duration(max(last(observe.ConfinedStalledSeconds), 0) * float64(time.Second)),
			MemoryPeak: int64(last(observe.ConfinedMemoryPeakBytes)), OOMKills: uint64(max(last(observe.ConfinedOOMKills), 0)),
			Ended: comp.ExitText}
		if cpu := last(observe.ConfinedCPULimit); cpu > 0 {
			x.CPULimit = analysis.Quantity{Resource: analysis.ResourceCPU, Amount: int64(cpu*1000 + 0.5)}
		}
		if mem := last(observe.ConfinedMemoryLimit); mem > 0 {
			x.MemoryLimit = analysis.Quantity{Resource: analysis.ResourceMemory, Amount: int64(mem)}
		}
		sampledFigures(&x, s, phase, before)
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b analysis.Confined) int { return strings.Compare(a.Component, b.Component) })
	return out, nil
}

// gcRate is a component's GC per minute (P99) over a phase; 0 when it
// reports none.
func gcRate(p *view.Phase, component string) float64 {
	return componentStat(p, component, observe.GCPerMin).P99
}

// sampledFigures sets what the samples of x's component say of it: its
// GC rate in the confined phase and the unconfined one (before), and its
// CPU used in the confined phase: its CPU time over the window the
// achieved rate is of (analysis.RateOver, from its series), else the mean
// of its samples.
func sampledFigures(x *analysis.Confined, series map[string][]results.TimePoint, phase, before *view.Phase) {
	x.GCPerMin, x.GCPerMinBefore = gcRate(phase, x.Component), gcRate(before, x.Component)
	cpu, ok := analysis.RateOver(analysisPoints(series[observe.CPUCores]), phase.Window)
	if !ok {
		cpu = componentStat(phase, x.Component, observe.CPUCores).Avg
	}
	x.CPUUsed = cpu
}

// componentStat is a component's figures of metric over a phase; zero
// when it has none.
func componentStat(p *view.Phase, component, metric string) analysis.Stat {
	if p.Resources == nil {
		return analysis.Stat{}
	}
	for _, c := range p.Resources.Components {
		if c.Name == component {
			return c.Metrics[metric]
		}
	}
	return analysis.Stat{}
}
