package httpdriver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// The closed model's loops on real sockets, through the engine: the
// package's other tests run the loop's requests one at a time (Do through
// a loop); these run many VUs in the loops, as a load does.

// inFlight is a handler that counts the requests it is serving and the
// most at once, and holds each for hold, or until release is closed.
type inFlight struct {
	now, peak, served atomic.Int64
	hold              time.Duration
	release           chan struct{}
}

func (h *inFlight) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := h.now.Add(1)
	for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
	}
	if h.release != nil {
		<-h.release
	} else {
		time.Sleep(h.hold)
	}
	h.now.Add(-1)
	h.served.Add(1)
	_, _ = w.Write([]byte("ok"))
}

// runOpen runs the open-model workload w, killed when kill is done,
// and merges its intervals.
func runOpen(t *testing.T, kill context.Context, w engine.Workload) (engine.Summary, *stats.OpStats) {
	t.Helper()
	var mu sync.Mutex
	all := stats.NewOpStats()
	sink := engine.SinkFunc(func(_ string, iv *stats.Interval) {
		mu.Lock()
		defer mu.Unlock()
		for _, st := range iv.Ops {
			all.Merge(st)
		}
	})
	w.Interval = 100 * time.Millisecond
	sum, err := engine.Run(context.Background(), kill, w, sink)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return sum, all
}

// runClosed runs a closed-model workload of d with conc, collecting its
// intervals.
func runClosed(t *testing.T, d *Driver, conc *pacer.Concurrency, grace time.Duration) (engine.Summary, *stats.OpStats, []int64) {
	t.Helper()
	var (
		mu  sync.Mutex
		vus []int64
	)
	all := stats.NewOpStats()
	sink := engine.SinkFunc(func(_ string, iv *stats.Interval) {
		mu.Lock()
		defer mu.Unlock()
		vus = append(vus, iv.VUs)
		for _, st := range iv.Ops {
			all.Merge(st)
		}
	})
	w := engine.Workload{Name: "w", Model: engine.Closed, Conc: conc, Grace: grace, Driver: d, Interval: 100 * time.Millisecond}
	sum, err := engine.Run(context.Background(), context.Background(), w, sink)
	if err != nil {
		t.Fatal(err)
	}
	return sum, all, vus
}

// TestLoopsHoldTheVUsOnTheirOwnConnections: 8 VUs against a server that
// holds each request 3 ms: 8 requests in flight at most and at once, on 8
// keep-alive connections, every answer recorded whole, none faster than
// the server.
func TestLoopsHoldTheVUsOnTheirOwnConnections(t *testing.T) {
	h := &inFlight{hold: 3 * time.Millisecond}
	ts := startServer(t, modeH1, h)
	d := newDriver(t, Config{URL: ts.URL + "/"})
	if !d.loops() {
		t.Fatal("plain http:// takes no loop")
	}
	sum, all, _ := runClosed(t, d, pacer.FixedConcurrency(8, 400*time.Millisecond), time.Second)
	if p := h.peak.Load(); p != 8 {
		t.Errorf("%d requests in flight at most, want 8", p)
	}
	if n := ts.conns.Load(); n != 8 {
		t.Errorf("%d connections for 8 VUs, want 8", n)
	}
	ok := all.Classes[stats.OK]
	if ok == 0 || ok != all.Classes.Total() || ok != h.served.Load() {
		t.Errorf("classes %v; the server served %d", all.Classes, h.served.Load())
	}
	if lat := all.Latency.Min(); lat < 3*time.Millisecond {
		t.Errorf("fastest answer %v, the server holds each 3ms", lat)
	}
	if all.Counters[stats.BodyBytes] != 2*ok {
		t.Errorf("%d bytes received for %d answers of 2", all.Counters[stats.BodyBytes], ok)
	}
	if sum.MaxVUs != 8 {
		t.Errorf("MaxVUs %d, want 8", sum.MaxVUs)
	}
}

