package run

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/units"
)

// buildDrivers builds each workload's driver, those other workloads need
// (ids_from) first; settles the schedules that need the built driver; and
// records the workloads, with the facts of any rate derived, in plan
// order. On error it returns the workloads with what was built, for the
// caller to close.
func (r *runner) buildDrivers(ph Phase) ([]Workload, error) {
	ws := slices.Clone(ph.Workloads)
	if err := BuildAll(ws); err != nil {
		return ws, err
	}
	for i := range ws {
		w := &ws[i]
		facts, line, err := SettleRate(w)
		if err != nil {
			return ws, fmt.Errorf("workload %s: %w", w.Desc.Short, err)
		}
		w.Desc.Place = registry.PlaceKeys(w.Desc.Driver) // what a comparison read later knows of the driver
		if err := r.rec.Store.AddWorkload(w.Desc); err != nil {
			r.rec.Fail(err)
			return ws, err
		}
		r.rec.Facts(w.Desc.Name, facts)
		if line != "" {
			r.events.Note(fmt.Sprintf("workload %s: %s", w.Desc.Name, line))
		}
	}
	return ws, nil
}

// BuildAll builds every workload's driver, those other workloads need
// (ids_from) first. On error the drivers built are in ws, to close.
func BuildAll(ws []Workload) error {
	for _, independent := range []bool{true, false} {
		for i := range ws {
			if (ws[i].Spec.Needs == nil) != independent {
				continue
			}
			if err := buildDriver(ws, i); err != nil {
				return fmt.Errorf("workload %s: %w", ws[i].Desc.Short, err)
			}
		}
	}
	return nil
}

// buildDriver builds the driver of ws[i], from the driver of the workload
// it needs when it needs one (built already).
func buildDriver(ws []Workload, i int) error {
	w := &ws[i]
	need := w.Spec.Needs
	if need == nil {
		d, err := w.Spec.New()
		if err != nil {
			return err
		}
		w.Eng.Driver = d
		return nil
	}
	j := slices.IndexFunc(ws, func(o Workload) bool { return o.Desc.Short == need.Name })
	if j < 0 || ws[j].Eng.Driver == nil || ws[j].Spec.Kind != need.Kind {
		return fmt.Errorf("ids_from: no %s workload %q in the profile", need.Kind, need.Name)
	}
	d, err := need.Build(ws[j].Eng.Driver)
	if err != nil {
		return err
	}
	w.Eng.Driver = d
	return nil
}

// SettleRate sets the schedule of a workload whose rate depends on its
// built driver: a workload without a rate runs at the rate a driver.Rater
// implies; a byte rate is divided by the payload the driver measured. It
// keeps what it decided in w.Resolved, for the workers of a distributed
// run, and returns the facts that say so and a line for the terminal.
func SettleRate(w *Workload) ([]driver.Fact, string, error) {
	switch {
	case unshaped(w.Plan) && w.Spec.Timed:
		return settleArrivals(w)
	case unshaped(w.Plan) && w.Spec.ImpliesRate:
		rater, ok := w.Eng.Driver.(driver.Rater)
		if !ok {
			return nil, "", fmt.Errorf("the %s driver implies no rate: give rate, concurrency or stages", w.Desc.Driver)
		}
		rps := rater.RequestsPerSecond()
		if !(rps > 0) || math.IsInf(rps, 0) {
			return nil, "", fmt.Errorf("the %s driver implies a rate of %v requests/s: give rate, concurrency or stages", w.Desc.Driver, rps)
		}
		sw := w.Plan
		sw.Rate = plan.Rate{PerSecond: rps}
		if err := Schedule(sw, w.Length, 0, &w.Eng, &w.Desc); err != nil {
			return nil, "", err
		}
		w.Resolved.Rate = rps
		text := figure(rps) + " requests/s, the " + w.Desc.Driver + " driver's own: the plan sets no rate"
		return []driver.Fact{{Name: "rate (from the driver)", Value: text}}, "open-model rate " + text, nil
	case w.Spec.Measured != nil && byteRated(w.Plan):
		m := w.Spec.Measured
		b := m.Bytes(w.Eng.Driver)
		if !(b > 0) || math.IsInf(b, 0) {
			return nil, "", fmt.Errorf("cannot turn a byte rate into requests: the driver measured %v bytes per request", b)
		}
		if err := Schedule(w.Plan, w.Length, b, &w.Eng, &w.Desc); err != nil {
			return nil, "", err
		}
		w.Resolved.OpBytes = b
		return byteRateFacts(w.Plan, b, m)
	}
	return nil, "", nil
}

// settleArrivals sets the schedule of a workload that replays its
// driver's timed trace: its arrivals, those within the profile's
// duration.
func settleArrivals(w *Workload) ([]driver.Fact, string, error) {
	timed, ok := w.Eng.Driver.(driver.Timed)
	if !ok || len(timed.Arrivals()) == 0 {
		return nil, "", fmt.Errorf("the %s driver replays no trace: give rate, concurrency or stages", w.Desc.Driver)
	}
	if err := Schedule(w.Plan, w.Length, 0, &w.Eng, &w.Desc); err != nil { // the VUs and grace, at no rate yet
		return nil, "", err
	}
	all := timed.Arrivals()
	w.Eng.Rate = pacer.Arrivals(all, w.Length)
	w.Desc.Rate = w.Eng.Rate.Start
	n := w.Eng.Rate.Total()
	text := fmt.Sprintf("%d of the trace's %d requests, at its timing, %s/s on average over %v", n, len(all), figure(w.Desc.Rate), w.Length)
	if n < uint64(len(all)) {
		text += fmt.Sprintf("; the %d due after the profile's duration are not sent", uint64(len(all))-n)
	}
	return []driver.Fact{{Name: "arrivals (from the trace)", Value: text}}, "replays " + text, nil
}

// byteRateFacts states how a workload's byte rates became request and
// item rates: the rate asked, the measured payload, the rates derived.
func byteRateFacts(w plan.Workload, opBytes float64, m *registry.Measured) ([]driver.Fact, string, error) {
	rates := []plan.Rate{w.Rate}
	if len(w.Stages) > 0 {
		rates = []plan.Rate{w.StartRate}
		for _, s := range w.Stages {
			rates = append(rates, s.Rate)
		}
	}
	var asked, reqs, items []string
	for _, r := range rates {
		ops := r.BytesPerSecond / opBytes
		asked = append(asked, r.String())
		reqs = append(reqs, figure(ops))
		items = append(items, figure(ops*float64(m.PerOp)))
	}
	if asked[0] == "" {
		asked[0] = "0/s"
	}
	sep := " → "
	per := fmt.Sprintf("%s (%.0f B): %d per request × %.0f B, the mean %s size measured", units.FormatBytes(opBytes), opBytes,
		m.PerOp, opBytes/float64(m.PerOp), m.Item)
	facts := []driver.Fact{
		{Name: "byte rate (plan)", Value: strings.Join(asked, sep)},
		{Name: "bytes per request", Value: per},
		{Name: "requests/s (derived)", Value: strings.Join(reqs, sep)},
		{Name: m.Item + "s/s (derived)", Value: strings.Join(items, sep)},
	}
	line := fmt.Sprintf("%s ÷ %s per request = %s requests/s, %s %ss/s", strings.Join(asked, sep), units.FormatBytes(opBytes),
		strings.Join(reqs, sep), strings.Join(items, sep), m.Item)
	return facts, line, nil
}

// figure formats a derived rate with about four significant digits.
func figure(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
