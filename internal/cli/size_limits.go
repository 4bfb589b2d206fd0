package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/internal/view"
)

// The limit search (perflab size --search-limits): how far a size's
// limits of one resource may shrink, or must grow, for it to hold at its
// profile's rate. Each step is a confined run of the profile with every
// limit of that resource scaled by one factor, the other resource
// unconfined: from 1, down by bisection when the size holds, else up by
// doubling until one holds and then by bisection, 7 runs in all at most.
// The steps are the limit-response curve (analysis.LimitCurve): at each
// limit, whether it held, the achieved rate, the p99, how often the quota
// throttled, the peak memory, OOM kills and GC; and its knee.
const (
	limitRuns      = 7
	limitDoublings = 3 // up to 8 × the size's limit
)

// searchLimits runs the limit search of every size and resource asked
// for, keeps each curve in the run's verify/ directory and prints it.
func (e *env) searchLimits(ctx context.Context, store *results.Run, r *view.Run, f verifyFlags) error {
	file, sizes, err := rerunnable(store, r, f.size)
	if err != nil {
		return err
	}
	var failures []string
	for _, s := range sizes {
		baseline := "" // one unconfined run for every step of the size
		for _, resource := range f.resources {
			if ctx.Err() != nil {
				break
			}
			c, base, err := e.searchOne(ctx, store, r, file, s, f, resource, baseline)
			baseline = base
			if err != nil {
				failures = append(failures, fmt.Sprintf("size %s, %s: %v", s.t.Size, resource, err))
				continue
			}
			writeCurve(e.stdout, c)
			if err := saveCurve(store, c); err != nil {
				return &runError{err: err, code: ExitFailed}
			}
		}
	}
	if err := rewriteReports(store); err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	if len(failures) > 0 {
		return &runError{err: errors.New("cannot search the limits: " + strings.Join(failures, "; ")), code: ExitFailed}
	}
	return nil
}

// searchOne is one size's search of one resource, against baseline (an
// unconfined run of the hour; "" runs one); it returns the curve and the
// baseline.
func (e *env) searchOne(ctx context.Context, store *results.Run, r *view.Run, file string, s aSize, f verifyFlags, resource, baseline string) (analysis.LimitCurve, string, error) {
	c := analysis.LimitCurve{Cell: s.cell.Index, Size: s.t.Size, Load: s.t.Load, Resource: resource,
		SizeCPU: readback.SizeCPU(s.t), SizeMemory: readback.SizeMemory(s.t)}
	if c.SizeLimit() <= 0 {
		return c, baseline, fmt.Errorf("the size has no %s limit to search from", resource)
	}
	stopped := false
	// probe runs one step; ok is whether it held. A step that could not
	// be verified (the machine too busy) ends the search: its bounds would
	// rest on a run that says nothing of the limit.
	probe := func(factor float64) (ok bool, err error) {
		s.scale = limitScale{resource: resource, factor: factor}
		v, base, err := e.verifyOne(ctx, store, r, file, s, f, baseline)
		if err != nil {
			return false, err
		}
		baseline, c.Target = base, v.Target
		c.Points = append(c.Points, pointOf(s.scale, c, v))
		stopped = v.Inconclusive
		return v.Holds, nil
	}
	lo, hi := 0.0, 0.0 // the largest scale that failed, the smallest that held
	holds, err := probe(1)
	if err != nil {
		return c, baseline, err
	}
	if holds {
		hi = 1
	} else {
		lo = 1
		for k := 0; k < limitDoublings && hi == 0 && !stopped && ctx.Err() == nil; k++ {
			scale := lo * 2
			if holds, err = probe(scale); err != nil {
				return c, baseline, err
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
			return c, baseline, err
		}
		if holds {
			hi = mid
		} else {
			lo = mid
		}
	}
	c.Smallest, c.Stopped = hi, stopped
	c.Knee = c.FitKnee()
	return c, baseline, nil
}

// pointOf is a step of curve c, from the verdict on it.
func pointOf(l limitScale, c analysis.LimitCurve, v analysis.Verified) analysis.LimitPoint {
	p := analysis.LimitPoint{Scale: l.factor, Holds: v.Holds, Inconclusive: v.Inconclusive, Achieved: v.Achieved, Why: v.Reasons, Warnings: v.Warnings}
	if l.resource == analysis.LimitMemory {
		p.Memory = int64(l.factor*float64(c.SizeMemory) + 0.5)
	} else {
		p.CPU = l.factor * c.SizeCPU
	}
	if len(v.Latency) == 2 {
		p.P99Ms = v.Latency[1].ConfinedMs
	}
	for _, x := range v.Components {
		p.Throttled = max(p.Throttled, x.ThrottledShare())
		if x.CPUUsed <= 0 || p.CPUUsed < 0 { // not sampled: a sum without it would be too low, and the knee with it
			p.CPUUsed = -1
		} else {
			p.CPUUsed += x.CPUUsed
		}
		p.OOMKills += x.OOMKills
		p.GCPerMin = max(p.GCPerMin, x.GCPerMin)
		if x.MemoryPeak < 0 || p.Peak < 0 {
			p.Peak = -1
		} else {
			p.Peak += x.MemoryPeak
		}
	}
	return p
}

// writeCurve prints a size's limit-response curve, by limit.
func writeCurve(w io.Writer, c analysis.LimitCurve) {
	fmt.Fprintf(w, "size %s at %s: %s limit against the load (the size: %s)\n", c.Size, c.Load, strings.ToUpper(c.Resource), c.LimitText(c.SizeLimit()))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(c.Resource)+" LIMIT\tVERDICT\tACHIEVED\tP99\tTHROTTLED\tCPU USED\tPEAK\tOOM KILLS\tGC/MIN")
	for _, p := range c.ByLimit() {
		p99 := "–" // the load never ran at this limit
		if p.Achieved > 0 {
			p99 = units.Sig3(p.P99Ms) + " ms"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s/s\t%s\t%.0f %%\t%s\t%s\t%d\t%s\n", c.LimitText(c.Limit(p)), p.Verdict(), units.Sig3(p.Achieved),
			p99, 100*p.Throttled, p.CPUUsedText(), p.PeakText(), p.OOMKills, units.Sig3(p.GCPerMin))
	}
	tw.Flush()
	for _, p := range c.ByLimit() {
		if len(p.Why) > 0 {
			fmt.Fprintf(w, "  at %s: %s\n", c.LimitText(c.Limit(p)), p.Why[0])
		}
		if len(p.Warnings) > 0 {
			fmt.Fprintf(w, "  at %s: warning: %s\n", c.LimitText(c.Limit(p)), p.Warnings[0])
		}
	}
	if c.Stopped {
		fmt.Fprintln(w, "the search stopped at a step it could not verify: the machine was too busy (see the warnings); run it again on a quiet machine")
	}
	if c.Smallest > 0 {
		fmt.Fprintf(w, "smallest %s that holds: %s (%.3g × the size's)\n", c.Resource, c.LimitText(c.Smallest*c.SizeLimit()), c.Smallest)
	} else if !c.Stopped {
		fmt.Fprintf(w, "no %s limit up to %d × the size's holds: the limit is elsewhere (the other resource, the load itself)\n", c.Resource, 1<<limitDoublings)
	}
	if k := c.KneeText(); k != "" {
		fmt.Fprintln(w, k)
	}
}

// saveCurve keeps a size's curve in the run's verify/ directory.
func saveCurve(store *results.Run, c analysis.LimitCurve) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	path := store.Path(readback.CurveFile(c.Cell, c.Size, c.Resource))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