// TestLoopsFollowARamp: from 2 VUs up to 6 and down to 1: the VUs the
// schedule adds join (a loop waiting on its sockets is woken), those it
// removes leave after their request, and no more are ever in flight.
// It runs alone (testutil.Alone): its stages are 100 to 200 ms, and
// beside the suite's other lines a late tick moved the ramp's end into
// the hold's last interval.
func TestLoopsFollowARamp(t *testing.T) {
	testutil.Alone(t)
	h := &inFlight{hold: 2 * time.Millisecond}
	ts := startServer(t, modeH1, h)
	d := newDriver(t, Config{URL: ts.URL + "/"})
	conc := &pacer.Concurrency{Start: 2, Stages: []pacer.Stage{
		{Duration: 200 * time.Millisecond, Target: 6}, {Duration: 200 * time.Millisecond, Target: 6},
		{Duration: 100 * time.Millisecond, Target: 1}, {Duration: 200 * time.Millisecond, Target: 1}}}
	sum, all, vus := runClosed(t, d, conc, time.Second)
	if p := h.peak.Load(); p != 6 {
		t.Errorf("%d requests in flight at most, want 6", p)
	}
	if sum.MaxVUs != 6 || ts.conns.Load() != 6 {
		t.Errorf("MaxVUs %d on %d connections, want 6", sum.MaxVUs, ts.conns.Load())
	}
	if all.Classes[stats.OK] != all.Classes.Total() {
		t.Errorf("classes %v, want every request OK", all.Classes)
	}
	// Intervals of 100 ms: 6 VUs at the hold's end (0.4 s), 1 at the run's
	// (0.7 s), each 150 ms or more after the schedule said so; none after.
	if len(vus) < 7 || vus[3] != 6 || vus[6] != 1 || vus[len(vus)-1] != 0 {
		t.Errorf("VUs per interval %v", vus)
	}
}

// TestLoopsInterruptAfterTheGrace: requests the server never answers are
// cut short as interrupted once the grace is over, and the run ends.
func TestLoopsInterruptAfterTheGrace(t *testing.T) {
	h := &inFlight{release: make(chan struct{})}
	ts := startServer(t, modeH1, h)
	defer close(h.release) // before the server's Close, which waits for its handlers
	d := newDriver(t, Config{URL: ts.URL + "/"})
	sum, all, vus := runClosed(t, d, pacer.FixedConcurrency(4, 100*time.Millisecond), 50*time.Millisecond)
	if all.Classes[stats.Interrupted] != 4 || all.Classes.Total() != 4 {
		t.Errorf("classes %v, want the 4 requests in flight interrupted", all.Classes)
	}
	if last := vus[len(vus)-1]; last != 0 {
		t.Errorf("%d VUs still live after the run", last)
	}
	if took := sum.End.Sub(sum.LoadEnd); took < 50*time.Millisecond || took > 10*time.Second {
		t.Errorf("the drain took %v, want the grace of 50ms and a prompt end", took)
	}
}

// idleVU1 is 2 VUs, then 1 for 300 ms (VU 1 idle), then 2 again.
func idleVU1() *pacer.Concurrency {
	return &pacer.Concurrency{Start: 2, Stages: []pacer.Stage{
		{Duration: 300 * time.Millisecond, Target: 2}, {Duration: time.Millisecond, Target: 1},
		{Duration: 300 * time.Millisecond, Target: 1}, {Duration: time.Millisecond, Target: 2},
		{Duration: 300 * time.Millisecond, Target: 2}}} // the VU's stages long enough for a busy machine's ticks
}

// TestLoopsReconnectWhereTheServerClosedWhileIdle: a VU the schedule
// removed sits idle while the server closes its connection; when the
// schedule brings it back, its POST (which may not be sent twice) goes on
// a new connection, not into the closed one.
// It runs alone (testutil.Alone): the server's idle timeout is 30 ms, and
// beside the suite's other lines a VU paused past it where the count
// could not tell which close was whose.
func TestLoopsReconnectWhereTheServerClosedWhileIdle(t *testing.T) {
	testutil.Alone(t)
	h := &inFlight{hold: time.Millisecond}
	ts := &testServer{Server: httptest.NewUnstartedServer(h)}
	ts.Config.IdleTimeout = 30 * time.Millisecond
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			ts.conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	d := newDriver(t, Config{URL: ts.URL + "/", Method: http.MethodPost, Body: []byte("{}")})
	_, all, _ := runClosed(t, d, idleVU1(), time.Second) // VU 1's connection idles out
	if all.Classes[stats.OK] != all.Classes.Total() || all.Classes.Total() == 0 {
		t.Errorf("classes %v, want every request OK", all.Classes)
	}
	// Each connection after the VUs' first two replaced one the server
	// closed while idle, found and counted, before reuse (an idle close)
	// or after the request went (a retry): VU 1's on its return (on a
	// busy machine VU 0 may pause past the idle timeout too).
	idle, retries := all.Counters[stats.IdleCloses], all.Counters[stats.Retries]
	if n := ts.conns.Load(); idle < 1 || int64(n) != 2+idle+retries {
		t.Errorf("%d connections, %d idle closes and %d retries counted: want 2 and one more for each, VU 1's on its return at least", n, idle, retries)
	}
}

