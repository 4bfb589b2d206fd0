package httpdriver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// TestIdleTimeoutAtARate (rule 4): against a server that closes a
// connection idle for 50 ms (racing each arrival) or 30 ms (before each),
// POSTs at 20/s from one VU fail none: every
// connection after the first replaced one the server closed, and each of
// those closes is counted once, found before reuse (an idle close) or
// after the request went (a retry). net/http finds them on its own and
// counts only the retries; it must fail none either.
func TestIdleTimeoutAtARate(t *testing.T) {
	for _, timeout := range []time.Duration{50 * time.Millisecond, 30 * time.Millisecond} {
		for _, c := range []idleClient{{"conn-h1", false, 0}, {"conn-tls-h1", true, 0}, {"nethttp-h1-pool", false, 4}, {"nethttp-tls-h1", true, 4}} {
			t.Run(fmt.Sprintf("%v/%s", timeout, c.name), func(t *testing.T) {
				t.Parallel() // the counts are exact whatever the machine is doing: the cases wait side by side
				idleAtARate(t, c, timeout)
			})
		}
	}
}

type idleClient struct {
	name     string
	tls      bool
	maxConns int
}

// idleAtARate runs TestIdleTimeoutAtARate's case of c against a server
// whose idle timeout is timeout.
func idleAtARate(t *testing.T, c idleClient, timeout time.Duration) {
	var (
		mu    sync.Mutex
		conns int
		idle  int // closes of connections idle at the time
		last  = map[net.Conn]http.ConnState{}
	)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte("ok"))
	}))
	ts.Config.IdleTimeout = timeout
	ts.Config.ConnState = func(nc net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case s == http.StateNew:
			conns++
		case s == http.StateClosed && last[nc] == http.StateIdle:
			idle++
		}
		last[nc] = s
	}
	cfg := Config{Method: http.MethodPost, Body: []byte(`{"n":1}`), MaxConns: c.maxConns, Proto: ProtoH1}
	if c.tls {
		ts.StartTLS()
		cfg.CAFile = writeCA(t, ts.Certificate().Raw)
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	cfg.URL = ts.URL + "/"
	d := newDriver(t, cfg)
	machine := testutil.Measure(t)
	_, all := runOpen(t, context.Background(), engine.Workload{Name: "idle", Model: engine.Open, Rate: pacer.Constant(20, 2*time.Second),
		VUsMin: 1, VUsMax: 1, Grace: 5 * time.Second, Driver: d})
	mu.Lock()
	defer mu.Unlock()
	found := all.Counters[stats.IdleCloses] + all.Counters[stats.Retries]
	t.Logf("%d requests, %d connections, %d idle closes by the server; client: %d idle closes, %d retries",
		all.Classes.Total(), conns, idle, all.Counters[stats.IdleCloses], all.Counters[stats.Retries])
	if all.Classes.Errors() != 0 {
		t.Errorf("classes %v: want every request ok; %s", all.Classes, samples(all))
	}
	// One VU, a new connection (a TLS handshake) for most requests: a
	// busy machine leaves arrivals unissued (9 of 40 answered beside the
	// suite's other lines and four CPU hogs), none failed.
	machine.Check(t, all.Classes[stats.OK] >= 10, testutil.Need{}, "%d requests answered of the 40 sent at 20/s for 2 s; want 10 or more", all.Classes[stats.OK])
	if ownsH1(cfg.withDefaults()) && (found != int64(conns-1) || idle < conns-1) {
		t.Errorf("the client counted %d closes, the server closed %d idle connections and had %d: want each replaced one counted once",
			found, idle, conns)
	}
	if n := all.Classes.Total(); timeout < 50*time.Millisecond && int64(conns) < n/2 {
		t.Errorf("%d connections for %d requests: a server closing after %v idle closed under half", conns, n, timeout)
	}
}

// samples are the sample messages of st's failures.
func samples(st *stats.OpStats) string {
	var out []string
	for c, m := range st.Samples {
		if m != "" {
			out = append(out, stats.Class(c).String()+": "+m)
		}
	}
	return strings.Join(out, "; ")
}
