//go:build unix

package s3driver

import (
	"context"
	"io"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// BenchmarkGet1KiB measures one GET of a 1 KiB object against versitygw on
// this machine. ns/op is the round trip, server included; cpu-ns/op is the
// CPU this process spent per GET (the server is another process, so it is
// the driver + minio-go + net/http); allocs/op are the client's. "driver"
// goes through Do, "minio-go" is a bare Core.GetObject and read loop, so
// the difference is the driver's own overhead. -cpu sets the VUs
// (RunParallel runs GOMAXPROCS goroutines).
func BenchmarkGet1KiB(b *testing.B) {
	srv := startServer(b)
	srv.makeBucket(b, "bench")
	c := srv.config("bench", map[string]int{"get": 1})
	c.Objects, c.Size, c.KeyPrefix = 16, "1KiB", "bench"
	d := newDriver(b, c)
	if err := d.Prepare(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	b.Run("driver", func(b *testing.B) {
		var vus atomicCounter
		measure(b, func(pb *testing.PB) {
			vu := vus.next()
			var r driver.Result
			for pb.Next() {
				d.Do(context.Background(), vu, &r)
				if r.Class != stats.OK || r.BytesRecv != 1024 {
					b.Errorf("GET: %v %s, %d bytes", r.Class, r.Message, r.BytesRecv)
					return
				}
			}
		})
	})
	b.Run("minio-go", func(b *testing.B) {
		measure(b, func(pb *testing.PB) {
			buf := make([]byte, readBufSize)
			for i := 0; pb.Next(); i++ {
				body, _, _, err := d.core.GetObject(context.Background(), "bench", d.fixedName(i%16), minio.GetObjectOptions{})
				if err != nil {
					b.Error(err)
					return
				}
				n, err := io.ReadFull(body, buf[:1024])
				body.Close()
				if n != 1024 || err != nil {
					b.Errorf("read %d bytes: %v", n, err)
					return
				}
			}
		})
	})
}

// measure runs body in parallel and reports this process's CPU per op.
func measure(b *testing.B, body func(*testing.PB)) {
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(body)
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "GET/s")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type atomicCounter struct{ n atomic.Int64 }

func (c *atomicCounter) next() int { return int(c.n.Add(1) - 1) }
