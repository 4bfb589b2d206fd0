package builtin

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkGatewayHop measures what the gateway adds to a round trip, as
// the gateway-overhead method does: every iteration sends one request
// straight to the upstream and one through the undelayed gateway, in
// turn, on keep-alive connections, and reports the medians of both and
// their difference (added-p50-µs). "fixed" answers 1 KiB with a known
// length; "sse" streams 8 events, each flushed. The "idle" variants pause
// 1 ms between requests, as a load of a few hundred requests per second
// does: the processors go idle, and each goroutine hand-off in the
// gateway may cost a wake-up.
//
//	go test -run '^$' -bench GatewayHop -count 6 ./internal/builtin/
func BenchmarkGatewayHop(b *testing.B) {
	chunk := strings.Repeat("x", 1024)
	for _, bc := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"fixed", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Length", "1024")
			_, _ = io.WriteString(w, chunk)
		}},
		{"sse", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for range 8 {
				_, _ = io.WriteString(w, "data: {\"token\":\"abcdefgh\"}\n\n")
				w.(http.Flusher).Flush()
			}
		}},
	} {
		for _, gap := range []time.Duration{0, time.Millisecond} {
			name := bc.name
			if gap > 0 {
				name += "/idle"
			}
			b.Run(name, func(b *testing.B) { benchmarkHop(b, bc.h, gap) })
		}
	}
}

// benchmarkHop runs BenchmarkGatewayHop's round trips to an upstream
// served by h, pausing gap before each.
func benchmarkHop(b *testing.B, h http.HandlerFunc, gap time.Duration) {
	up := httptest.NewServer(h)
	defer up.Close()
	gw := startGateway(b, up.URL, 0)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	direct, through := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if gap > 0 {
			time.Sleep(gap) // pacing, not synchronisation
		}
		direct = append(direct, roundTrip(b, client, up.URL+"/v1/x"))
		if gap > 0 {
			time.Sleep(gap)
		}
		through = append(through, roundTrip(b, client, gw.URL+"/v1/x"))
	}
	b.StopTimer()
	d, g := median(direct), median(through)
	b.ReportMetric(float64(d)/1e3, "direct-p50-µs")
	b.ReportMetric(float64(g)/1e3, "gateway-p50-µs")
	b.ReportMetric(float64(g-d)/1e3, "added-p50-µs")
}

// roundTrip POSTs a small body to url, reads the whole answer and returns
// how long that took.
func roundTrip(b *testing.B, c *http.Client, url string) time.Duration {
	began := time.Now()
	resp, err := c.Post(url, "text/plain", strings.NewReader("hello"))
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %d, %v", url, resp.StatusCode, err)
	}
	return time.Since(began)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
