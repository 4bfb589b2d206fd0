package remotewrite

import (
	"fmt"
	"math"
	"strconv"

	"github.com/perflab/perflab/internal/driver"
)

// ActiveSeries is the number of series written in every scrape interval:
// targets × series per target. Churn replaces series, it does not add any.
func (d *Driver) ActiveSeries() int64 { return int64(d.gen.active) }

// SamplesPerSecond is the natural sample rate: active series / scrape
// interval.
func (d *Driver) SamplesPerSecond() float64 {
	return float64(d.gen.active) / d.cfg.ScrapeInterval.Seconds()
}

// RequestsPerSecond is the request rate at which every series gets one
// sample per scrape interval: SamplesPerSecond / the samples per request.
func (d *Driver) RequestsPerSecond() float64 { return d.SamplesPerSecond() / float64(d.batch) }

// NewSeriesPerMinute is the churn rate: series of replaced targets per
// minute.
func (d *Driver) NewSeriesPerMinute() float64 {
	if d.cfg.Churn.Percent == 0 {
		return 0
	}
	perEvery := float64(d.gen.local) * d.cfg.Churn.Percent / 100 * float64(d.gen.spt)
	return perEvery / d.cfg.Churn.Every.Minutes()
}

// Facts states the load's derived figures, and what the run counted so far:
// samples and series acknowledged, retries and batches given up.
func (d *Driver) Facts() []driver.Fact {
	series, samples, _, _ := d.acks.snapshot()
	queued, queuedSamples := d.retry.waiting()
	figs := d.proto.snapshot()
	facts := []driver.Fact{
		{Name: "protocol", Value: d.protocolFact(figs)},
		{Name: "targets", Value: strconv.FormatUint(d.gen.local, 10)},
		{Name: "series per target", Value: strconv.FormatUint(d.gen.spt, 10)},
		{Name: "active series", Value: strconv.FormatInt(d.ActiveSeries(), 10)},
		{Name: "scrape interval", Value: d.cfg.ScrapeInterval.String()},
		{Name: "samples/s", Value: num(d.SamplesPerSecond())},
		{Name: "samples per request", Value: strconv.Itoa(d.batch)},
		{Name: "requests/s", Value: num(d.RequestsPerSecond())},
		{Name: "new series/min (churn)", Value: num(d.NewSeriesPerMinute())},
		{Name: "job", Value: d.cfg.Job},
		{Name: "samples acknowledged", Value: strconv.FormatInt(samples, 10)},
		{Name: "series acknowledged", Value: strconv.FormatInt(series, 10)},
	}
	if n := d.cfg.NativeHistograms; n != nil {
		s := n.shape()
		facts = append(facts, driver.Fact{Name: "native histograms per target",
			Value: fmt.Sprintf("%d (schema %d, %d buckets, %v observations per interval; counted in samples/s)", d.gen.natives(), s.schema, s.buckets, s.obs)})
	}
	facts = append(facts, ackFacts(figs)...)
	if d.cfg.Retries > 0 {
		facts = append(facts,
			driver.Fact{Name: "retries sent", Value: strconv.FormatInt(d.retry.retried.Load(), 10)},
			driver.Fact{Name: "batches given up after retries", Value: strconv.FormatInt(d.retry.gaveUp.Load(), 10)},
			driver.Fact{Name: "batches still queued for retry", Value: strconv.Itoa(queued)},
			driver.Fact{Name: "samples still queued for retry", Value: strconv.Itoa(queuedSamples)},
		)
	}
	return facts
}

// num formats v with at most three decimals and no exponent.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
