package httpdriver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// BenchmarkDo measures one Do against a local httptest server answering 1 KiB,
// on each client path, sequentially from one VU and in parallel from one VU
// per goroutine, with a cancellable ctx as the engine passes. Client and
// server share the CPU, so ns/op is an upper bound for the client; the
// allocations are the client's and the server's together (see
// BenchmarkRoundTripBaseline for bare net/http against the same server).
func BenchmarkDo(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		name, mode string
		maxConns   int
	}{{"conn-h1", modeH1, 0}, {"nethttp-h1", modeH1, 64}, {"nethttp-h2c", modeH2C, 0}, {"loop-h1", modeH1, 0}} {
		b.Run(c.name, func(b *testing.B) {
			url, proto := benchServer(b, c.mode)
			d := newDriver(b, Config{URL: url, Proto: proto, MaxConns: c.maxConns, viaLoop: c.name == "loop-h1"})
			b.Run("serial", func(b *testing.B) {
				var r driver.Result
				b.ReportAllocs()
				for b.Loop() {
					d.Do(ctx, 0, &r)
					if r.Class != stats.OK {
						b.Fatalf("%+v", r)
					}
				}
			})
			b.Run("parallel", func(b *testing.B) {
				var next atomic.Int64
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					vu := int(next.Add(1))
					var r driver.Result
					for pb.Next() {
						d.Do(ctx, vu, &r)
						if r.Class != stats.OK {
							b.Errorf("%+v", r)
							return
						}
					}
				})
			})
		})
	}
}

// BenchmarkRoundTripBaseline is net/http with no driver around it: the
// floor BenchmarkDo/h1/serial is compared with.
func BenchmarkRoundTripBaseline(b *testing.B) {
	url, _ := benchServer(b, modeH1)
	tr := &http.Transport{DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	sink := newBodySink()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = sink.ReadFrom(resp.Body)
		resp.Body.Close()
	}
}

func benchServer(b *testing.B, mode string) (url, proto string) {
	h := okHandler(1024)
	s := httptest.NewUnstartedServer(h)
	proto = ProtoAuto
	if mode == modeH2C {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		s.Config.Protocols = &p
		proto = ProtoH2C
	}
	s.Start()
	b.Cleanup(s.Close)
	return s.URL, proto
}

// BenchmarkParseResponse is the loop's parser on nginx's answer to a GET:
// it allocates nothing per response.
func BenchmarkParseResponse(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sat, 28 Nov 2026 04:00:00 GMT\r\n" +
		"Content-Type: application/octet-stream\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok")
	var sink bodySink
	p := h1Parser{sink: &sink}
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	for b.Loop() {
		p.reset()
		if n, err := p.feed(resp); err != nil || n != len(resp) || p.phase != phaseDone {
			b.Fatalf("parsed %d of %d bytes, phase %d: %v", n, len(resp), p.phase, err)
		}
	}
}
