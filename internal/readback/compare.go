package readback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/internal/view"
)

// Compared is a run as a comparison needs it: its report figures, its
// workloads' definitions and intervals, and its samples.
type Compared struct {
	dir    string
	run    *view.Run
	defs   map[string]results.Workload
	ivs    map[string][]*stats.Interval
	series map[int]map[string]map[string][]analysis.Point // by cell index
	// base is each workload's name without its repetition: the name it
	// would have had in a run that was not repeated; a workload of a run
	// that was is compared in all its repetitions (baseNames).
	base  map[string]string
	combo map[int]*view.Cell // a repeated run's cells' combinations, by cell index
}

// ForCompare reads what a comparison needs of the run in store, given on
// the command line as dir.
func ForCompare(store *results.Run, dir string) (*Compared, error) {
	lr := &Compared{dir: dir, series: map[int]map[string]map[string][]analysis.Point{}}
	var wd workloadData
	var err error
	if lr.run, wd, err = readRun(store); err != nil {
		return nil, err
	}
	lr.defs, lr.ivs = wd.defs, wd.ivs
	for _, c := range lr.run.Cells {
		samples, err := store.Samples(c.Index)
		if err != nil {
			return nil, err
		}
		lr.series[c.Index] = analysisSeries(samples)
	}
	lr.base, lr.combo = baseNames(lr.run)
	return lr, nil
}

// baseNames maps each workload of r to the name it is compared by: its
// own, or in a repeated run the name without the repetition (its
// combination's name, when the run has a matrix, then profile/short), which
// the same workload has in every repetition and in a run of the plan that
// was not repeated. It also gives each repeated cell's combination.
func baseNames(r *view.Run) (map[string]string, map[int]*view.Cell) {
	base := map[string]string{}
	combo := map[int]*view.Cell{}
	for _, g := range r.Repeated {
		for _, c := range g.Repetitions {
			combo[c.Index] = g.Cell
		}
	}
	matrix := len(r.Repeated) > 1 // as prepareWorkload: a plan of more than one combination names workloads after them
	for _, s := range r.Workloads {
		w := s.Workload
		base[w.Name] = w.Name
		if g := combo[w.Cell]; g != nil {
			base[w.Name] = w.Profile + "/" + w.DisplayName()
			if matrix {
				base[w.Name] = g.Name + "/" + base[w.Name]
			}
		}
	}
	return base, combo
}

// runsOf is how many runs a side's figures come from: a repeated run
// counts each repetition that ran.
func runsOf(runs []*Compared) int {
	n := 0
	for _, r := range runs {
		reps := 1
		for _, g := range r.run.Repeated {
			reps = max(reps, len(g.Repetitions))
		}
		n += reps
	}
	return n
}

// Compare matches the workloads of B's runs with A's by name, refuses
// (unless forced) when they differ, and compares each phase they ran in.
// A refusal is a *Refusal.
func Compare(a, b []*Compared, force bool) (*view.RunComparison, error) {
	c := &view.RunComparison{Forced: force}
	for _, r := range a {
		c.A = append(c.A, r.dir)
	}
	for _, r := range b {
		c.B = append(c.B, r.dir)
	}
	c.NA, c.NB = runsOf(a), runsOf(b)
	ref := a[0]
	var common []string
	for _, name := range ref.baseList() {
		if b[0].def(name) != nil {
			common = append(common, name)
		} else {
			c.OnlyA = append(c.OnlyA, name)
		}
	}
	for _, name := range b[0].baseList() {
		if ref.def(name) == nil {
			c.OnlyB = append(c.OnlyB, name)
		}
	}
	if len(common) == 0 {
		return nil, refusef("cannot compare %s with %s: no workload has the same name in both (A has %s; B has %s)",
			ref.dir, b[0].dir, strings.Join(ref.baseList(), ", "), strings.Join(b[0].baseList(), ", "))
	}
	for _, r := range slices.Concat(a[1:], b) {
		for _, name := range common {
			d, n := workloadDifferences(name, ref, r)
			c.Differences, c.Notes = append(c.Differences, d...), append(c.Notes, n...)
		}
	}
	c.Notes = dedupe(c.Notes)
	if len(c.Differences) > 0 && !force {
		return nil, refusef("cannot compare %s with %s: the workloads differ, so a difference in resources or latency would say nothing of the systems:\n  %s\n"+
			"(--force compares them anyway)", ref.dir, b[0].dir, strings.Join(c.Differences, "\n  "))
	}
	c.Groups = comparePhases(a, b, common)
	return c, nil
}

