package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// searchResult is the result in one sentence.
func searchResult(s *view.Search) string {
	switch {
	case s.Sustained == 0 && len(s.Steps) == 0:
		return "no step ran"
	case s.Sustained == 0:
		return fmt.Sprintf("no sustainable rate: the first step, %s, did not pass", rateText(s.Steps[0].Rate))
	}
	r := "highest sustainable rate " + strong(rateText(s.Sustained))
	if s.Failed > 0 {
		r += fmt.Sprintf(" (%s did not pass; the capacity lies between, within %.0f %%)", rateText(s.Failed), 100*(s.Failed-s.Sustained)/s.Sustained)
	}
	return r
}

// searchLimit says what set the limit.
func searchLimit(s *view.Search) string {
	switch s.Limit {
	case "target":
		return fmt.Sprintf("the target: at %s the SLO failed while the generator kept up (not client-bound)", rateText(s.Failed))
	case "generator":
		st := clientBoundStep(s)
		return fmt.Sprintf("the generator: at %s it was client-bound (%s); the target may sustain more — run perflab on a larger machine or with more workers",
			rateText(st.Rate), st.ClientWhy)
	case "max":
		return fmt.Sprintf("--max: every rate up to %s passed; the capacity is above it", rateText(s.Max))
	case "start":
		if len(s.Steps) > 0 && s.Steps[0].Insufficient {
			return fmt.Sprintf("the start rate %s had too few requests in its window to judge every gate (none failed); lengthen --step-duration or raise --start", rateText(s.Start))
		}
		return fmt.Sprintf("the start rate %s already failed; lower --start", rateText(s.Start))
	}
	return "the search stopped early: " + s.Stopped
}

func clientBoundStep(s *view.Search) view.SearchStep {
	for _, st := range s.Steps {
		if st.ClientBound {
			return st
		}
	}
	return view.SearchStep{}
}

// kneeText describes the knee and the rule that finds it.
func kneeText(s *view.Search) string {
	rule := fmt.Sprintf("the lowest rate whose p99 is over %d× the p99 of the lowest rate, and by at least %v",
		analysis.KneeFactor, analysis.KneeMinRise)
	if s.Knee == nil {
		return "not within the rates run (" + rule + ")"
	}
	k := s.Knee
	at := rateText(k.Rate)
	if k.Below > 0 {
		at = fmt.Sprintf("between %s and %s", rateText(k.Below), rateText(k.Rate))
	}
	return fmt.Sprintf("%s: p99 %s at %s against %s at %s (%s)", at, dur(k.P99), rateText(k.Rate), dur(k.Baseline), rateText(k.BaseRate), rule)
}

func stepsText(s *view.Search) string {
	growth, bisect := 0, 0
	for _, st := range s.Steps {
		if st.Bisect {
			bisect++
		} else {
			growth++
		}
	}
	return fmt.Sprintf("%d of %s each: %d from %s × %.3g per step (at most %s), then %d of up to %d bisections",
		len(s.Steps), s.StepDuration, growth, rateText(s.Start), s.Factor, rateText(s.Max), bisect, s.Bisect)
}

