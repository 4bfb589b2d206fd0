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
	first, last int64 // sample timestamps, ms; first is 0 until a batch is acknowledged
}

func (a *ackLog) add(b *batch) {
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
	if a.first == 0 || b.ts < a.first {
		a.first = b.ts
	}
	a.last = max(a.last, b.ts)
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

// Verify asks the receiver's Prometheus API (Config.QueryURL) how many
// series and samples with this run's job label it holds between the first
// and the last acknowledged sample, and compares them with what it
// acknowledged. It asks again every second until both are found or
// VerifyWait passes, since receivers show fresh data late. Found below
// expected is reported as lost; found above expected is not (a request
// that timed out or failed may have been stored all the same). Without a
// QueryURL there is nothing to check: nil, nil.
func (d *Driver) Verify(ctx context.Context) ([]driver.Check, error) {
	var rb readBack
	rb.Series, rb.Samples, rb.First, rb.Last = d.acks.snapshot()
	return d.verify(ctx, rb)
}

// verify compares what the receiver holds with what was acknowledged.
func (d *Driver) verify(ctx context.Context, acked readBack) ([]driver.Check, error) {
	if d.cfg.QueryURL == "" {
		return nil, nil
	}
	series, samples, first, last := acked.Series, acked.Samples, acked.First, acked.Last
	if samples == 0 {
		note := "nothing was acknowledged, so there is nothing to read back"
		return []driver.Check{
			{Name: "series", Unit: "series", Note: note},
			{Name: "samples", Unit: "samples", Note: note},
		}, nil
	}
	window := strconv.FormatInt(last-first+1, 10) + "ms"
	at := strconv.FormatInt(last/1000, 10) + "." + fmt.Sprintf("%03d", last%1000)
	want := []int64{series, samples}
	queries := [][]string{
		countQueries("count", d.gen.names(), d.cfg.Job, window),
		countQueries("sum", d.gen.names(), d.cfg.Job, window),
	}
	found, err := d.pollCounts(ctx, queries, at, want)
	if err != nil {
		return nil, err
	}
	return []driver.Check{
		check("series", "series", "series", want[0], found[0], d.cfg.Job),
		check("samples", "sample", "samples", want[1], found[1], d.cfg.Job),
	}, nil
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

// pollCounts runs each group of queries at time at and adds up its
// results, until every sum reaches want or VerifyWait passes, and returns
// the last sums.
func (d *Driver) pollCounts(ctx context.Context, groups [][]string, at string, want []int64) ([]float64, error) {
	deadline := time.Now().Add(d.cfg.VerifyWait)
	found := make([]float64, len(groups))
	for {
		err := d.countAll(ctx, groups, at, found)
		done := err == nil
		for i := range found {
			done = done && found[i] >= float64(want[i])
		}
		if done || !time.Now().Before(deadline) {
			return found, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cannot read back the written series: %w", ctx.Err())
		case <-time.After(min(time.Second, time.Until(deadline))):
		}
	}
}

func (d *Driver) countAll(ctx context.Context, groups [][]string, at string, found []float64) error {
	for i, qs := range groups {
		found[i] = 0
		for _, q := range qs {
			v, err := d.queryScalar(ctx, q, at)
			if err != nil {
				return err
			}
			found[i] += v
		}
	}
	return nil
}

func check(name, one, unit string, want int64, found float64, job string) driver.Check {
	c := driver.Check{Name: name, Expected: float64(want), Found: found, Unit: unit}
	switch missing := float64(want) - found; {
	case missing > 0:
		c.Lost = true
		c.Note = fmt.Sprintf("%.0f %s acknowledged with 2xx are missing (%.3g%%)", missing, unit, 100*missing/float64(want))
	case missing < 0:
		c.Note = fmt.Sprintf("%.0f %s more than acknowledged: a request that failed or timed out may have been "+
			"stored anyway, or another writer uses job %q", -missing, unit, job)
	default:
		c.Note = "every acknowledged " + one + " was read back"
	}
	return c
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
		return 0, fmt.Errorf("cannot query %s: %w", redactURL(d.cfg.QueryURL), err)
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