// baseList is the run's workloads by the names they are compared by
// (baseNames), each once, in the order they ran.
func (r *Compared) baseList() []string {
	var out []string
	for _, s := range r.run.Workloads {
		if name := r.base[s.Workload.Name]; !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// def is the definition of the workload compared by name (its first
// repetition's, in a repeated run); nil when the run has none.
func (r *Compared) def(name string) *results.Workload {
	for _, s := range r.run.Workloads {
		if r.base[s.Workload.Name] == name {
			d := r.defs[s.Workload.Name]
			return &d
		}
	}
	return nil
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// workloadDifferences lists how r's workload name differs from ref's in
// what load it applies (differences), and in where it sends it (notes).
func workloadDifferences(name string, ref, r *Compared) (diffs, notes []string) {
	a, b := *ref.def(name), *r.def(name)
	field := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			diffs = append(diffs, fmt.Sprintf("workload %s: %s %v in %s, %v in %s", name, what, x, ref.dir, y, r.dir))
		}
	}
	field("driver", a.Driver, b.Driver)
	field("model", a.Model, b.Model)
	if nearRate(a.Rate, b.Rate) && a.Rate != b.Rate {
		notes = append(notes, fmt.Sprintf("workload %s: target rate %v/s in %s, %v/s in %s: the same load within %s %% (a rate derived from randomly drawn sizes; "+
			"seed: in the plan makes the draws, and the rate, the same)", name, a.Rate, ref.dir, b.Rate, r.dir, units.Sig3(100*RateTolerance)))
	} else {
		field("target rate (/s)", a.Rate, b.Rate)
	}
	field("concurrency", a.Concurrency, b.Concurrency)
	field("stages", stagesText(a), stagesText(b))
	pa, pb := storedParams(a), storedParams(b)
	for _, k := range unionKeys(pa, pb) {
		if reflect.DeepEqual(pa[k], pb[k]) {
			continue
		}
		text := fmt.Sprintf("workload %s: param %s %s in %s, %s in %s", name, k, paramText(pa[k]), ref.dir, paramText(pb[k]), r.dir)
		if isPlace(a, b, k) {
			notes = append(notes, text)
		} else {
			diffs = append(diffs, text)
		}
	}
	return diffs, notes
}

// RateTolerance is how far two runs' target rates may differ and still be
// the same load: a driver that derives its rate from sizes it draws at
// random (traces of a random span count) asks for a rate that differs in
// the fourth digit between two runs of one plan without seed:.
const RateTolerance = 0.001

// nearRate reports whether rates a and b are the same load.
func nearRate(a, b float64) bool {
	return a > 0 && b > 0 && math.Abs(a-b) <= RateTolerance*max(a, b)
}

// isPlace reports whether the param key of workloads a and b says where
// each system is rather than what load it gets, as either run recorded
// its driver's place keys (a run made before they were recorded names
// none: its params all count as the load).
func isPlace(a, b results.Workload, key string) bool {
	return slices.Contains(a.Place, key) || slices.Contains(b.Place, key)
}

// unionKeys is every key of pa and of pb, once each, sorted.
func unionKeys(pa, pb map[string]any) []string {
	keys := make([]string, 0, len(pa)+len(pb))
	for k := range pa {
		keys = append(keys, k)
	}
	for k := range pb {
		if _, ok := pa[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// stagesText is a workload's ramping schedule in words ("ramp 10 →
// 200/s over 30 s"), so that runs that stored the same schedule in two
// forms (docs/format/results.md) compare equal; "" for none, and stages
// that can't be read as stored.
func stagesText(w results.Workload) string {
	s, err := analysis.ParseSchedule(w.Stages)
	switch {
	case err != nil:
		return string(compactJSON(w.Stages))
	case s == nil:
		return ""
	case w.Model == results.ModelClosed:
		return s.Text(" VUs")
	}
	return s.Text("/s")
}

func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func paramMap(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

// storedParams are a workload's params as compared: those perflab http
// stored before it ran its flags as a plan (always "headers" and
// "body_bytes", which the http driver's params do not have) without an
// empty headers or body, as it stores them now.
func storedParams(w results.Workload) map[string]any {
	m := paramMap(w.Params)
	if n, ok := m["body_bytes"].(float64); ok && w.Driver == "http" && n == 0 {
		delete(m, "body_bytes")
		if h, ok := m["headers"].(map[string]any); ok && len(h) == 0 {
			delete(m, "headers")
		}
	}
	return m
}

func paramText(v any) string {
	if v == nil {
		return "(not set)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Refusal is a comparison refused: the runs have nothing to compare, or
// their workloads differ and it was not forced.
type Refusal struct{ msg string }

func (r *Refusal) Error() string { return r.msg }

func refusef(format string, a ...any) error { return &Refusal{msg: fmt.Sprintf(format, a...)} }
