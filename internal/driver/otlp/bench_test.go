package otlpdriver

import (
	"testing"
	"time"
)

// BenchmarkGenerateEncode measures what every export costs the generator
// before it sends: generating a batch of traces and encoding the request.
// It reports the cost per span and the encoded bytes per span.
//
//	go test -run '^$' -bench GenerateEncode ./internal/driver/otlp
func BenchmarkGenerateEncode(b *testing.B) {
	for _, bc := range []struct {
		shape string
		batch int
	}{{ShapeSmall, 1}, {ShapeMedium, 1}, {ShapeLarge, 1}, {ShapeXLarge, 1}, {ShapeMedium, 20}} {
		b.Run(bc.shape+"/batch="+itoa(bc.batch), func(b *testing.B) {
			p, _ := NamedShape(bc.shape)
			g := newGenerator(p, 1, 0)
			e := newEncoder(g.services)
			traces := make([]trace, bc.batch)
			var buf []byte
			var spans, bytes int
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				for i := range traces {
					g.trace(&traces[i], now)
					spans += len(traces[i].spans)
				}
				buf = e.encode(buf[:0], traces)
				bytes += len(buf)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans), "ns/span")
			b.ReportMetric(float64(bytes)/float64(spans), "B/span")
			b.ReportMetric(float64(spans)/float64(b.N), "spans/op")
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
