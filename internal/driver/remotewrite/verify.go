package remotewrite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/secret"
)

// ackLog counts what the receiver acknowledged (2xx): samples, and which
// series got at least one, as a bit per template series per instance, so
// that a series is counted once however many samples it got.
type ackLog struct {
	mu          sync.Mutex
	spt         int
	seen        map[uint64][]uint64 // instance id → bitset over the template
	series      int64
	samples     int64
	histograms  int64
	exemplars   int64
	lastHist    map[histKey]uint64 // native histogram series → the round of its last acknowledged histogram
	first, last int64              // sample timestamps, ms; first is 0 until a batch is acknowledged
	lastAt      time.Time          // when the last batch was acknowledged
}

func (a *ackLog) add(b *batch, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[uint64][]uint64{}
	}
	for _, s := range b.segs {
		set := a.seen[s.id]
		if set == nil {
			set = make([]uint64, (a.spt+63)/64)
			a.seen[s.id] = set
		}
		a.series += int64(setRange(set, s.lo, s.hi))
	}
	a.samples += int64(b.samples)
	a.histograms += int64(b.histograms)
	a.exemplars += int64(b.exemplars)
	for _, h := range b.hists {
		if a.lastHist == nil {
			a.lastHist = map[histKey]uint64{}
		}
		k := histKey{h.id, h.ti}
		if r, ok := a.lastHist[k]; !ok || h.round > r {
			a.lastHist[k] = h.round
		}
	}
	if a.first == 0 || b.ts < a.first {
		a.first = b.ts
	}
	a.last = max(a.last, b.ts)
	a.lastAt = at
}

// setRange sets bits [lo, hi) and returns how many were not set before.
func setRange(set []uint64, lo, hi uint32) int {
	n := 0
	for i := lo; i < hi; {
		w, bit := i/64, i%64
		span := min(64-bit, hi-i)
		mask := (^uint64(0) >> (64 - span)) << bit
		n += bits.OnesCount64(mask &^ set[w])
		set[w] |= mask
		i += span
	}
	return n
}

func (a *ackLog) snapshot() (series, samples, first, last int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.series, a.samples, a.first, a.last
}

// histKey is a native histogram series: template series ti of the target
// whose instance has id.
type histKey struct {
	id uint64
	ti uint32
}

// readBack is what was acknowledged, for a read-back of it; tmpl is the
// template, whose native histograms' last values it adds up.
func (a *ackLog) readBack(tmpl []tseries) readBack {
	a.mu.Lock()
	defer a.mu.Unlock()
	rb := readBack{Series: a.series, Samples: a.samples, First: a.first, Last: a.last, AckedAt: a.lastAt, Histograms: a.histograms, Exemplars: a.exemplars}
	var buf []int64
	for k, round := range a.lastHist {
		count, sum, _ := tmpl[k.ti].histValue(k.id, round, buf[:0])
		rb.HistCount += float64(count)
		rb.HistSum += sum
	}
	return rb
}

// Verify asks the receiver's Prometheus API (Config.QueryURL) how many
// series and samples with this run's job label it holds between the first
// and the last acknowledged sample, and compares them with what it
// acknowledged. Since receivers show fresh data late, it asks again with
// backoff until both are found or VerifyWait after the first ask: what
// shows only then is late, what is still missing lost, and a count the
// API did not answer at the end is unverified. Found above expected is
// not lost (a request that timed out or failed may have been stored all
// the same). Without a QueryURL there is nothing to check: nil, nil.
//
// Beside the read-back, and without a QueryURL too, the receiver's own
// count of what it wrote (remote write 2.0's written headers) is checked
// against what was sent (ackChecks).
func (d *Driver) Verify(ctx context.Context) ([]driver.Check, error) {
	checks, err := d.verify(ctx, d.acks.readBack(d.gen.tmpl))
	return withAcks(checks, d.proto.snapshot()), err
}

// withAcks adds what was sent and what the receiver said it wrote to the
// read-back checks: in the samples' and histograms' notes, and as checks
// of their own (ackChecks).
func withAcks(checks []driver.Check, figs ackFigures) []driver.Check {
	said := figs.okSent != counts{}
	for i, c := range checks {
		switch {
		case c.State == driver.CheckUnverified:
		case c.Name == "samples":
			checks[i].Note = sentAckedRead(figs.sent.samples, figs.acked.samples, said, c.Found) + "; " + c.Note
		case c.Name == "histograms":
			checks[i].Note = sentAckedRead(figs.sent.histograms, figs.acked.histograms, said, c.Found) + "; " + c.Note
		case c.Name == "exemplars":
			checks[i].Note = sentAckedRead(figs.sent.exemplars, figs.acked.exemplars, said, c.Found) + "; " + c.Note
		}
	}
	return append(checks, ackChecks(figs)...)
}

