package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/internal/view"
)

// The limit search (perflab size --search-limits): how far a size's CPU
// limits may shrink, or must grow, for it to hold at its profile's rate.
// Each step is a confined run of the profile with every CPU limit of the
// size scaled by one factor (memory as the size has it): from 1, down by
// bisection when the size holds, else up by doubling until one holds and
// then by bisection, 7 runs in all at most. The steps are the
// limit-response curve: at each CPU limit, whether it held, the achieved
// rate, the p99 and how often the quota throttled.
const (
	limitRuns      = 7
	limitDoublings = 3 // up to 8 × the size's CPU
)

// searchLimits runs the limit search of every size asked for, keeps each
// curve in the run's verify/ directory and prints it.
func (e *env) searchLimits(ctx context.Context, store *results.Run, r *view.Run, f verifyFlags) error {
	file, sizes, err := rerunnable(store, r, f.size)
	if err != nil {
		return err
	}
	var failures []string
	for _, s := range sizes {
		c, err := e.searchOne(ctx, store, r, file, s, f)
		if err != nil {
			failures = append(failures, fmt.Sprintf("size %s: %v", s.t.Size, err))
			continue
		}
		writeCurve(e.stdout, c, s.t)
		if err := saveCurve(store, c); err != nil {
			return &runError{err: err, code: ExitFailed}
		}
	}
	if err := rewriteReports(store); err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	if len(failures) > 0 {
		return &runError{err: errors.New("cannot search the limits: " + fmt.Sprint(failures)), code: ExitFailed}
	}
	return nil
}

// searchOne is one size's search.
func (e *env) searchOne(ctx context.Context, store *results.Run, r *view.Run, file string, s aSize, f verifyFlags) (analysis.LimitCurve, error) {
	cpu := readback.SizeCPU(s.t)
	c := analysis.LimitCurve{Cell: s.cell.Index, Size: s.t.Size, Load: s.t.Load, SizeCPU: cpu}
	if cpu <= 0 {
		return c, errors.New("the size has no CPU limit to search from")
	}
	baseline, stopped := "", false
	// probe runs one step; ok is whether it held. A step that could not
	// be verified (the machine too busy) ends the search: its bounds would
	// rest on a run that says nothing of the limit.
	probe := func(scale float64) (ok bool, err error) {
		s.cpuScale = scale
		v, base, err := e.verifyOne(ctx, store, r, file, s, f, baseline)
		if err != nil {
			return false, err
		}
		baseline = base // one unconfined run for every step
		c.Points = append(c.Points, pointOf(scale, cpu, v))
		stopped = v.Inconclusive
		return v.Holds, nil
	}
	lo, hi := 0.0, 0.0 // the largest scale that failed, the smallest that held
	holds, err := probe(1)
	if err != nil {
		return c, err
	}
	if holds {
		hi = 1
	} else {
		lo = 1
		for k := 0; k < limitDoublings && hi == 0 && !stopped && ctx.Err() == nil; k++ {
			scale := lo * 2
			if holds, err = probe(scale); err != nil {
				return c, err
			}
			if holds {
				hi = scale
			} else {
				lo = scale
			}
		}
	}
	for len(c.Points) < limitRuns && hi > 0 && !stopped && ctx.Err() == nil {
		mid := (lo + hi) / 2
		if holds, err = probe(mid); err != nil {
			return c, err
		}
		if holds {
			hi = mid
		} else {
			lo = mid
		}
	}
	c.Smallest, c.Stopped = hi, stopped
	return c, nil
}

func pointOf(scale, cpu float64, v analysis.Verified) analysis.LimitPoint {
	p := analysis.LimitPoint{Scale: scale, CPU: scale * cpu, Holds: v.Holds, Inconclusive: v.Inconclusive, Achieved: v.Achieved, Why: v.Reasons, Warnings: v.Warnings}
	if len(v.Latency) == 2 {
		p.P99Ms = v.Latency[1].ConfinedMs
	}
	for _, c := range v.Components {
		p.Throttled = max(p.Throttled, c.ThrottledShare())
	}
	return p
}

// writeCurve prints a size's limit-response curve, by CPU limit.
func writeCurve(w io.Writer, c analysis.LimitCurve, t analysis.TShirt) {
	fmt.Fprintf(w, "size %s at %s: CPU limit against the load (the size: %.3g cores)\n", c.Size, c.Load, readback.SizeCPU(t))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CPU LIMIT\tVERDICT\tACHIEVED\tP99\tTHROTTLED")
	for _, p := range c.ByCPU() {
		verdict := p.Verdict()
		fmt.Fprintf(tw, "%s cores\t%s\t%s/s\t%s ms\t%.0f %%\n", units.Sig3(p.CPU), verdict, units.Sig3(p.Achieved), units.Sig3(p.P99Ms), 100*p.Throttled)
	}
	tw.Flush()
	for _, p := range c.ByCPU() {
		if len(p.Why) > 0 {
			fmt.Fprintf(w, "  at %.3g cores: %s\n", p.CPU, p.Why[0])
		}
		if len(p.Warnings) > 0 {
			fmt.Fprintf(w, "  at %.3g cores: warning: %s\n", p.CPU, p.Warnings[0])
		}
	}
	if c.Stopped {
		fmt.Fprintln(w, "the search stopped at a step it could not verify: the machine was too busy (see the warnings); run it again on a quiet machine")
	}
	if c.Smallest > 0 {
		fmt.Fprintf(w, "smallest CPU that holds: %.3g cores (%.3g × the size's)\n", c.Smallest*readback.SizeCPU(t), c.Smallest)
	} else if !c.Stopped {
		fmt.Fprintf(w, "no CPU limit up to %d × the size's holds: the limit is elsewhere (memory, the load itself)\n", 1<<limitDoublings)
	}
}

// saveCurve keeps a size's curve in the run's verify/ directory.
func saveCurve(store *results.Run, c analysis.LimitCurve) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	path := store.Path(readback.CurveFile(c.Cell, c.Size))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
