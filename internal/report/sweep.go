package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// kindText is a step's kind, with its VUs for the closed steps.
func kindText(st view.SearchStep) string {
	switch st.Kind {
	case analysis.SweepSynchronous:
		return "synchronous (1 VU)"
	case analysis.SweepThroughput:
		return fmt.Sprintf("throughput (%d VUs)", st.VUs)
	}
	return st.Kind
}

// sweepResult is a sweep's result in one sentence.
func sweepResult(s *view.Search) string {
	sw := s.Sweep
	if sw.Sync <= 0 {
		return "nothing completed one request at a time: no rate to sweep"
	}
	r := fmt.Sprintf("synchronous rate %s (one request at a time)", strong(rateText(sw.Sync)))
	if sw.Throughput > 0 {
		r += fmt.Sprintf(", throughput %s (%d VUs)", strong(rateText(sw.Throughput)), sw.VUs)
	}
	if s.Sustained > 0 {
		r += fmt.Sprintf("; highest constant rate that passed: %s", strong(rateText(s.Sustained)))
	} else if slices.ContainsFunc(s.Steps, func(st view.SearchStep) bool { return st.Insufficient }) {
		r += "; no constant rate passed: steps marked insufficient data had too few requests to judge a gate (lengthen --step-duration)"
	}
	return r
}

// sweepLimit says how the sweep ended, and how over-saturation is judged.
func sweepLimit(s *view.Search) string {
	rule := fmt.Sprintf("a constant rate is over-saturated when it achieves under %.0f %% of itself", 100*analysis.SaturationShare)
	switch s.Limit {
	case "saturated":
		st := stepAt(s, s.Sweep.Saturated)
		return fmt.Sprintf("over-saturation at %s: achieved %.1f/s (%s)", rateText(s.Sweep.Saturated), st.Achieved, rule)
	case "generator":
		st := clientBoundStep(s)
		return fmt.Sprintf("the generator: at %s it was client-bound (%s); run perflab on a larger machine", rateText(st.Rate), st.ClientWhy)
	case "flat":
		return "the throughput step went no faster than one request at a time: there are no rates between"
	case "nothing":
		return "no request completed in the synchronous step; check the target with perflab run"
	case "size":
		return fmt.Sprintf("every step ran; none was over-saturated (%s)", rule)
	}
	return "the sweep stopped early: " + s.Stopped
}

// stepAt is the constant step at rate.
func stepAt(s *view.Search, rate float64) view.SearchStep {
	for _, st := range s.Steps {
		if st.Kind == analysis.SweepConstant && st.Rate == rate {
			return st
		}
	}
	return view.SearchStep{}
}

// sweepFacts is a sweep's result, limit, knee and how it ran.
func sweepFacts(d *doc, s *view.Search, inRun bool) {
	t := &table{Facts: true}
	var rates []string
	for _, r := range s.Sweep.Rates {
		rates = append(rates, rateText(r))
	}
	t.Rows = append(t.Rows, []string{"Result", sweepResult(s)}, []string{"Limit", sweepLimit(s)}, []string{"Knee", kneeText(s)},
		[]string{"Steps", fmt.Sprintf("%d of %d, %s each: one request at a time (the closed model, 1 VU), as fast as it goes (%d VUs), then constant rates (the open model, at most %d VUs) evenly spaced up to the throughput, lowest first: %s",
			len(s.Steps), s.Sweep.Size, s.StepDuration, s.Sweep.VUs, s.Sweep.VUs, dash(strings.Join(rates, ", ")))},
		[]string{"Workload", fmt.Sprintf("%s of profile %s → %s", code(s.Workload), code(s.Profile), code(s.Target))})
	if len(s.Gates) > 0 {
		var gates []string
		for _, g := range s.Gates {
			gates = append(gates, code(g))
		}
		t.Rows = append(t.Rows, []string{"SLO", strings.Join(gates, ", ") + ", each judged over the step's steady-state window"})
	}
	if s.Command != "" {
		t.Rows = append(t.Rows, []string{"Command", code(s.Command)})
	}
	if !inRun {
		t.Rows = append(t.Rows, []string{"Run", code(s.Dir) + ": report.md has every step's figures, components and resources"})
	}
	d.table(t)
}

// llmHead and llmRow are the steps table's LLM columns.
// Output tokens/s is the total; per user is one stream's own rate, 1 /
// its TPOT p50, as vLLM's benchmark sets the two against each other.
var llmHead = []string{"TTFT p50", "TTFT p99", "ITL p50", "Output tokens/s", "Tokens/s per user", "Goodput"}

func llmRow(st view.SearchStep) []string {
	l := st.LLM
	if l == nil {
		return []string{"–", "–", "–", "–", "–", "–"}
	}
	good := "–"
	if g := l.Goodput; g != nil {
		good = fmt.Sprintf("%s (%s/s)", pct(g.Share, 1), num3(g.Rate))
	}
	perUser := "–"
	if l.PerUserTokensPS > 0 {
		perUser = num3(l.PerUserTokensPS) + "/s"
	}
	return []string{dur(l.TTFTP50), dur(l.TTFTP99), dur(l.ITLP50), num3(l.OutputTokensPS) + "/s", perUser, good}
}

// anyLLM reports whether a step has LLM figures.
func anyLLM(s *view.Search) bool {
	for _, st := range s.Steps {
		if st.LLM != nil {
			return true
		}
	}
	return false
}

// jsonSweep is what a sweep found.
type jsonSweep struct {
	Size       int       `json:"size"`
	VUs        int       `json:"vus"`
	Sync       float64   `json:"synchronous_rate"`
	Throughput float64   `json:"throughput_rate"`
	Rates      []float64 `json:"rates"`
	Saturated  float64   `json:"saturated_rate"`
	Share      float64   `json:"saturation_share"`
}

// jsonStepLLM are an LLM step's figures besides latency.
type jsonStepLLM struct {
	TTFTP50        float64      `json:"ttft_p50_ms"`
	TTFTP99        float64      `json:"ttft_p99_ms"`
	ITLP50         float64      `json:"itl_p50_ms"`
	OutputTokensPS float64      `json:"output_tokens_per_second"`
	PerUser        float64      `json:"output_tokens_per_second_per_user,omitempty"`
	Goodput        *jsonGoodput `json:"goodput,omitempty"`
}

func toJSONStepLLM(l *view.StepLLM) *jsonStepLLM {
	if l == nil {
		return nil
	}
	out := &jsonStepLLM{TTFTP50: ms(l.TTFTP50), TTFTP99: ms(l.TTFTP99), ITLP50: ms(l.ITLP50), OutputTokensPS: round6(l.OutputTokensPS), PerUser: round6(l.PerUserTokensPS)}
	if l.Goodput != nil {
		out.Goodput = goodputJSON(*l.Goodput, true)
	}
	return out
}

func fromJSONStepLLM(l *jsonStepLLM) *view.StepLLM {
	if l == nil {
		return nil
	}
	fromMS := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	out := &view.StepLLM{TTFTP50: fromMS(l.TTFTP50), TTFTP99: fromMS(l.TTFTP99), ITLP50: fromMS(l.ITLP50), OutputTokensPS: l.OutputTokensPS, PerUserTokensPS: l.PerUser}
	if g := l.Goodput; g != nil {
		out.Goodput = &analysis.Goodput{Good: g.Good, Judged: g.Judged, Share: g.Share, Rate: g.PerSecond}
	}
	return out
}
