package promapi

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/prometheus/common/model"

	"github.com/perflab/perflab/internal/observe"
)

// ComponentName is the name of the component a split key stands for: the
// plan component's own name without a capture group, else its name, a
// dash and the captured text (tempo + ingester → tempo-ingester).
func (s *Source) ComponentName(key string) string {
	if key == "" {
		return s.cfg.Name
	}
	return s.cfg.Name + "-" + key
}

// key is the split key of a series: the first capture group of the split
// regex on its label, "" without one; ok is false when the label does not
// match.
func (s *Source) key(metric model.Metric) (string, bool) {
	if s.cfg.Split.Label == "" {
		return "", true
	}
	m := s.split.FindStringSubmatch(string(metric[model.LabelName(s.cfg.Split.Label)]))
	switch {
	case m == nil:
		return "", false
	case len(m) > 1:
		return m[1], true
	}
	return "", true
}

// group adds the answer of q to res: the series of each component summed
// per step, NaN values left out.
func (s *Source) group(q query, m model.Matrix, res *Result) {
	sums := map[string]map[int64]float64{}
	var unmatched []string
	for _, ss := range m {
		k, ok := s.key(ss.Metric)
		if !ok {
			unmatched = append(unmatched, ss.Metric.String())
			continue
		}
		name := s.ComponentName(k)
		if sums[name] == nil {
			sums[name] = map[int64]float64{}
		}
		for _, v := range ss.Values {
			if f := float64(v.Value); !math.IsNaN(f) && !math.IsInf(f, 0) {
				sums[name][int64(v.Timestamp)] += f
			}
		}
	}
	if len(unmatched) > 0 {
		sort.Strings(unmatched)
		res.warn("%d series of %s do not match %s=~%q and are left out, e.g. %s",
			len(unmatched), q.metric, s.cfg.Split.Label, s.cfg.Split.Regex, unmatched[0])
	}
	for name, byT := range sums {
		if len(byT) == 0 {
			continue
		}
		ts := make([]int64, 0, len(byT))
		for t := range byT {
			ts = append(ts, t)
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		pts := make([]Point, len(ts))
		for i, t := range ts {
			pts[i] = Point{T: time.UnixMilli(t), V: byT[t]}
		}
		if res.Series[name] == nil {
			res.Series[name] = map[string][]Point{}
		}
		res.Series[name][q.metric] = pts
	}
}

// checkSeries warns of a query without series and of a component's series
// that is missing, starts after the window's first step, ends before its
// last, or misses steps in between. had says whether q had any series.
func (s *Source) checkSeries(q query, had bool, start, end time.Time, res *Result) {
	if !had {
		if !q.optional {
			res.warn("no series for %s: %s returned nothing between %s and %s UTC, so there are no %s figures",
				q.metric, q.expr, clock(start), clock(end), q.metric)
		}
		return
	}
	// The window's steps as the analysis takes them: (start, end].
	first, last := alignDown(start, s.step).Add(s.step), alignDown(end, s.step)
	want := int(last.Sub(first)/s.step) + 1
	for _, name := range sortedNames(res.Series) {
		all, has := res.Series[name][q.metric]
		pts := inWindow(all, start.Add(time.Nanosecond), end)
		switch {
		case !has && !q.optional:
			res.warn("component %s has no %s series, though others have", name, q.metric)
		case !has:
		case len(pts) == 0:
			res.warn("component %s has no %s value inside the window (only around it)", name, q.metric)
		case pts[0].T.After(first) && q.appears:
		case pts[0].T.After(first):
			res.warn("the %s series of component %s starts at %s UTC, after the window's first step at %s: it is missing or was not scraped before",
				q.metric, name, clock(pts[0].T), clock(first))
		case pts[len(pts)-1].T.Before(last):
			res.warn("the %s series of component %s ends at %s UTC, before the window's last step at %s: it went stale (the target stopped answering or is gone)",
				q.metric, name, clock(pts[len(pts)-1].T), clock(last))
		case len(pts) < want:
			res.warn("the %s series of component %s has values at %d of the window's %d steps", q.metric, name, len(pts), want)
		}
	}
}

// minValuesP99 is the fewest values of a series a P99 is given for:
// analysis.MinSamplesP99 (the observers come before the analysis).
const minValuesP99 = 10

// checkWindow warns when the step leaves fewer values in the window,
// (start, end] as the analysis takes it, than a P99 needs.
func (s *Source) checkWindow(start, end time.Time, res *Result) {
	first, last := alignDown(start, s.step).Add(s.step), alignDown(end, s.step)
	n := 0
	if !last.Before(first) {
		n = int(last.Sub(first)/s.step) + 1
	}
	if n < minValuesP99 {
		res.warn("step %v leaves %d values per series in the window (%v): too few for a P99, which needs %d; lower the step or lengthen the profile",
			s.step, n, end.Sub(start).Round(time.Second), minValuesP99)
	}
}

// checkResets counts the resets of q's counter over the window, per
// component, and warns of any: a process restarted, and the rate lost what
// it counted between its last scrape and the restart.
func (s *Source) checkResets(ctx context.Context, q query, start, end time.Time, res *Result) {
	if q.counter == "" {
		return
	}
	rng := promDuration(end.Sub(start).Truncate(time.Second) + time.Second)
	expr := sumBy(s.cfg.Split.Label, "resets("+q.counter+"["+rng+"])")
	if s.cfg.Split.Label == "" {
		expr = "sum(resets(" + q.counter + "[" + rng + "]))"
	}
	vec, err := s.instant(ctx, q, expr, end)
	if err != nil {
		res.warn("cannot count the resets of %s: %v", q.counter, err)
		return
	}
	for _, smp := range vec {
		k, ok := s.key(smp.Metric)
		if ok && smp.Value > 0 {
			res.warn("counter %s of component %s was reset %g times in the window: a process restarted, and what it counted since its last scrape is lost",
				q.counter, s.ComponentName(k), float64(smp.Value))
		}
	}
}

// checkRestarts warns of containers that restarted in the window, and
// whether the last termination was an OOM kill.
func (s *Source) checkRestarts(start, end time.Time, res *Result) {
	for _, name := range sortedNames(res.Series) {
		pts := inWindow(res.Series[name][observe.Restarts], start, end)
		if len(pts) < 2 || pts[len(pts)-1].V <= pts[0].V {
			continue
		}
		oom := ""
		for _, p := range inWindow(res.Series[name][observe.OOMKilled], start, end) {
			if p.V > 0 {
				oom = " (the last termination of one of its containers was OOMKilled)"
			}
		}
		res.warn("component %s restarted %g times in the window%s", name, pts[len(pts)-1].V-pts[0].V, oom)
	}
}

func inWindow(pts []Point, start, end time.Time) []Point {
	i := sort.Search(len(pts), func(i int) bool { return !pts[i].T.Before(start) })
	j := sort.Search(len(pts), func(i int) bool { return pts[i].T.After(end) })
	return pts[i:j]
}

func sortedNames(m map[string]map[string][]Point) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05") }
