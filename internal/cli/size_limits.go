package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/results"
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

// limitPoint is one step of the search.
type limitPoint struct {
	Scale float64 `json:"cpu_scale"` // of the size's CPU limits
	CPU   float64 `json:"cpu_cores"` // the sum of the components' CPU limits at that scale
	Holds bool    `json:"holds"`
	// Inconclusive: the run fell short while no limit bound (a busy
	// machine); the search takes the limit as enough, as it did not bind.
	Inconclusive bool     `json:"inconclusive,omitempty"`
	Achieved     float64  `json:"achieved_per_second"`
	P99Ms        float64  `json:"p99_ms"`
	Throttled    float64  `json:"throttled_share"` // the most throttled component's share of periods
	Why          []string `json:"reasons,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
}

// limitCurve is a size's search: its steps in the order run, and the
// smallest CPU limits that held (0 when none did).
type limitCurve struct {
	Cell     int          `json:"cell"`
	Size     string       `json:"size"`
	Load     string       `json:"load"`
	Points   []limitPoint `json:"points"`
	Smallest float64      `json:"smallest_holding_cpu_scale"`
}

// searchLimits runs the limit search of every size asked for, keeps each
// curve in the run's verify/ directory and prints it.
func (e *env) searchLimits(ctx context.Context, store *results.Run, r *view.Run, f verifyFlags) error {
	meta, err := store.Meta()
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	file, err := planToRerun(meta, store)
	if err != nil {
		return err
	}
	sizes, err := sizesToVerify(r, f.size)
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
	if len(failures) > 0 {
		return &runError{err: errors.New("cannot search the limits: " + fmt.Sprint(failures)), code: ExitFailed}
	}
	return nil
}

// searchOne is one size's search.
func (e *env) searchOne(ctx context.Context, store *results.Run, r *view.Run, file string, s aSize, f verifyFlags) (limitCurve, error) {
	c := limitCurve{Cell: s.cell.Index, Size: s.t.Size, Load: s.t.Load}
	cpu := sizeCPU(s.t)
	if cpu <= 0 {
		return c, errors.New("the size has no CPU limit to search from")
	}
	baseline := ""
	probe := func(scale float64) (bool, error) {
		s.cpuScale = scale
		v, base, err := e.verifyOne(ctx, store, r, file, s, f, baseline)
		if err != nil {
			return false, err
		}
		baseline = base // one unconfined run for every step
		c.Points = append(c.Points, pointOf(scale, cpu, v))
		return v.Holds || v.Inconclusive, nil
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
		for k := 0; k < limitDoublings && hi == 0 && ctx.Err() == nil; k++ {
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
	for len(c.Points) < limitRuns && hi > 0 && ctx.Err() == nil {
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
	c.Smallest = hi
	return c, nil
}

// sizeCPU is the sum of a size's components' CPU limits, in cores.
func sizeCPU(t analysis.TShirt) float64 {
	var sum float64
	for _, r := range t.Components {
		if !r.NoCPULimit {
			sum += r.CPULimit.Value()
		}
	}
	return sum
}

func pointOf(scale, cpu float64, v analysis.Verified) limitPoint {
	p := limitPoint{Scale: scale, CPU: scale * cpu, Holds: v.Holds, Inconclusive: v.Inconclusive, Achieved: v.Achieved, Why: v.Reasons, Warnings: v.Warnings}
	if len(v.Latency) == 2 {
		p.P99Ms = v.Latency[1].ConfinedMs
	}
	for _, c := range v.Components {
		p.Throttled = max(p.Throttled, c.ThrottledShare())
	}
	return p
}

// writeCurve prints a size's limit-response curve, by CPU limit.
func writeCurve(w io.Writer, c limitCurve, t analysis.TShirt) {
	fmt.Fprintf(w, "size %s at %s: CPU limit against the load (the size: %.3g cores)\n", c.Size, c.Load, sizeCPU(t))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CPU LIMIT\tVERDICT\tACHIEVED\tP99\tTHROTTLED")
	for _, p := range sortedPoints(c.Points) {
		verdict := "holds"
		switch {
		case p.Inconclusive:
			verdict = "not verified"
		case !p.Holds:
			verdict = "does not hold"
		}
		fmt.Fprintf(tw, "%.3g cores\t%s\t%.4g/s\t%.3g ms\t%.0f %%\n", p.CPU, verdict, p.Achieved, p.P99Ms, 100*p.Throttled)
	}
	tw.Flush()
	for _, p := range sortedPoints(c.Points) {
		if len(p.Why) > 0 {
			fmt.Fprintf(w, "  at %.3g cores: %s\n", p.CPU, p.Why[0])
		}
		if len(p.Warnings) > 0 {
			fmt.Fprintf(w, "  at %.3g cores: warning: %s\n", p.CPU, p.Warnings[0])
		}
	}
	if c.Smallest > 0 {
		fmt.Fprintf(w, "smallest CPU that holds: %.3g cores (%.3g × the size's)\n", c.Smallest*sizeCPU(t), c.Smallest)
	} else {
		fmt.Fprintf(w, "no CPU limit up to %d × the size's holds: the limit is elsewhere (memory, the load itself)\n", 1<<limitDoublings)
	}
}

func sortedPoints(ps []limitPoint) []limitPoint {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b limitPoint) int { return cmp.Compare(a.CPU, b.CPU) })
	return out
}

// saveCurve keeps a size's curve in the run's verify/ directory.
func saveCurve(store *results.Run, c limitCurve) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	path := store.Path(filepath.Join(readback.VerifyDir, fmt.Sprintf("limits-%d-%s.json", c.Cell, c.Size)))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
