package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// compare is `perflab compare RUN_A RUN_B [RUN_C…] [--force] [--format
// md|json]` (each later run against the first) or `perflab compare --a RUN
// --a RUN --b RUN --b RUN` (repeated runs per side).
func (e *env) compare(args []string) error {
	fs := newFlagSet("compare", e)
	var as, bs listFlag
	fs.Var(&as, "a", "a run of side A (repeat for repeated runs)")
	fs.Var(&bs, "b", "a run of side B (repeat for repeated runs)")
	force := fs.Bool("force", false, "compare although the workloads differ (driver, model, target rate or concurrency, params)")
	format := fs.String("format", "md", "md or json")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: perflab compare RUN_A RUN_B [RUN…] | --a RUN [--a RUN…] --b RUN [--b RUN…]  [--force] [--format md|json]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	sides, problems := compareSides(pos, as, bs)
	if *format != "md" && *format != "json" {
		problems = append(problems, fmt.Sprintf("--format %q: want md or json", *format))
	}
	if len(problems) > 0 {
		return usageErrorf("invalid arguments:\n  %s", strings.Join(problems, "\n  "))
	}
	loaded := map[string]*loadedRun{}
	for _, dir := range slices.Concat(sides...) {
		if loaded[dir] == nil {
			if loaded[dir], err = loadForCompare(dir); err != nil {
				return err
			}
		}
	}
	a := pick(loaded, sides[0])
	for _, b := range sides[1:] {
		c, err := compareRuns(a, pick(loaded, b), *force)
		if err != nil {
			return err
		}
		render := report.CompareMarkdown
		if *format == "json" {
			render = report.CompareJSON
		}
		if err := render(e.stdout, c); err != nil {
			return err
		}
	}
	return nil
}

// compareSides is side A and one or more sides B, as run directories.
func compareSides(pos, as, bs []string) ([][]string, []string) {
	switch {
	case len(as) > 0 || len(bs) > 0:
		var problems []string
		if len(pos) > 0 {
			problems = append(problems, "give the runs either as arguments or with --a and --b, not both")
		}
		if len(as) == 0 || len(bs) == 0 {
			problems = append(problems, "--a and --b each need at least one run")
		}
		return [][]string{as, bs}, problems
	case len(pos) < 2:
		return nil, []string{fmt.Sprintf("perflab compare needs two run directories or more, got %d", len(pos))}
	}
	sides := [][]string{{pos[0]}}
	for _, p := range pos[1:] {
		sides = append(sides, []string{p})
	}
	return sides, nil
}

func pick(loaded map[string]*loadedRun, dirs []string) []*loadedRun {
	out := make([]*loadedRun, len(dirs))
	for i, d := range dirs {
		out[i] = loaded[d]
	}
	return out
}

// loadedRun is what a comparison needs of one run.
type loadedRun struct {
	dir    string
	run    *report.Run
	defs   map[string]results.Workload
	ivs    map[string][]*stats.Interval
	series map[int]map[string]map[string][]analysis.Point // by cell index
}

func loadForCompare(dir string) (*loadedRun, error) {
	store, err := results.Open(dir)
	if err != nil {
		return nil, &runError{err: err, hint: "give directories perflab printed as 'run directory'", code: ExitFailed}
	}
	defer store.Close()
	fail := func(err error) (*loadedRun, error) { return nil, &runError{err: err, code: ExitFailed} }
	lr := &loadedRun{dir: dir, defs: map[string]results.Workload{}, ivs: map[string][]*stats.Interval{},
		series: map[int]map[string]map[string][]analysis.Point{}}
	if lr.run, err = loadRun(store); err != nil {
		return fail(err)
	}
	ws, err := store.Workloads()
	if err != nil {
		return fail(err)
	}
	for _, w := range ws {
		lr.defs[w.Name] = w
		if lr.ivs[w.Name], err = store.Intervals(w.Name); err != nil {
			return fail(err)
		}
	}
	for _, c := range lr.run.Cells {
		samples, err := store.Samples(c.Index)
		if err != nil {
			return fail(err)
		}
		lr.series[c.Index] = analysisSeries(samples)
	}
	return lr, nil
}

