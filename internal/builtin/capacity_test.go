package builtin

import (
	"net/http"
	"strings"
	"sync"
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
// at a target with a capacity: the first requests are served in turn, the
// rest answered 503 at once.
func TestCapacityRefusesOverload(t *testing.T) {
	cfg := HTTPConfig{Capacity: 100, QueueMax: 50 * time.Millisecond} // 6 slots fit in 50 ms
	srv := startTarget(t, cfg, nil)
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			resp, err := http.Get(srv.URL + "/")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[200] < 6 || codes[503] == 0 || codes[200]+codes[503] != 30 {
		t.Errorf("answers by status: %v; want at least 6 × 200 and the rest 503", codes)
	}
	code, body, _ := get(t, srv.URL+"/metrics")
	if code != 200 || !strings.Contains(string(body), `perflab_target_requests_total{code="503"}`) {
		t.Errorf("/metrics lacks the 503 count")
	}
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
