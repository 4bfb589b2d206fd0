package remotewrite

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// peakHeap runs f while sampling the heap in use, and returns its peak
// above what was in use before f.
func peakHeap(t *testing.T, f func()) uint64 {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return peak - base
}

// discard is a target that answers at once: it reads the body and says
// 204, without a network in between, so that only the generator's side
// is measured.
type discard struct{}

func (discard) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// TestMemoryBoundedWhenBehind: 300 VUs all building requests at once, as
// when the generator falls behind on a busy core and the engine starts a
// VU for every overdue arrival (here 30 times the VUs a run on target
// keeps), hold at most twice the heap that 10 VUs sending the same
// requests do. Before the builders were shared, each VU kept its own 2 MB
// of buffers: 300 VUs held 600 MB.
func TestMemoryBoundedWhenBehind(t *testing.T) {
	testutil.HeapFigures(t)
	cfg := Config{URL: "http://127.0.0.1:1/api/v1/write", Targets: 40, SeriesPerTarget: 1000, Batch: DefaultBatch}
	send := func(d *Driver, vus, each int) {
		var wg sync.WaitGroup
		for vu := range vus {
			wg.Go(func() {
				for range each {
					var r driver.Result
					d.Do(context.Background(), vu, &r)
					if r.Class != stats.OK {
						t.Errorf("%s %s", r.Class, r.Message)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	one := newTestDriver(t, cfg)
	one.client = &http.Client{Transport: discard{}}
	onTarget := peakHeap(t, func() { send(one, 10, 4) }) // plan.DefaultVUsMin VUs, as a run on target keeps
	many := newTestDriver(t, cfg)
	many.client = &http.Client{Transport: discard{}}
	behind := peakHeap(t, func() { send(many, 300, 2) })
	t.Logf("heap peak above the start: 10 VUs %.1f MiB, 300 VUs %.1f MiB", float64(onTarget)/(1<<20), float64(behind)/(1<<20))
	if behind > 2*onTarget {
		t.Errorf("300 VUs at once held %.1f MiB of heap, 10 VUs %.1f MiB: want at most twice", float64(behind)/(1<<20), float64(onTarget)/(1<<20))
	}
}
