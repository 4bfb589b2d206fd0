package s3driver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// server is a running versitygw and an independent client to inspect it.
type server struct {
	endpoint, access, secret string
	admin                    *minio.Client
}

func startServer(t testing.TB) *server {
	t.Helper()
	ep, ak, sk := testutil.StartVersityGW(t)
	admin, err := minio.New(strings.TrimPrefix(ep, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(ak, sk, ""), Region: DefaultRegion, BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &server{endpoint: ep, access: ak, secret: sk, admin: admin}
}

// config is a Config for this server and bucket, with the given mix.
func (s *server) config(bucket string, ops map[string]int) Config {
	return Config{Endpoint: s.endpoint, Bucket: bucket, AccessKey: s.access, SecretKey: s.secret,
		PathStyle: PathStyleTrue, Ops: ops, Timeout: "10s"}
}

func (s *server) makeBucket(t testing.TB, name string) {
	t.Helper()
	if err := s.admin.MakeBucket(context.Background(), name, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("cannot make bucket %s: %v", name, err)
	}
}

// objects lists the bucket: key → size.
func (s *server) objects(t testing.TB, bucket string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for o := range s.admin.ListObjectsIter(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("cannot list %s: %v", bucket, o.Err)
		}
		m[o.Key] = o.Size
	}
	return m
}

func (s *server) put(t testing.TB, bucket, key, body string) {
	t.Helper()
	_, err := s.admin.PutObject(context.Background(), bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("cannot put %s: %v", key, err)
	}
}

func newDriver(t testing.TB, c Config) *Driver {
	t.Helper()
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// checked wraps a driver and checks every Result as it comes: per op, the
// counts and bytes the driver reported, and the TTFB against the time Do
// took (TTFB ≤ latency, and > 0 for an OK GET).
type checked struct {
	d    driver.Driver
	t    *testing.T
	mu   sync.Mutex
	ops  map[string]*opTally
	bads atomic.Int64
}

type opTally struct {
	ok, failed          int64
	bytesSent, bytesRcv int64
	sample              string
}

func (c *checked) Do(ctx context.Context, vu int, r *driver.Result) {
	start := time.Now()
	c.d.Do(ctx, vu, r)
	took := time.Since(start)
	if r.TTFB > took || (r.Op == "GET" && r.Class == stats.OK && r.TTFB <= 0) {
		if c.bads.Add(1) == 1 {
			c.t.Errorf("%s: TTFB %v, Do took %v", r.Op, r.TTFB, took)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.ops[r.Op]
	if o == nil {
		o = &opTally{}
		c.ops[r.Op] = o
	}
	if r.Class == stats.OK {
		o.ok++
	} else if o.failed++; o.sample == "" {
		o.sample = r.Class.String() + ": " + r.Message
	}
	o.bytesSent += r.BytesSent
	o.bytesRcv += r.BytesRecv
}

// runClosed runs d through the engine's closed model with vus VUs for dur
// and returns the driver's own tallies and the engine's recorded figures.
func runClosed(t *testing.T, d driver.Driver, vus int, dur time.Duration) (map[string]*opTally, map[string]*stats.OpStats) {
	t.Helper()
	c := &checked{d: d, t: t, ops: map[string]*opTally{}}
	recorded := map[string]*stats.OpStats{}
	sink := engine.SinkFunc(func(_ string, iv *stats.Interval) {
		for name, o := range iv.Ops {
			if recorded[name] == nil {
				recorded[name] = stats.NewOpStats()
			}
			recorded[name].Merge(o)
		}
	})
	w := engine.Workload{Name: "s3", Model: engine.Closed, Conc: pacer.FixedConcurrency(vus, dur),
		Grace: 10 * time.Second, Driver: c}
	if _, err := engine.Run(context.Background(), context.Background(), w, sink); err != nil {
		t.Fatal(err)
	}
	return c.ops, recorded
}
