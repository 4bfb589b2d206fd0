package builtin

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

func TestCapacityQueueAdmit(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	q := newCapacityQueue(100, ms(25)) // a slot every 10 ms, at most 25 ms of waiting
	for _, tt := range []struct {
		at       time.Duration // arrival after t0
		wait     time.Duration
		admitted bool
	}{
		{0, 0, true},           // slot 0 ms; next 10
		{ms(2), ms(8), true},   // slot 10; next 20
		{ms(3), ms(17), true},  // slot 20; next 30
		{ms(4), ms(26), false}, // slot 30 would wait 26 ms: refused, takes no slot
		{ms(5), ms(25), true},  // slot 30; next 40
		{ms(100), 0, true},     // the queue ran dry: served at once; next 110
		{ms(105), ms(5), true}, // slot 110
		{ms(300), 0, true},     // dry again
	} {
		wait, ok := q.admit(t0.Add(tt.at))
		if ok != tt.admitted || ok && wait != tt.wait {
			t.Errorf("arrival at %v: admit = %v, %v; want %v, %v", tt.at, wait, ok, tt.wait, tt.admitted)
		}
	}
}

// TestCapacityRefusesOverload sends a burst five times the queue's depth
// at a target with a capacity, all at one instant of its (fake, still)
// clock: the first six requests are served in turn, a slot apart, the rest
// answered 503 at once.
func TestCapacityRefusesOverload(t *testing.T) {
	h := NewHTTP(HTTPConfig{Capacity: 100, QueueMax: 50 * time.Millisecond}, nil) // 6 slots fit in 50 ms
	answers := newFakeAnswers(false)
	h.clock = answers
	codes := map[int]int{}
	for range 30 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		codes[rec.Code]++
	}
	if codes[200] != 6 || codes[503] != 24 {
		t.Errorf("answers by status: %v; want 6 × 200 and 24 × 503", codes)
	}
	ms := time.Millisecond
	if got, want := answers.deadlines(), []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms}; !slices.Equal(got, want) {
		t.Errorf("served requests waited until %v, want %v (the first at once)", got, want)
	}
	assertLines(t, scrape(t, h), `perflab_target_requests_total{code="200"} 6`, `perflab_target_requests_total{code="503"} 24`)
}

func TestCapacityValidate(t *testing.T) {
	for _, c := range []HTTPConfig{{Capacity: -1}, {QueueMax: time.Second}, {Capacity: 10, QueueMax: -1}, {Capacity: 2e9}} {
		if len(c.Validate()) == 0 {
			t.Errorf("%+v: no problem reported", c)
		}
	}
	if errs := (HTTPConfig{Capacity: 500, QueueMax: time.Second}).Validate(); errs != nil {
		t.Errorf("valid capacity: %v", errs)
	}
}