// sentAckedRead is "sent 2800 / acknowledged 2800 / read back 2800": what
// was sent, what the receiver said it wrote (not available from a 1.0
// receiver), and what the read-back found.
func sentAckedRead(sent, acked int64, said bool, found float64) string {
	ack := "n/a (remote write 1.0)"
	if said {
		ack = strconv.FormatInt(acked, 10)
	}
	return fmt.Sprintf("sent %d / acknowledged %s / read back %.0f", sent, ack, found)
}

// verify compares what the receiver holds with what was acknowledged;
// what shows only on a re-check is late by the time since acked.AckedAt.
func (d *Driver) verify(ctx context.Context, acked readBack) ([]driver.Check, error) {
	if d.cfg.QueryURL == "" {
		return nil, nil
	}
	series, samples, first, last := acked.Series, acked.Samples, acked.First, acked.Last
	if samples+acked.Histograms == 0 {
		note := "nothing was acknowledged, so there is nothing to read back"
		return []driver.Check{
			{Name: "series", Unit: "series", State: driver.CheckOK, Note: note},
			{Name: "samples", Unit: "samples", State: driver.CheckOK, Note: note},
		}, nil
	}
	window := strconv.FormatInt(last-first+1, 10) + "ms"
	at := strconv.FormatInt(last/1000, 10) + "." + fmt.Sprintf("%03d", last%1000)
	floats, natives := d.gen.names(false), d.gen.names(true)
	counts := []*countPoll{
		{want: float64(series), queries: countQueries("count", append(floats, natives...), d.cfg.Job, window)},
		{want: float64(samples), queries: countQueries("sum", floats, d.cfg.Job, window)},
	}
	if len(natives) > 0 {
		counts = append(counts, histPolls(acked, natives, d.cfg.Job, window)...)
	}
	var exemplars *countPoll
	if d.cfg.ExemplarPercent > 0 {
		exemplars = &countPoll{want: float64(acked.Exemplars), count: func(ctx context.Context) (float64, error) {
			return d.countExemplars(ctx, first, last)
		}}
		counts = append(counts, exemplars)
	}
	rounds := d.pollCounts(ctx, counts, at)
	checks := []driver.Check{
		counts[0].check("series", "series", "series", d.cfg.Job, acked.AckedAt, rounds),
		counts[1].check("samples", "sample", "samples", d.cfg.Job, acked.AckedAt, rounds),
	}
	if len(natives) > 0 {
		checks = append(checks,
			counts[2].check("histograms", "native histogram", "histograms", d.cfg.Job, acked.AckedAt, rounds),
			counts[3].check("histogram_count", "observation", "observations", d.cfg.Job, acked.AckedAt, rounds),
			counts[4].check("histogram_sum", "second", "seconds", d.cfg.Job, acked.AckedAt, rounds))
	}
	if exemplars != nil {
		checks = append(checks, exemplars.check("exemplars", "exemplar", "exemplars", d.cfg.Job, acked.AckedAt, rounds))
	}
	return checks, nil
}

// histPolls are the read-back counts of native histograms: how many were
// stored (count_over_time counts histogram samples too), and PromQL's
// histogram_count and histogram_sum of each series' last one in the
// window, added up, against what the acknowledged ones held. A sum of
// floats added in another order may differ in its last bits.
func histPolls(acked readBack, natives []string, job, window string) []*countPoll {
	last := func(fn string) []string {
		var qs []string
		for _, n := range natives {
			qs = append(qs, fmt.Sprintf("(sum(%s(last_over_time(%s{%s=%s}[%s]))) or vector(0))",
				fn, n, jobLabel, strconv.Quote(job), window))
		}
		return []string{strings.Join(qs, " + ")}
	}
	return []*countPoll{
		{want: float64(acked.Histograms), queries: countQueries("sum", natives, job, window)},
		{want: acked.HistCount, queries: last("histogram_count")},
		{want: acked.HistSum, tol: 1e-9 * acked.HistSum, queries: last("histogram_sum")},
	}
}

// maxQueryLen bounds one read-back query: VictoriaMetrics refuses queries
// longer than 16 KiB by default.
const maxQueryLen = 8 << 10

// countQueries are queries whose results add up to agg (count: series;
// sum: samples) of count_over_time over window of every series of job:
// one term per metric name, since Prometheus' count_over_time drops the
// name and then refuses series that differ only by it; as few queries as
// fit maxQueryLen.
func countQueries(agg string, names []string, job, window string) []string {
	var out []string
	var b strings.Builder
	for _, n := range names {
		term := fmt.Sprintf("(%s(count_over_time(%s{%s=%s}[%s])) or vector(0))",
			agg, n, jobLabel, strconv.Quote(job), window) // PromQL strings escape as Go's do
		if b.Len() > 0 && b.Len()+len(term)+3 > maxQueryLen {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteString(" + ")
		}
		b.WriteString(term)
	}
	return append(out, b.String())
}

