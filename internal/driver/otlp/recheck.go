package otlpdriver

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

// traceLook is what the read-back learned of one written trace.
type traceLook struct {
	w      Written
	spans  int       // the most spans an answer showed
	first  int       // the spans the first look showed
	seenAt time.Time // when an answer first showed the trace; zero: never
	grewAt time.Time // when an answer last showed more spans
	err    string    // the last look's error; "" when the system answered
	looks  int       // lookups it stands for (query mode: 404s in the run)
}

// whole is whether the trace was found with every span it was written
// with.
func (l *traceLook) whole() bool { return l.spans > 0 && l.spans >= l.w.Spans }

// lookAll looks up every trace not yet whole, the first look recording
// what it showed, and reports whether any is still not whole.
func (q *querier) lookAll(ctx context.Context, clk driver.Clock, looks []traceLook, first bool) (again bool) {
	st := q.states.Get(-1)
	for i := range looks {
		l := &looks[i]
		if l.whole() {
			continue
		}
		_, spans, err := q.lookup(ctx, st, l.w.ID)
		if err != nil {
			l.err = err.Error()
			again = true
			continue
		}
		now := clk.Now()
		l.err = ""
		if first {
			l.first = spans
		}
		if spans > l.spans {
			if l.spans == 0 {
				l.seenAt = now
			}
			l.spans, l.grewAt = spans, now
		}
		again = again || !l.whole()
	}
	return again
}

// recheck looks up every trace of looks, then again with backoff those
// not yet whole until wait after the first look (driver.Recheck), and
// returns how many rounds it made. With again, every look is a second
// one (a lookup in the run missed them), so whatever it finds is late.
// When ctx ends first, what had no answer yet has the reason as its
// error.
func (q *querier) recheck(ctx context.Context, clk driver.Clock, wait time.Duration, looks []traceLook, again bool) int {
	deadline, first := clk.Now().Add(wait), !again
	n, err := driver.Recheck(ctx, clk, deadline, func(ctx context.Context) bool {
		again := q.lookAll(ctx, clk, looks, first)
		first = false
		return again
	})
	if err != nil {
		for i := range looks {
			if !looks[i].whole() {
				looks[i].err = "the read-back was cut short before its deadline: " + err.Error()
			}
		}
	}
	return n
}

// lookTally sums looks up for one check.
type lookTally struct {
	expected, found, late float64
	lateBy                time.Duration
	lost, unanswered      float64
	firstErr              string
}

// tally counts each look as weight(l) units: found when its trace was
// seen, late when the first look did not see it, lost when still unseen
// by an answer, unanswered when unseen and its last look had no answer.
func tallyTraces(looks []traceLook, weight func(*traceLook) float64) lookTally {
	var t lookTally
	for i := range looks {
		l := &looks[i]
		n := weight(l)
		t.expected += n
		switch {
		case l.spans > 0:
			t.found += n
			if l.first == 0 {
				t.late += n
				t.lateBy = max(t.lateBy, l.seenAt.Sub(l.w.At))
			}
		case l.err != "":
			t.unanswered += n
			t.firstErr = cmp.Or(t.firstErr, l.err)
		default:
			t.lost += n
		}
	}
	return t
}

// tallySpans counts spans: found as the most an answer showed, late as
// those the first look did not show, lost as those missing by the last
// answer, unanswered as those missing when the last look had no answer.
func tallySpans(looks []traceLook) lookTally {
	var t lookTally
	for i := range looks {
		l := &looks[i]
		t.expected += float64(l.w.Spans)
		t.found += float64(l.spans)
		if l.spans > l.first {
			t.late += float64(l.spans - l.first)
			t.lateBy = max(t.lateBy, l.grewAt.Sub(l.w.At))
		}
		missing := float64(max(l.w.Spans-l.spans, 0))
		if l.err != "" {
			t.unanswered += missing
			if missing > 0 {
				t.firstErr = cmp.Or(t.firstErr, l.err)
			}
		} else {
			t.lost += missing
		}
	}
	return t
}

// check is the tally as a check of name and unit, with note, its state
// settled.
func (t lookTally) check(name, unit, note string) driver.Check {
	c := driver.Check{Name: name, Unit: unit, Expected: t.expected, Found: t.found, Late: t.late, LateBy: t.lateBy}
	reason := ""
	if t.unanswered > 0 {
		reason = fmt.Sprintf("%.0f %s had no answer at the end: %s", t.unanswered, unit, t.firstErr)
	}
	c.Settle(t.lost > 0, t.unanswered > 0, reason)
	c.Note = note + t.words(unit)
	return c
}

// words say what was late, lost and unanswered, for a note.
func (t lookTally) words(unit string) string {
	s := ""
	if t.late > 0 {
		s += fmt.Sprintf("; %.0f %s showed only on a re-check, the last %v after its write", t.late, unit, t.lateBy.Round(time.Millisecond))
	}
	if t.lost > 0 {
		s += fmt.Sprintf("; %.0f %s still missing at the deadline", t.lost, unit)
	}
	if t.unanswered > 0 {
		s += fmt.Sprintf("; %.0f %s not verified, the query API did not answer", t.unanswered, unit)
	}
	return s
}
