package slo

import (
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/units"
)

// Kind is how a metric's threshold is written and its figure shown.
type Kind uint8

const (
	// KindDuration is a latency in seconds, written with a unit: 200ms.
	KindDuration Kind = iota
	// KindFraction is 0…1, written as a fraction or a percentage: 0.001, 0.1%.
	KindFraction
	// KindRate is per second, written as a rate: 950/s, 300/m, 950.
	KindRate
	// KindCount is a whole number of events in the window: 0.
	KindCount
	// KindNumber is a figure the run supplies, written as a plain number.
	KindNumber
)

// metric is one built-in metric.
type metric struct {
	kind  Kind
	perOp bool // has a figure per operation
	doc   string
}

// metrics is the registry of built-in metrics; internal/analysis measures
// each of them.
var metrics = map[string]metric{
	"p50":                {KindDuration, true, "latency p50 of successful requests, from the intended start"},
	"p90":                {KindDuration, true, "latency p90 of successful requests"},
	"p99":                {KindDuration, true, "latency p99 of successful requests"},
	"p999":               {KindDuration, true, "latency p99.9 of successful requests"},
	"max":                {KindDuration, true, "the largest latency of a successful request"},
	"mean":               {KindDuration, true, "the mean latency of successful requests"},
	"ttfb_p50":           {KindDuration, true, "time to first byte p50 of successful requests"},
	"ttfb_p99":           {KindDuration, true, "time to first byte p99 of successful requests"},
	"ttft_p50":           {KindDuration, true, "time to first token p50 (streams)"},
	"ttft_p99":           {KindDuration, true, "time to first token p99 (streams)"},
	"ttst_p50":           {KindDuration, true, "time to second token p50, after the first (streams)"},
	"ttst_p99":           {KindDuration, true, "time to second token p99, after the first (streams)"},
	"itl_p50":            {KindDuration, true, "inter-token latency p50, over every gap"},
	"itl_p99":            {KindDuration, true, "inter-token latency p99, over every gap"},
	"tpot_p50":           {KindDuration, true, "time per output token p50, one per stream"},
	"tpot_p99":           {KindDuration, true, "time per output token p99, one per stream"},
	"ntpot_p50":          {KindDuration, true, "normalized time per output token p50: latency / output tokens, one per request"},
	"ntpot_p99":          {KindDuration, true, "normalized time per output token p99: latency / output tokens, one per request"},
	"output_tokens_rate": {KindRate, true, "output tokens per second"},
	"goodput":            {KindFraction, true, "requests that met every goodput bound / all requests"},
	"goodput_rate":       {KindRate, true, "requests that met every goodput bound, per second"},
	"error_rate":         {KindFraction, true, "failed / all requests"},
	"success_rate":       {KindFraction, true, "successful / all requests"},
	"rate":               {KindRate, true, "completed operations per second"},
	"requests":           {KindCount, true, "requests in the window"},
	"errors":             {KindCount, true, "failed requests in the window"},
	"dropped":            {KindCount, false, "arrivals dropped in the window (every VU busy)"},
}

// Metrics lists the built-in metrics, alphabetically.
func Metrics() []string {
	return slices.Sorted(maps.Keys(metrics))
}

// KindOf is the kind of a built-in metric; ok is false for any other
// name, a figure the run supplies, which is of KindNumber.
func KindOf(metricName string) (k Kind, ok bool) {
	m, ok := metrics[metricName]
	if !ok {
		return KindNumber, false
	}
	return m.kind, true
}

// Format writes a figure of kind k with its unit and three significant
// digits: "183ms", "0.05%", "957/s", "3", "0.125".
func (k Kind) Format(v float64) string {
	switch k {
	case KindDuration:
		switch {
		case v < 1e-3:
			return units.Sig3(v*1e6) + "µs"
		case v < 1:
			return units.Sig3(v*1e3) + "ms"
		}
		return units.Sig3(v) + "s"
	case KindFraction:
		return units.Sig3(v*100) + "%"
	case KindRate:
		return units.Sig3(v) + "/s"
	case KindCount:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// parseThreshold reads a threshold of the given kind; msg says what is
// wrong with it.
func parseThreshold(kind Kind, v string) (float64, string) {
	switch kind {
	case KindDuration:
		if _, err := strconv.ParseFloat(v, 64); err == nil && v != "0" {
			return 0, "want a duration with a unit, like 200ms or 1.5s"
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, "want a duration with a unit, like 200ms or 1.5s"
		}
		return d.Seconds(), ""
	case KindFraction:
		num, pct := strings.CutSuffix(v, "%")
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if pct {
			f /= 100
			// the double nearest the percentage written, as a measured
			// 7/1000 is 0.007's: f / 100 makes 0.7% 0.006999…
			if r, ok := new(big.Rat).SetString(strings.TrimSpace(num)); ok {
				f, _ = r.Quo(r, big.NewRat(100, 1)).Float64()
			}
		}
		if err != nil || !(f >= 0 && f <= 1) {
			return 0, "want a fraction from 0 to 1 or a percentage, like 0.001 or 0.1%"
		}
		return f, ""
	case KindRate:
		r, err := units.ParseRate(v)
		if err != nil {
			return 0, "want a rate, like 950/s, 300/m or 950"
		}
		return r, ""
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || kind == KindCount && f < 0 {
		return 0, "want a plain number, like 0 or 1000"
	}
	return f, ""
}
