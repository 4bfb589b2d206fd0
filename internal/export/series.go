package export

import (
	"slices"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
)

// kind is how a series' values read.
type kind uint8

const (
	counter    kind = iota // a running total since the series' Start
	gauge                  // a value at Time
	summary                // quantiles of the interval, a running count and sum since Start
	nativeHist             // a native histogram, cumulative since Start (remote write only)
)

// Label is one label of a series.
type Label struct{ Name, Value string }

// Quantile is one quantile of a summary.
type Quantile struct{ Q, V float64 }

// Series is one value of one series at one time: what a target is sent.
type Series struct {
	Name      string
	kind      kind
	Labels    []Label // sorted by name, none empty; no __name__
	Start     time.Time
	Time      time.Time
	Value     float64    // counter, gauge
	Count     uint64     // summary
	Sum       float64    // summary
	Quantiles []Quantile // summary: of the interval alone; none when it had no value
	Native    *histogram.Histogram
}

// key identifies a series by its name and labels.
func (s *Series) key() string {
	var b strings.Builder
	b.WriteString(s.Name)
	for _, l := range s.Labels {
		b.WriteByte(0)
		b.WriteString(l.Name)
		b.WriteByte(0)
		b.WriteString(l.Value)
	}
	return b.String()
}

// labels is a label set under construction: Add leaves out empty values,
// sorted sorts a copy.
type labels []Label

func (ls labels) with(pairs ...string) labels {
	out := slices.Clone(ls)
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			out = append(out, Label{pairs[i], pairs[i+1]})
		}
	}
	return out
}

func (ls labels) sorted() []Label {
	out := slices.Clone(ls)
	slices.SortFunc(out, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// sanitize makes s a metric name part: every character that is not a
// letter, a digit or _ becomes _.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// total is the running state of a counter or summary series.
type total struct {
	start time.Time
	value float64
	count uint64
	sum   float64
}

// totals keeps the running totals of the counters and summaries, so that
// what the run hands per interval reaches a target as Prometheus and OTLP
// want counters: cumulative from the series' start.
type totals map[string]*total

// has reports whether s's series has a total.
func (tt totals) has(s Series) bool { return tt[s.key()] != nil }

// add adds v (and for a summary n values of sum) to the series of s and
// returns what to send: s with its running total, preceded, for a series
// seen for the first time, by a zero at start when that is before s.Time.
func (tt totals) add(out []Series, s Series, start time.Time, v float64, n uint64, sum float64) []Series {
	k := s.key()
	t := tt[k]
	if t == nil {
		t = &total{start: start}
		tt[k] = t
		if start.Before(s.Time) { // else a zero would be a second value at one time
			zero := s
			zero.Time, zero.Start, zero.Quantiles = start, start, nil
			out = append(out, zero)
		}
	}
	t.value += v
	t.count += n
	t.sum += sum
	s.Start, s.Value, s.Count, s.Sum = t.start, t.value, t.count, t.sum
	return append(out, s)
}
