package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/plan"
)

// unshaped reports whether a workload gives no rate, concurrency or
// stages: it runs at the rate its driver implies, if its driver implies
// one.
func unshaped(w plan.Workload) bool {
	return w.Model == plan.Open && w.Rate.IsZero() && len(w.Stages) == 0
}

// byteRated reports whether a workload's rates are byte rates.
func byteRated(w plan.Workload) bool {
	if w.Rate.IsBytes() || w.StartRate.IsBytes() {
		return true
	}
	return slices.ContainsFunc(w.Stages, func(s plan.Stage) bool { return s.Rate.IsBytes() })
}

// provisional is the workload and payload size to check a schedule with
// before the driver is built: without a rate, at a stand-in 1/s when the
// driver implies a rate of its own; a byte rate of a driver that measures
// its payload when built, over a stand-in 1 byte. The real figures replace
// them when the phase starts (settleRate).
func provisional(w plan.Workload, spec registry.Spec) (plan.Workload, float64, error) {
	opBytes := float64(spec.OpBytes)
	if spec.Measured != nil {
		opBytes = 1
	}
	if !unshaped(w) {
		return w, opBytes, nil
	}
	if !spec.ImpliesRate && !spec.Timed {
		return w, 0, fmt.Errorf("workload %q needs rate (open model), concurrency (closed model) or stages: "+
			"the %s driver implies no rate of its own", w.Name, w.Driver)
	}
	w.Rate = plan.Rate{PerSecond: 1}
	return w, opBytes, nil
}

// checkNeeds checks, in one profile, that every workload that needs
// another (ids_from) names a workload of the profile of the kind it needs.
// ws are the profile's workloads in plan order, zero where they had
// problems of their own.
func checkNeeds(p *plan.Plan, pr plan.Profile, ws []Workload) []error {
	var errs []error
	for _, w := range ws {
		need := w.Spec.Needs
		if need == nil {
			continue
		}
		i := slices.IndexFunc(pr.Workloads, func(o plan.Workload) bool { return o.Name == need.Name })
		if i < 0 {
			var names []string
			for _, o := range pr.Workloads {
				names = append(names, o.Name)
			}
			errs = append(errs, plan.ErrorAt(p.File, need.At, "params: ids_from: profile %s has no workload %q (it has %s)",
				pr.Name, need.Name, strings.Join(names, ", ")))
			continue
		}
		kind, drv := ws[i].Spec.Kind, pr.Workloads[i].Driver
		if ws[i].Spec.New == nil && strings.HasPrefix(need.Kind, drv+" ") {
			continue // the same driver, with problems of its own: they are reported
		}
		if kind != need.Kind {
			if kind == "" {
				kind = drv
			}
			errs = append(errs, plan.ErrorAt(p.File, need.At, "params: ids_from: workload %q (%s) is not an %s workload",
				need.Name, kind, need.Kind))
		}
	}
	return errs
}
