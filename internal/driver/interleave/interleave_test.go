package interleave

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perflab/perflab/internal/driver"
	httpdriver "github.com/perflab/perflab/internal/driver/http"
	"github.com/perflab/perflab/internal/stats"
)

// fake counts its calls and names its operations.
type fake struct {
	op     string
	calls  atomic.Int64
	closed bool
	err    error
}

func (f *fake) Do(_ context.Context, _ int, r *driver.Result) {
	f.calls.Add(1)
	*r = driver.Result{Op: f.op, BytesSent: 1}
}

func (f *fake) Close() error { f.closed = true; return f.err }

func (f *fake) Facts() []driver.Fact { return []driver.Fact{{Name: "mean size", Value: f.op}} }

func TestAlternatesStrictly(t *testing.T) {
	a, b := &fake{op: "GET /"}, &fake{op: "GET /gw"}
	d := New(a, b)
	want := []string{"direct: GET /", "gateway: GET /gw", "direct: GET /", "gateway: GET /gw", "direct: GET /"}
	for i, w := range want {
		var r driver.Result
		d.Do(context.Background(), 0, &r)
		if r.Op != w || r.BytesSent != 1 {
			t.Errorf("operation %d: %+v, want op %q", i, r, w)
		}
	}
}

func TestBalancedUnderConcurrency(t *testing.T) {
	a, b := &fake{op: "x"}, &fake{op: "x"}
	d := New(a, b)
	var wg sync.WaitGroup
	for vu := range 8 {
		wg.Go(func() {
			var r driver.Result
			for range 1000 {
				d.Do(context.Background(), vu, &r)
			}
		})
	}
	wg.Wait()
	if a.calls.Load() != 4000 || b.calls.Load() != 4000 {
		t.Errorf("direct %d, gateway %d operations; want 4000 each", a.calls.Load(), b.calls.Load())
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		op    string
		side  Side
		inner string
		ok    bool
	}{
		{"direct: chat", Direct, "chat", true},
		{"gateway: GET /v1/x", Gateway, "GET /v1/x", true},
		{"gateway:chat", Direct, "", false},
		{"chat", Direct, "", false},
	} {
		side, inner, ok := Split(c.op)
		if side != c.side || inner != c.inner || ok != c.ok {
			t.Errorf("Split(%q) = %v, %q, %v; want %v, %q, %v", c.op, side, inner, ok, c.side, c.inner, c.ok)
		}
	}
	if Direct.String() != "direct" || Gateway.String() != "gateway" {
		t.Errorf("sides are %q and %q", Direct, Gateway)
	}
}

func TestCloseAndFacts(t *testing.T) {
	a, b := &fake{op: "a", err: errors.New("boom")}, &fake{op: "b"}
	d := New(a, b)
	if err := d.Close(); err == nil || !a.closed || !b.closed {
		t.Errorf("Close: %v; closed %v %v", err, a.closed, b.closed)
	}
	facts := d.Facts()
	if len(facts) != 2 || facts[0].Name != "direct: mean size" || facts[1] != (driver.Fact{Name: "gateway: mean size", Value: "b"}) {
		t.Errorf("facts %+v", facts)
	}
}

// Against two real HTTP servers, each side's requests reach its own.
func TestHTTPServers(t *testing.T) {
	var direct, gateway atomic.Int64
	serve := func(n *atomic.Int64) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			n.Add(1)
			_, _ = w.Write([]byte("ok"))
		}))
	}
	sd, sg := serve(&direct), serve(&gateway)
	defer sd.Close()
	defer sg.Close()
	dd, err := httpdriver.New(httpdriver.Config{URL: sd.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	dg, err := httpdriver.New(httpdriver.Config{URL: sg.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	d := New(dd, dg)
	defer d.Close()
	ops := map[string]int{}
	for range 10 {
		var r driver.Result
		d.Do(context.Background(), 0, &r)
		if r.Class != stats.OK || r.Counters[stats.BodyBytes] != 2 {
			t.Fatalf("result %+v", r)
		}
		ops[r.Op]++
	}
	if direct.Load() != 5 || gateway.Load() != 5 || ops["direct: GET /"] != 5 || ops["gateway: GET /"] != 5 {
		t.Errorf("servers saw %d and %d requests; ops %v", direct.Load(), gateway.Load(), ops)
	}
}