// compareRuns matches the workloads of B's runs with A's by name, refuses
// (unless forced) when they differ, and compares each phase they ran in.
func compareRuns(a, b []*loadedRun, force bool) (*report.RunComparison, error) {
	c := &report.RunComparison{Forced: force}
	for _, r := range a {
		c.A = append(c.A, r.dir)
	}
	for _, r := range b {
		c.B = append(c.B, r.dir)
	}
	ref := a[0]
	var common []string
	for _, s := range ref.run.Workloads {
		name := s.Workload.Name
		if _, ok := b[0].defs[name]; ok {
			common = append(common, name)
		} else {
			c.OnlyA = append(c.OnlyA, name)
		}
	}
	for _, s := range b[0].run.Workloads {
		if _, ok := ref.defs[s.Workload.Name]; !ok {
			c.OnlyB = append(c.OnlyB, s.Workload.Name)
		}
	}
	if len(common) == 0 {
		return nil, usageErrorf("cannot compare %s with %s: no workload has the same name in both (A has %s; B has %s)",
			ref.dir, b[0].dir, strings.Join(names(ref), ", "), strings.Join(names(b[0]), ", "))
	}
	for _, r := range slices.Concat(a[1:], b) {
		for _, name := range common {
			d, n := workloadDifferences(name, ref, r)
			c.Differences, c.Notes = append(c.Differences, d...), append(c.Notes, n...)
		}
	}
	c.Notes = dedupe(c.Notes)
	if len(c.Differences) > 0 && !force {
		return nil, usageErrorf("cannot compare %s with %s: the workloads differ, so a difference in resources or latency would say nothing of the systems:\n  %s\n"+
			"(--force compares them anyway)", ref.dir, b[0].dir, strings.Join(c.Differences, "\n  "))
	}
	c.Groups = comparePhases(a, b, common)
	return c, nil
}

func names(r *loadedRun) []string {
	var out []string
	for _, s := range r.run.Workloads {
		out = append(out, s.Workload.Name)
	}
	return out
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

// placeParams are, per driver, the params that say where a system is (or
// how to reach it) rather than what load it gets: two systems compared on
// the same load differ in them.
var placeParams = map[string][]string{
	"http":        {"url", "ca_file", "insecure"},
	"openai":      {"url", "ca_file", "insecure", "api_key"},
	"promql":      {"url", "ca_file", "insecure"},
	"remotewrite": {"url", "ca_file", "insecure"},
	"s3":          {"endpoint", "bucket", "region", "access_key", "secret_key", "session_token", "path_style"},
	"otlp":        {"endpoint", "query_url", "ca_file", "insecure"},
}

// workloadDifferences lists how r's workload name differs from ref's in
// what load it applies (differences), and in where it sends it (notes).
func workloadDifferences(name string, ref, r *loadedRun) (diffs, notes []string) {
	a, b := ref.defs[name], r.defs[name]
	field := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			diffs = append(diffs, fmt.Sprintf("workload %s: %s %v in %s, %v in %s", name, what, x, ref.dir, y, r.dir))
		}
	}
	field("driver", a.Driver, b.Driver)
	field("model", a.Model, b.Model)
	field("target rate (/s)", a.Rate, b.Rate)
	field("concurrency", a.Concurrency, b.Concurrency)
	field("stages", string(compactJSON(a.Stages)), string(compactJSON(b.Stages)))
	pa, pb := paramMap(a.Params), paramMap(b.Params)
	keys := map[string]bool{}
	for k := range pa {
		keys[k] = true
	}
	for k := range pb {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if reflect.DeepEqual(pa[k], pb[k]) {
			continue
		}
		text := fmt.Sprintf("workload %s: param %s %s in %s, %s in %s", name, k, paramText(pa[k]), ref.dir, paramText(pb[k]), r.dir)
		if slices.Contains(placeParams[a.Driver], k) {
			notes = append(notes, text)
		} else {
			diffs = append(diffs, text)
		}
	}
	return diffs, notes
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