// TestLoopsTakeNothingWrittenWhileIdle: a server that writes to a
// connection while its VU is idle (a 408 after 60 ms without a request,
// the connection kept open) wrote no answer to the VU's next request: the
// VU, back, goes on a new connection.
// It runs alone (testutil.Alone): beside the suite's other lines a VU
// between two requests waited past the server's 60 ms, and the 408 meant
// for an idle VU answered a busy one.
func TestLoopsTakeNothingWrittenWhileIdle(t *testing.T) {
	testutil.Alone(t)
	serve := func(s *rawServer, c net.Conn, br *bufio.Reader) {
		stale := false
		for {
			_ = c.SetReadDeadline(time.Now().Add(60 * time.Millisecond))
			req, err := http.ReadRequest(br)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if !stale {
					stale = true
					_, _ = c.Write([]byte("HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n"))
				}
				continue
			}
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
	}
	s := startRaw(t, false, serve)
	d := newDriver(t, Config{URL: s.URL + "/"})
	_, all, _ := runClosed(t, d, idleVU1(), time.Second) // VU 1 idles, and is written to
	if all.Classes[stats.OK] != all.Classes.Total() || all.Classes.Total() == 0 {
		t.Errorf("classes %v, want every request OK: the 408 answered none", all.Classes)
	}
	if n := s.conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3: VU 1's second on its return", n)
	}
}

// TestOpenModelAnswersEveryArrival: arrivals at 300/s to a server that
// holds each request 3 ms, through the engine's VUs (the goroutine path):
// every arrival issued is answered whole, on no more connections than
// VUs, none faster than the server, each timed from its intended start.
func TestOpenModelAnswersEveryArrival(t *testing.T) {
	h := &inFlight{hold: 3 * time.Millisecond}
	ts := startServer(t, modeH1, h)
	d := newDriver(t, Config{URL: ts.URL + "/"})
	sum, all := runOpen(t, context.Background(), engine.Workload{Name: "w", Model: engine.Open, Rate: pacer.Constant(300, time.Second),
		VUsMin: 1, VUsMax: 1000, Grace: time.Second, Driver: d})
	ok := all.Classes[stats.OK]
	// A busy machine may leave arrivals unissued (dropped, as such); no
	// issued one finds the pool of 1000 VUs empty.
	if ok != int64(sum.Scheduled) || ok != h.served.Load() || sum.Dropped != sum.Unissued {
		t.Errorf("%d ok of %d issued, %d dropped of which %d unissued; the server served %d", ok, sum.Scheduled, sum.Dropped, sum.Unissued, h.served.Load())
	}
	if n := ts.conns.Load(); n > int64(sum.MaxVUs) || n == 0 {
		t.Errorf("%d connections for %d VUs", n, sum.MaxVUs)
	}
	if lat := all.Latency.Min(); lat < 3*time.Millisecond {
		t.Errorf("fastest answer %v, the server holds each 3ms", lat)
	}
}

// TestOpenModelKilledRecordsEveryArrival: a kill while the open model's
// schedule runs ends the requests in flight, interrupted, and every
// arrival issued after it is recorded too, interrupted: none is lost.
func TestOpenModelKilledRecordsEveryArrival(t *testing.T) {
	s := startRaw(t, false, func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if readRequest(br) {
			s.sleep(time.Minute) // never answers
		}
	})
	d := newDriver(t, Config{URL: s.URL + "/"})
	kill, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	sum, all := runOpen(t, kill, engine.Workload{Name: "w", Model: engine.Open, Rate: pacer.Constant(200, 500*time.Millisecond),
		VUsMin: 1, VUsMax: 1000, Grace: time.Second, Driver: d})
	recorded := all.Classes.Total()
	// Scheduled counts the arrivals issued; a busy machine may leave some
	// unissued, counted among the dropped (and in neither else).
	if recorded+int64(sum.Dropped)-int64(sum.Unissued) != int64(sum.Scheduled) || all.Classes[stats.Interrupted] != recorded {
		t.Errorf("%d scheduled, %d recorded (%v), %d dropped of which %d unissued: want every arrival recorded, interrupted",
			sum.Scheduled, recorded, all.Classes, sum.Dropped, sum.Unissued)
	}
}
