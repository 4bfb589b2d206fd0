package report

import (
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
)

// The serving engine's own figures (a component's metrics_preset) beside
// the client's time to first token, in every format.

// servingNote says what the serving table holds.
const servingNote = "What the server's own /metrics said over the window (its metrics_preset): requests in its running batch and waiting for it, " +
	"its KV cache in use (p99 of the samples, or their max when fewer than 10), its prefix cache's hit rate (prompt tokens found over those looked up), " +
	"and its time to first token and whole request time from arrival, estimated within its histogram's buckets as histogram_quantile does, " +
	"with the bucket that holds each. Each workload's client figures follow, of all its operations, with what they add to the server's: " +
	"the network, any gateway and the client, as a range over the server's bucket, ~ when the bucket holds the client's figure."

// servingTable is a row per component with serving figures, then a row
// per workload with a client TTFT; nil when no component has any.
func servingTable(res *analysis.Resources, workloads []*analysis.Summary) *table {
	if res == nil {
		return nil
	}
	t := &table{Title: "Serving engine (the server's own figures)", Note: servingNote,
		Head:  []string{"Seen by", "Running p99", "Waiting p99", "KV cache p99", "Prefix hit rate", "TTFT p50", "TTFT p99", "Whole request p50", "Whole request p99"},
		Right: []bool{false, true, true, true, true, true, true, true, true}}
	var server *analysis.Serving
	for _, c := range res.Components {
		s := c.Serving
		if s == nil {
			continue
		}
		if server == nil {
			server = s
		}
		t.Rows = append(t.Rows, []string{"server " + c.Name + " (" + s.Engine + ")", statP99(s.Running, num3), statP99(s.Waiting, num3),
			statP99(s.KVUsage, func(v float64) string { return pct(v, 1) }), hitRate(s),
			serverCell(s.TTFT, false), serverCell(s.TTFT, true), serverCell(s.E2E, false), serverCell(s.E2E, true)})
	}
	if server == nil {
		return nil
	}
	for _, w := range workloads {
		ttft := w.Measures[stats.TTFT]
		if ttft.Count == 0 && w.Latency.Count == 0 {
			continue
		}
		t.Rows = append(t.Rows, []string{"client " + w.Workload.DisplayName(), "", "", "", "",
			clientCell(ttft.P50, ttft.Count, server.TTFT, false), clientCell(ttft.P99, ttft.Count, server.TTFT, true),
			clientCell(w.Latency.P50, w.Latency.Count, server.E2E, false), clientCell(w.Latency.P99, w.Latency.Count, server.E2E, true)})
	}
	return t
}

// statP99 is a gauge's p99 over the window, or its max when too few
// samples support a p99, or "–" when it has none.
func statP99(s analysis.Stat, f func(float64) string) string {
	switch {
	case s.N == 0:
		return "–"
	case s.HasP99():
		return f(s.P99)
	}
	return f(s.Max) + " (max)"
}

func hitRate(s *analysis.Serving) string {
	if !s.HasHitRate {
		return "–"
	}
	if s.Queries > 0 {
		return fmt.Sprintf("%s of %.0f tokens", pct(s.HitRate, 1), s.Queries)
	}
	return pct(s.HitRate, 1) + " (server's mean)"
}

// serverQuantile is t's p50 or p99, false when t cannot give it.
func serverQuantile(t analysis.ServerTimes, p99 bool) (analysis.BucketQuantile, bool) {
	if p99 {
		return t.P99, t.HasP99
	}
	return t.P50, t.Count > 0
}

// serverCell is a server quantile with its bucket: "35.3 ms (20.0–40.0 ms)".
func serverCell(t analysis.ServerTimes, p99 bool) string {
	q, ok := serverQuantile(t, p99)
	if !ok {
		return "–"
	}
	if q.Hi == 0 {
		return dur(q.Est) + " (above " + dur(q.Lo) + ")"
	}
	return dur(q.Est) + " (" + dur(q.Lo) + "–" + dur(q.Hi) + ")"
}

// clientCell is a client quantile and what it adds to the server's: the
// difference to each end of the server's bucket, "~" when the bucket
// holds it.
func clientCell(client time.Duration, n int64, server analysis.ServerTimes, p99 bool) string {
	if n == 0 {
		return "–"
	}
	q, ok := serverQuantile(server, p99)
	if !ok {
		return dur(client)
	}
	switch {
	case client <= q.Lo:
		return dur(client) + " (−" + dur(q.Lo-client) + diffTo(q.Hi-client, q.Hi != 0) + ")"
	case q.Hi != 0 && client > q.Hi:
		return dur(client) + " (+" + dur(client-q.Hi) + diffTo(client-q.Lo, true) + ")"
	}
	return dur(client) + " (~)"
}

// diffTo is the far end of a difference's range.
func diffTo(d time.Duration, bounded bool) string {
	if !bounded {
		return " or more"
	}
	return "–" + dur(d)
}