// countPoll is what the asks for one count showed.
type countPoll struct {
	queries []string // their results add up to the count
	want    float64
	tol     float64                                    // how far below want still counts as whole: float sums
	count   func(ctx context.Context) (float64, error) // asks for the count, instead of queries
	asked   bool                                       // the first ask was made
	first   float64                                    // what the first ask showed; 0 when it had no answer
	found   float64                                    // what the last answered ask showed
	wholeAt time.Time                                  // when an answer first reached want; zero: never
	err     error                                      // the last ask's error; nil when it was answered
}

func (c *countPoll) whole() bool { return !c.wholeAt.IsZero() }

// pollCounts asks for every count, then again with backoff for those
// below what they want, until VerifyWait after the first ask
// (driver.Recheck), and returns how many rounds it made.
func (d *Driver) pollCounts(ctx context.Context, counts []*countPoll, at string) int {
	deadline := d.clock.Now().Add(d.cfg.VerifyWait)
	n, err := driver.Recheck(ctx, d.clock, deadline, func(ctx context.Context) bool {
		again := false
		for _, c := range counts {
			if !c.whole() {
				d.ask(ctx, c, at)
				again = again || !c.whole()
			}
		}
		return again
	})
	if err != nil {
		for _, c := range counts {
			if !c.whole() {
				c.err = fmt.Errorf("the read-back was cut short before its deadline: %w", err)
			}
		}
	}
	return n
}

// ask runs c's queries at time at and records what they add up to.
func (d *Driver) ask(ctx context.Context, c *countPoll, at string) {
	first := !c.asked
	c.asked = true
	sum := 0.0
	for _, q := range c.queries {
		v, err := d.queryScalar(ctx, q, at)
		if err != nil {
			c.err = err
			return
		}
		sum += v
	}
	if c.count != nil {
		v, err := c.count(ctx)
		if err != nil {
			c.err = err
			return
		}
		sum = v
	}
	c.err, c.found = nil, sum
	if first {
		c.first = sum
	}
	if sum >= c.want-c.tol {
		c.wholeAt = d.clock.Now()
	}
}

// check is the count's read-back check, its state settled; late data is
// timed from the last acknowledged write.
func (c *countPoll) check(name, one, unit, job string, ackedAt time.Time, rounds int) driver.Check {
	ch := driver.Check{Name: name, Expected: c.want, Found: c.found, Unit: unit}
	if c.whole() && c.first < c.want-c.tol {
		ch.Late, ch.LateBy = c.want-c.first, c.wholeAt.Sub(ackedAt)
	}
	reason := ""
	if c.err != nil {
		reason = "cannot read back the " + unit + ": " + c.err.Error()
	}
	ch.Settle(!c.whole() && c.err == nil, !c.whole() && c.err != nil, reason)
	missing := c.want - c.found
	if c.whole() && missing > 0 { // within tol
		missing = 0
	}
	switch {
	case c.err != nil && !c.whole():
		ch.Note = fmt.Sprintf("the query API did not answer at the end, after %d rounds; the last answer showed %.0f of %.0f", rounds, c.found, c.want)
	case missing > 0:
		ch.Note = fmt.Sprintf("%.0f %s acknowledged with 2xx are missing (%.3g%%) after %d rounds", missing, unit, 100*missing/c.want, rounds)
	case missing < 0:
		ch.Note = fmt.Sprintf("%.0f %s more than acknowledged: a request that failed or timed out may have been "+
			"stored anyway, or another writer uses job %q", -missing, unit, job)
	default:
		ch.Note = "every acknowledged " + one + " was read back"
	}
	if ch.Late > 0 {
		ch.Note += fmt.Sprintf("; %.0f %s showed only on a re-check: all were there %v after the last acknowledged write",
			ch.Late, unit, ch.LateBy.Round(time.Millisecond))
	}
	return ch
}

// queryResponse is what an instant query of a one-number expression says.
type queryResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// queryScalar runs an instant query whose result is one number, or none
// (0: nothing matched).
func (d *Driver) queryScalar(ctx context.Context, query, at string) (float64, error) {
	u := strings.TrimSuffix(d.cfg.QueryURL, "/") + "/api/v1/query"
	form := url.Values{"query": {query}, "time": {at}}.Encode()
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form))
	if err != nil {
		return 0, fmt.Errorf("cannot build query: %w", err)
	}
	req.Host = d.host
	for k, v := range d.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot query %s: %w", secret.URL(d.cfg.QueryURL), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("cannot read query response: %w", err)
	}
	var qr queryResponse
	if err := json.Unmarshal(body, &qr); err != nil {
		return 0, fmt.Errorf("cannot decode query response (HTTP %d): %w", resp.StatusCode, err)
	}
	if qr.Status != "success" {
		q, _, _ := strings.Cut(query, " + ")
		return 0, fmt.Errorf("cannot run query %s: HTTP %d: %s: %s", q, resp.StatusCode, qr.ErrorType, qr.Error)
	}
	if len(qr.Data.Result) == 0 {
		return 0, nil
	}
	s, _ := qr.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("cannot parse query result %q: %w", s, err)
	}
	return v, nil
}