// SearchMarkdown writes the search's report.
func SearchMarkdown(w io.Writer, s *view.Search) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# %s `%s`\n\n", searchTitle(s), s.Plan)
	d := &doc{}
	if s.Sweep != nil {
		sweepFacts(d, s, false)
	} else {
		searchFacts(d, s, false)
	}
	searchSteps(d, s, 2, false)
	d.markdown(b)
	if s.Resources != nil {
		heading(b, 2, "Resources at %s", rateText(s.Sustained))
		markdownResources(b, s.Resources, 3)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// searchSection is the search as a section of its run's report, whose
// phases hold every step's figures and resources.
func searchSection(d *doc, s *view.Search, level int) {
	d.headingID(level, "search", searchTitle(s)+" "+code(s.Plan))
	if s.Sweep != nil {
		sweepFacts(d, s, true)
	} else {
		searchFacts(d, s, true)
	}
	searchSteps(d, s, level+1, true)
	d.para("Each step ran as a phase of this run, named in the table; its section below holds its figures, charts and resources.")
}

// searchTitle is what the search is called: a capacity search or a sweep.
func searchTitle(s *view.Search) string {
	if s.Sweep != nil {
		return "Sweep"
	}
	return "Capacity search"
}

// searchFacts is the result, the limit, the knee and how the search ran;
// inRun leaves out where the run's report is.
func searchFacts(d *doc, s *view.Search, inRun bool) {
	t := &table{Facts: true}
	var gates []string
	for _, g := range s.Gates {
		gates = append(gates, code(g))
	}
	t.Rows = append(t.Rows, []string{"Result", searchResult(s)}, []string{"Limit", searchLimit(s)}, []string{"Knee", kneeText(s)},
		[]string{"SLO", strings.Join(gates, ", ") + ", each judged over the step's steady-state window; a step passes when every gate passes and it achieved 95 % of its rate"},
		[]string{"Workload", fmt.Sprintf("%s of profile %s → %s", code(s.Workload), code(s.Profile), code(s.Target))},
		[]string{"Steps", stepsText(s)})
	if s.Command != "" {
		t.Rows = append(t.Rows, []string{"Command", code(s.Command)})
	}
	if !inRun {
		t.Rows = append(t.Rows, []string{"Run", code(s.Dir) + ": report.md has every step's figures, components and resources"})
	}
	d.table(t)
}

// searchSteps is the table of steps, with the phase each ran as when
// withPhase; a sweep's say their kind, and an LLM's add its figures.
func searchSteps(d *doc, s *view.Search, level int, withPhase bool) {
	d.heading(level, "Steps")
	t := &table{}
	col := func(head string, right bool) { t.Head, t.Right = append(t.Head, head), append(t.Right, right) }
	col("#", true)
	if s.Sweep != nil {
		col("Kind", false)
	}
	for _, h := range []string{"Rate", "Achieved", "p50", "p99"} {
		col(h, true)
	}
	llm := anyLLM(s)
	if llm {
		for _, h := range llmHead {
			col(h, true)
		}
	}
	for _, h := range []string{"Errors", "Dropped"} {
		col(h, true)
	}
	col("Verdict", false)
	col("Why not", false)
	if withPhase {
		col("Phase", false)
	}
	for _, st := range s.Steps {
		t.Rows = append(t.Rows, stepRow(s, st, llm, withPhase))
		t.Fail = append(t.Fail, !st.Pass && !st.Insufficient)
	}
	d.table(t)
	if svg := rateChart(s); svg != nil {
		d.chart(svg)
	}
}

// stepRow is one row of the steps table.
func stepRow(s *view.Search, st view.SearchStep, llm, withPhase bool) []string {
	verdict := st.Verdict()
	if !st.Pass && !st.Insufficient {
		verdict = strong(verdict)
	}
	n := fmt.Sprint(st.N)
	if st.Bisect {
		n += " (bisect)"
	}
	row := []string{n}
	if s.Sweep != nil {
		row = append(row, kindText(st))
	}
	rate := "–"
	if st.Rate > 0 {
		rate = rateText(st.Rate)
	}
	row = append(row, rate, fmt.Sprintf("%.1f/s", st.Achieved), dur(st.P50), dur(st.P99))
	if llm {
		row = append(row, llmRow(st)...)
	}
	row = append(row, pct(st.ErrorRate, 1), fmt.Sprint(st.Dropped), verdict, dash(st.Why))
	if withPhase {
		row = append(row, code(dash(st.Phase)))
	}
	return row
}

// SearchTerminal writes the search's summary for the terminal.
func SearchTerminal(w io.Writer, s *view.Search) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	llm := anyLLM(s)
	head := "step\t"
	if s.Sweep != nil {
		head += "kind\t"
	}
	head += "rate\tachieved\tp50\tp99\t"
	if llm {
		head += "ttft p50\titl p50\toutput tokens/s\tper user\tgoodput\t"
	}
	fmt.Fprintln(tw, head+"errors\tdropped\tverdict\t")
	for _, st := range s.Steps {
		verdict := st.Verdict()
		if !st.Pass && !st.Insufficient {
			verdict = "FAIL"
		}
		cols := []string{fmt.Sprint(st.N)}
		if s.Sweep != nil {
			cols = append(cols, kindText(st))
		}
		cols = append(cols, dash(rateOrNone(st.Rate)), fmt.Sprintf("%.1f/s", st.Achieved), dur(st.P50), dur(st.P99))
		if llm {
			r := llmRow(st)
			cols = append(cols, r[0], r[2], r[3], r[4], r[5])
		}
		cols = append(cols, pct(st.ErrorRate, 1), fmt.Sprint(st.Dropped), verdict)
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s.Sweep != nil {
		fmt.Fprintf(w, "\nresult: %s\n", unmarked(sweepResult(s)))
		fmt.Fprintf(w, "limit:  %s\n", sweepLimit(s))
	} else {
		fmt.Fprintf(w, "\nresult: %s\n", unmarked(searchResult(s)))
		fmt.Fprintf(w, "limit:  %s\n", searchLimit(s))
	}
	fmt.Fprintf(w, "knee:   %s\n", kneeText(s))
	if s.Resources != nil {
		fmt.Fprintf(w, "\nresources at %s (%s):\n", rateText(s.Sustained), windowText(s.Resources))
		return terminalResourceTable(w, s.Resources)
	}
	return nil
}

// rateOrNone is a step's rate, or "" for a closed step, which has none.
func rateOrNone(r float64) string {
	if r <= 0 {
		return ""
	}
	return rateText(r)
}

type jsonSearch struct {
	Format       string           `json:"format"`
	Version      int              `json:"version"`
	Plan         string           `json:"plan"`
	Profile      string           `json:"profile"`
	Workload     string           `json:"workload"`
	Target       string           `json:"target"`
	Gates        []string         `json:"gates"`
	Sustained    float64          `json:"sustained_rate"`
	Failed       float64          `json:"failed_rate,omitempty"`
	Limit        string           `json:"limit"`
	Stopped      string           `json:"stopped,omitempty"`
	Knee         *jsonKnee        `json:"knee"`
	StepSeconds  float64          `json:"step_seconds"`
	Steps        []jsonSearchStep `json:"steps"`
	Resources    *jsonResources   `json:"resources"`
	KneeFactor   float64          `json:"knee_factor"`
	KneeMinRise  float64          `json:"knee_min_rise_ms"`
	SearchParams map[string]any   `json:"search"`
	Sweep        *jsonSweep       `json:"sweep,omitempty"`
}

type jsonKnee struct {
	Rate     float64 `json:"rate"`
	Below    float64 `json:"below"`
	P99      float64 `json:"p99_ms"`
	BaseRate float64 `json:"base_rate"`
	Baseline float64 `json:"baseline_p99_ms"`
}

type jsonSearchStep struct {
	N           int     `json:"n"`
	Phase       string  `json:"phase"`
	Rate        float64 `json:"rate"`
	Bisect      bool    `json:"bisect"`
	Achieved    float64 `json:"achieved_rate"`
	P50         float64 `json:"p50_ms"`
	P99         float64 `json:"p99_ms"`
	ErrorRate   float64 `json:"error_rate"`
	Dropped     int64   `json:"dropped"`
	ClientBound bool    `json:"client_bound"`
	ClientWhy   string  `json:"client_why,omitempty"`
	Pass        bool    `json:"pass"`
	// Insufficient: neither passed nor failed, too few values to judge a gate.
	Insufficient bool       `json:"insufficient_data,omitempty"`
	Why          string     `json:"why,omitempty"`
	Gates        []jsonGate `json:"gates"`
	// Kind and VUs are a sweep step's; LLM an LLM step's figures.
	Kind string       `json:"kind,omitempty"`
	VUs  int          `json:"vus,omitempty"`
	LLM  *jsonStepLLM `json:"llm,omitempty"`
}

// SearchJSON writes the search as search.json.
func SearchJSON(w io.Writer, s *view.Search) error {
	out := jsonSearch{Format: "perflab-search", Version: 1, Plan: s.Plan, Profile: s.Profile, Workload: s.Workload,
		Target: s.Target, Gates: s.Gates, Sustained: s.Sustained, Failed: s.Failed, Limit: s.Limit, Stopped: s.Stopped,
		StepSeconds: s.StepDuration.Seconds(), Steps: []jsonSearchStep{}, Resources: toJSONResources(s.Resources),
		KneeFactor: analysis.KneeFactor, KneeMinRise: ms(analysis.KneeMinRise),
		SearchParams: map[string]any{"start": s.Start, "max": s.Max, "step_factor": s.Factor, "bisect": s.Bisect}}
	if k := s.Knee; k != nil {
		out.Knee = &jsonKnee{Rate: k.Rate, Below: k.Below, BaseRate: k.BaseRate, P99: ms(k.P99), Baseline: ms(k.Baseline)}
	}
	for _, st := range s.Steps {
		js := jsonSearchStep{N: st.N, Phase: st.Phase, Rate: st.Rate, Bisect: st.Bisect, Achieved: round6(st.Achieved),
			P50: ms(st.P50), P99: ms(st.P99), ErrorRate: round6(st.ErrorRate), Dropped: st.Dropped,
			ClientBound: st.ClientBound, ClientWhy: st.ClientWhy, Pass: st.Pass, Insufficient: st.Insufficient, Why: st.Why, Gates: []jsonGate{}}
		if g := toJSONSLO(st.Gates); g != nil {
			js.Gates = g.Gates
		}
		js.Kind, js.VUs, js.LLM = st.Kind, st.VUs, toJSONStepLLM(st.LLM)
		out.Steps = append(out.Steps, js)
	}
	if sw := s.Sweep; sw != nil {
		out.Sweep = &jsonSweep{Size: sw.Size, VUs: sw.VUs, Sync: round6(sw.Sync), Throughput: round6(sw.Throughput),
			Rates: append([]float64{}, sw.Rates...), Saturated: sw.Saturated, Share: analysis.SaturationShare}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// readSearchJSON reads back the search.json SearchJSON wrote, for a
// report of the run: the steps without their gates' verdicts, and no
// resources (they are the run's).
func readSearchJSON(r io.Reader) (*view.Search, error) {
	var in jsonSearch
	if err := json.NewDecoder(r).Decode(&in); err != nil {
		return nil, fmt.Errorf("cannot read search.json: %w", err)
	}
	if in.Format != "perflab-search" {
		return nil, fmt.Errorf("cannot read search.json: format %q, want perflab-search", in.Format)
	}
	s := &view.Search{Plan: in.Plan, Profile: in.Profile, Workload: in.Workload, Target: in.Target, Gates: in.Gates,
		Sustained: in.Sustained, Failed: in.Failed, Limit: in.Limit, Stopped: in.Stopped,
		StepDuration: time.Duration(in.StepSeconds * float64(time.Second))}
	num := func(k string) float64 { v, _ := in.SearchParams[k].(float64); return v }
	s.Start, s.Max, s.Factor, s.Bisect = num("start"), num("max"), num("step_factor"), int(num("bisect"))
	fromMS := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	if k := in.Knee; k != nil {
		s.Knee = &analysis.Knee{Rate: k.Rate, Below: k.Below, P99: fromMS(k.P99), BaseRate: k.BaseRate, Baseline: fromMS(k.Baseline)}
	}
	for _, st := range in.Steps {
		s.Steps = append(s.Steps, view.SearchStep{N: st.N, Phase: st.Phase, Rate: st.Rate, Bisect: st.Bisect, Achieved: st.Achieved,
			P50: fromMS(st.P50), P99: fromMS(st.P99), ErrorRate: st.ErrorRate, Dropped: st.Dropped,
			ClientBound: st.ClientBound, ClientWhy: st.ClientWhy, Pass: st.Pass, Insufficient: st.Insufficient, Why: st.Why,
			Kind: st.Kind, VUs: st.VUs, LLM: fromJSONStepLLM(st.LLM)})
	}
	if sw := in.Sweep; sw != nil {
		s.Sweep = &view.Sweep{Size: sw.Size, VUs: sw.VUs, Sync: sw.Sync, Throughput: sw.Throughput, Rates: sw.Rates, Saturated: sw.Saturated}
	}
	return s, nil
}
