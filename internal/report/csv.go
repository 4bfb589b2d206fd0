package report

import (
	"cmp"
	"encoding/csv"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// csvColumn is one column of CSV: its name, unit-suffixed where it has a
// unit (latency_p99_ms), and its cell of a row.
type csvColumn struct {
	name string
	cell func(csvRow) string
}

// csvRow is one operation's figures over one interval.
type csvRow struct {
	workload, op string
	f            analysis.IntervalFigures
	partial      bool
}

// csvColumns are the columns of CSV, in order.
var csvColumns = []csvColumn{
	{"start", func(r csvRow) string { return csvTime(r.f.Start) }},
	{"end", func(r csvRow) string { return csvTime(r.f.End) }},
	{"interval_s", func(r csvRow) string { return strconv.FormatFloat(r.f.End.Sub(r.f.Start).Seconds(), 'f', 3, 64) }},
	{"partial", func(r csvRow) string { return strconv.FormatBool(r.partial) }},
	{"workload", func(r csvRow) string { return r.workload }},
	{"operation", func(r csvRow) string { return r.op }},
	{"requests", func(r csvRow) string { return strconv.FormatInt(r.f.Requests, 10) }},
	{"errors", func(r csvRow) string { return strconv.FormatInt(r.f.Errors, 10) }},
	{"rate_per_s", func(r csvRow) string { return strconv.FormatFloat(r.f.Rate, 'f', 3, 64) }},
	{"latency_count", func(r csvRow) string { return strconv.FormatInt(r.f.Latencies, 10) }},
	{"latency_p50_ms", func(r csvRow) string { return quantileMs(r.f.Latencies, 0.5, r.f.P50) }},
	{"latency_p90_ms", func(r csvRow) string { return quantileMs(r.f.Latencies, 0.9, r.f.P90) }},
	{"latency_p99_ms", func(r csvRow) string { return quantileMs(r.f.Latencies, 0.99, r.f.P99) }},
}

// llmColumns are the columns CSV adds when an operation of the run had
// LLM figures (an openai workload): its stream timings at p50 and p99 and
// its tokens, in total and per second of the interval.
var llmColumns = []csvColumn{
	{"ttft_p50_ms", func(r csvRow) string { return quantileMs(r.f.LLM.TTFTs, 0.5, r.f.LLM.TTFT[0]) }},
	{"ttft_p99_ms", func(r csvRow) string { return quantileMs(r.f.LLM.TTFTs, 0.99, r.f.LLM.TTFT[1]) }},
	{"itl_p50_ms", func(r csvRow) string { return quantileMs(r.f.LLM.ITLs, 0.5, r.f.LLM.ITL[0]) }},
	{"itl_p99_ms", func(r csvRow) string { return quantileMs(r.f.LLM.ITLs, 0.99, r.f.LLM.ITL[1]) }},
	{"tpot_p50_ms", func(r csvRow) string { return quantileMs(r.f.LLM.TPOTs, 0.5, r.f.LLM.TPOT[0]) }},
	{"tpot_p99_ms", func(r csvRow) string { return quantileMs(r.f.LLM.TPOTs, 0.99, r.f.LLM.TPOT[1]) }},
	{"prompt_tokens", func(r csvRow) string { return strconv.FormatInt(r.f.LLM.PromptTokens, 10) }},
	{"output_tokens", func(r csvRow) string { return strconv.FormatInt(r.f.LLM.OutputTokens, 10) }},
	{"output_tokens_per_s", func(r csvRow) string { return perSecond(r.f, r.f.LLM.OutputTokens) }},
}

// quantileMs is quantile q, d, of an interval's n values in
// milliseconds; "" when n is too few to tell it from the top of the
// sample (analysis.MinCountFor: a p99 of 10 values is their max).
func quantileMs(n int64, q float64, d time.Duration) string {
	if n < analysis.MinCountFor(q) {
		return ""
	}
	return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64)
}

// perSecond is n over the interval's length.
func perSecond(f analysis.IntervalFigures, n int64) string {
	secs := f.End.Sub(f.Start).Seconds()
	if secs <= 0 {
		return ""
	}
	return strconv.FormatFloat(float64(n)/secs, 'f', 3, 64)
}

// CSV writes every operation's figures, interval by interval, for a
// spreadsheet or a CI chart: one row per operation per interval, in time
// order (then by workload and operation), each figure in the unit its
// column names: times RFC 3339 in UTC with milliseconds, latency
// percentiles of the interval's successful requests in milliseconds
// (empty where it had none). An interval shorter than the run's full
// ones (the last of a load, cut at its end) is kept, so that the rows add
// up to the run's totals, and marked partial=true: its rate rests on a
// fraction of a second. A run with LLM operations has llmColumns too.
func CSV(w io.Writer, r *view.Run) error {
	cw := csv.NewWriter(w)
	rows, columns := csvRows(r), csvColumns
	if slices.ContainsFunc(rows, func(r csvRow) bool { return r.f.LLM != (analysis.LLMFigures{}) }) {
		columns = append(slices.Clone(columns), llmColumns...)
	}
	head := make([]string, len(columns))
	for i, c := range columns {
		head[i] = c.name
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, row := range rows {
		cells := make([]string, len(columns))
		for i, c := range columns {
			cells[i] = c.cell(row)
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvRows are the rows of r in time order, each marked partial when its
// interval is shorter than the longest of the run's (all but the first
// and last of a load are full).
func csvRows(r *view.Run) []csvRow {
	var rows []csvRow
	var full time.Duration
	for _, wl := range slices.Sorted(maps.Keys(r.OpTimelines)) {
		ops := r.OpTimelines[wl]
		for _, op := range slices.Sorted(maps.Keys(ops)) {
			for _, f := range ops[op] {
				rows = append(rows, csvRow{workload: wl, op: op, f: f})
				full = max(full, f.End.Sub(f.Start))
			}
		}
	}
	for i := range rows {
		rows[i].partial = rows[i].f.End.Sub(rows[i].f.Start) < full*9/10
	}
	slices.SortStableFunc(rows, func(a, b csvRow) int { return cmp.Compare(a.f.Start.UnixNano(), b.f.Start.UnixNano()) })
	return rows
}

func csvTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
