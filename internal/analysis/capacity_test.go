package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// runSearch drives a search against a target that passes every rate up to
// capacity and is client-bound from clientAt (0: never), and once at
// hiccup; it returns the rates run.
func runSearch(s *CapacitySearch, capacity, clientAt, hiccup float64) []float64 {
	var rates []float64
	for {
		r, done := s.Next()
		if done || len(rates) > 50 {
			return rates
		}
		rates = append(rates, r)
		client := clientAt > 0 && r >= clientAt || r == hiccup
		if r == hiccup {
			hiccup = -1
		}
		s.Record(r, r <= capacity && !client, client)
	}
}

func TestCapacitySearch(t *testing.T) {
	for _, tt := range []struct {
		name                       string
		s                          CapacitySearch
		capacity, clientAt, hiccup float64
		rates                      string
		passed                     float64
		limit                      string
	}{
		{"bisects to the capacity", CapacitySearch{Start: 100, Max: 1e5, Factor: 2, Bisect: 4}, 500, 0, 0,
			"100 200 400 800 600 500 550 525", 500, "target"},
		{"stops at max", CapacitySearch{Start: 100, Max: 300, Factor: 2, Bisect: 4}, 1000, 0, 0,
			"100 200 300", 300, "max"},
		{"the start fails", CapacitySearch{Start: 100, Max: 1e5, Factor: 2, Bisect: 4}, 50, 0, 0,
			"100", 0, "start"},
		{"the generator is the limit", CapacitySearch{Start: 100, Max: 1e5, Factor: 2, Bisect: 4}, 5000, 700, 0,
			"100 200 400 800 800", 400, "generator"},
		{"no bisection", CapacitySearch{Start: 1000, Max: 1e5, Factor: 3, Bisect: 0}, 5000, 0, 0,
			"1000 3000 9000", 3000, "target"},
		{"a hiccup is run again", CapacitySearch{Start: 100, Max: 1e5, Factor: 2, Bisect: 2}, 500, 0, 200,
			"100 200 200 400 800 600 500", 500, "target"},
		{"a hiccup while bisecting", CapacitySearch{Start: 100, Max: 1e5, Factor: 2, Bisect: 2}, 500, 0, 600,
			"100 200 400 800 600 600 500", 500, "target"},
		{"rounds to three digits", CapacitySearch{Start: 333, Max: 1e5, Factor: 1.5, Bisect: 2}, 800, 0, 0,
			"333 500 750 1130 940 845", 750, "target"},
		// Between 1000 and 1009 the midpoint rounds to 1000, which passed,
		// and between 1000 and 1010 to 1010, which failed: nothing is left
		// to run at three digits, and neither rate is run again.
		{"the midpoint rounds to the rate that passed", CapacitySearch{Start: 1000, Max: 1009, Factor: 2, Bisect: 4}, 1005, 0, 0,
			"1000 1009", 1000, "target"},
		{"the midpoint rounds to the rate that failed", CapacitySearch{Start: 1000, Max: 1010, Factor: 2, Bisect: 4}, 1005, 0, 0,
			"1000 1010", 1000, "target"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			rates := runSearch(&s, tt.capacity, tt.clientAt, tt.hiccup)
			if got := strings.Trim(fmt.Sprint(rates), "[]"); got != tt.rates {
				t.Errorf("rates %s, want %s", got, tt.rates)
			}
			if s.Passed != tt.passed || s.Limit() != tt.limit {
				t.Errorf("passed %v, limit %s; want %v, %s", s.Passed, s.Limit(), tt.passed, tt.limit)
			}
		})
	}
}

func TestFindKnee(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	steps := []RateLatency{{800, ms(900), 1000}, {100, ms(2), 1000}, {200, ms(2.5), 1000}, {400, ms(3.5), 1000}, {600, ms(40), 1000}}
	k, ok := FindKnee(steps)
	if !ok || k.Rate != 600 || k.Below != 400 || k.Baseline != ms(2) || k.P99 != ms(40) {
		t.Errorf("knee = %+v, %v", k, ok)
	}
	// At the edges: twice the baseline is not past the knee, more is; a
	// rise of exactly KneeMinRise is enough; a p99 of exactly 100
	// latencies counts.
	for _, tt := range []struct {
		name  string
		steps []RateLatency
		rate  float64 // 0: no knee
	}{
		{"twice the baseline", []RateLatency{{100, ms(2), 1000}, {200, ms(4), 1000}}, 0},
		{"just over twice", []RateLatency{{100, ms(2), 1000}, {200, ms(4.01), 1000}}, 200},
		{"1.5 times, by 1 ms", []RateLatency{{100, ms(2), 1000}, {200, ms(3), 1000}}, 0},
		{"a rise of exactly 1 ms", []RateLatency{{100, ms(0.5), 1000}, {200, ms(1.5), 1000}}, 200},
		{"a rise just under 1 ms", []RateLatency{{100, ms(0.4), 1000}, {200, ms(1.3), 1000}}, 0},
		{"p99s of 100 latencies", []RateLatency{{100, ms(2), 100}, {200, ms(30), 100}}, 200},
		{"p99s of 99 latencies", []RateLatency{{100, ms(2), 99}, {200, ms(30), 1000}}, 0},
		// The same rate run twice (a client-bound step is run again): the
		// first run is the baseline, in the order the steps were run.
		{"a rate run twice", []RateLatency{{100, ms(10), 1000}, {100, ms(2), 1000}, {200, ms(25), 1000}}, 200},
	} {
		k, ok := FindKnee(tt.steps)
		if ok != (tt.rate > 0) || k.Rate != tt.rate || ok && k.Baseline != tt.steps[0].P99 {
			t.Errorf("%s: knee %+v, %v; want at %v over %v", tt.name, k, ok, tt.rate, tt.steps[0].P99)
		}
	}
	// Sub-millisecond noise is no knee, nor is a p99 from too few latencies.
	if k, ok := FindKnee([]RateLatency{{100, ms(0.2), 1000}, {200, ms(0.6), 1000}, {400, ms(50), 10}}); ok {
		t.Errorf("knee %+v from noise", k)
	}
}

func TestGeneratorLimited(t *testing.T) {
	sum := func(lag time.Duration, scheduled, unissued uint64) *Summary {
		return &Summary{Workload: Workload{Model: "open", Scheduled: scheduled, Unissued: unissued},
			Lag: Quantiles{Count: 100, P99: lag}, Ops: []Op{{Latency: Quantiles{P99: 45 * time.Millisecond}}}}
	}
	cpu := &Resources{ClientBound: true, GeneratorCPU: 1.9, CoresAvailable: 2}
	for _, tt := range []struct {
		sum *Summary
		res *Resources
		why string
	}{
		{sum(time.Millisecond, 1000, 0), nil, ""},
		{sum(30*time.Millisecond, 1000, 0), &Resources{CoresAvailable: 2}, ""}, // lag alone
		{sum(time.Millisecond, 1000, 0), cpu, "generator CPU P99 1.9 of 2 cores (≥ 90 %)"},
		{sum(30*time.Millisecond, 500, 500), nil, "the generator issued 500 of the 1000 arrivals due (500 not issued, 50.0 %)"},
		{&Summary{Workload: Workload{Model: "closed"}, Lag: Quantiles{P99: 50 * time.Millisecond}}, nil, ""},
	} {
		if got, why := GeneratorLimited(tt.sum, tt.res); got != (tt.why != "") || why != tt.why {
			t.Errorf("%+v, %+v: limited %v (%s), want %q", tt.sum.Workload, tt.res, got, why, tt.why)
		}
	}
}
