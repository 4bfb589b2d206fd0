package s3driver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// TestGetPutAgainstVersityGW runs a GET/PUT mix through the engine at three
// object sizes and two VU counts against a real S3 server and checks the
// bytes: every PUT sent exactly its size, every GET received it, the
// engine recorded what the driver reported, and the server holds exactly
// the objects PUT, each of the right size.
func TestGetPutAgainstVersityGW(t *testing.T) {
	srv := startServer(t)
	for _, size := range []int64{1 << 10, 100 << 10, 1 << 20} {
		for _, vus := range []int{4, 16} {
			t.Run(fmt.Sprintf("%s/%dvu", sizeText(size), vus), func(t *testing.T) {
				bucket := fmt.Sprintf("getput-%d-%d", size, vus)
				srv.makeBucket(t, bucket)
				c := srv.config(bucket, map[string]int{"get": 1, "put": 1})
				c.Size, c.Objects, c.KeyPrefix = fmt.Sprint(size), 20, "run"
				d := newDriver(t, c)
				if err := d.Prepare(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
				tally, recorded := runClosed(t, d, vus, 700*time.Millisecond)
				checkGetPut(t, size, tally, recorded)
				checkConnections(t, vus, recorded)
				objs := srv.objects(t, bucket)
				var puts int64
				for key, n := range objs {
					if n != size {
						t.Errorf("%s holds %d bytes, want %d", key, n, size)
					}
					if strings.HasPrefix(key, "run/put-") {
						puts++
					}
				}
				if want := tally["PUT"].ok; puts != want {
					t.Errorf("server holds %d PUT objects, the driver reported %d PUTs OK", puts, want)
				}
			})
		}
	}
}

// checkConnections: keep-alive works, each VU keeps using a connection
// (net/http may dial one more than it needs when a connection frees up
// during a dial, hence the slack).
func checkConnections(t *testing.T, vus int, recorded map[string]*stats.OpStats) {
	t.Helper()
	var dials int64
	for _, o := range recorded {
		dials += o.Connect.Count()
	}
	if dials == 0 || dials > int64(2*vus) {
		t.Errorf("%d connections opened by %d VUs, want 1 to %d", dials, vus, 2*vus)
	}
}

func checkGetPut(t *testing.T, size int64, tally map[string]*opTally, recorded map[string]*stats.OpStats) {
	t.Helper()
	for _, op := range []string{"GET", "PUT"} {
		o, r := tally[op], recorded[op]
		if o == nil || r == nil || o.ok == 0 {
			t.Fatalf("no %s completed: %+v", op, o)
		}
		if o.failed > 0 {
			t.Errorf("%s: %d failed, first %s", op, o.failed, o.sample)
		}
		if r.Classes[stats.OK] != o.ok || r.BytesSent != o.bytesSent || r.BytesRecv != o.bytesRcv {
			t.Errorf("%s: engine recorded %d OK, %d sent, %d received; driver reported %d, %d, %d",
				op, r.Classes[stats.OK], r.BytesSent, r.BytesRecv, o.ok, o.bytesSent, o.bytesRcv)
		}
		if r.TTFB.Count() != r.Classes.Total() {
			t.Errorf("%s: %d TTFBs recorded for %d operations", op, r.TTFB.Count(), r.Classes.Total())
		}
		t.Logf("%s: %d ok, latency p50 %v, TTFB p50 %v", op, o.ok, r.Latency.Quantile(0.5), r.TTFB.Quantile(0.5))
	}
	if got, want := tally["PUT"].bytesSent, size*tally["PUT"].ok; got != want {
		t.Errorf("PUT sent %d bytes, want %d × %d = %d", got, size, tally["PUT"].ok, want)
	}
	if got, want := tally["GET"].bytesRcv, size*tally["GET"].ok; got != want {
		t.Errorf("GET received %d bytes, want %d × %d = %d", got, size, tally["GET"].ok, want)
	}
	if tally["PUT"].bytesRcv != 0 || tally["GET"].bytesSent != 0 {
		t.Errorf("PUT received %d, GET sent %d bytes; want 0", tally["PUT"].bytesRcv, tally["GET"].bytesSent)
	}
}

// TestPrepareCleanup prepares N objects of mixed sizes, runs PUTs, DELETEs,
// HEADs and LISTs, and checks that Cleanup removes exactly what the driver
// wrote: objects another client put, in the same bucket and even under the
// driver's prefix, stay.
func TestPrepareCleanup(t *testing.T) {
	srv := startServer(t)
	const bucket = "prepare"
	srv.makeBucket(t, bucket)
	srv.put(t, bucket, "foreign/keep", "not perflab's")
	srv.put(t, bucket, "mine/foreign-keep", "not perflab's either")
	c := srv.config(bucket, map[string]int{"put": 4, "delete": 2, "head": 1, "list": 1})
	c.Sizes, c.Objects, c.KeyPrefix = map[string]int{"1KiB": 2, "3KiB": 1, "0": 1}, 37, "mine"
	d := newDriver(t, c)
	var last [2]int64
	if err := d.Prepare(context.Background(), func(done, total int64) { last = [2]int64{done, total} }); err != nil {
		t.Fatal(err)
	}
	if last != [2]int64{37, 37} {
		t.Errorf("last progress %v, want [37 37]", last)
	}
	objs := srv.objects(t, bucket)
	for i := range 37 {
		key := fmt.Sprintf("mine/obj-%06d", i)
		if size, ok := objs[key]; !ok || size != d.fixedSize(i) {
			t.Errorf("%s: size %d (present %v), want %d", key, size, ok, d.fixedSize(i))
		}
	}
	if len(objs) != 37+2 {
		t.Errorf("bucket holds %d objects after Prepare, want 37 + 2 foreign", len(objs))
	}

	var r driver.Result
	counts := map[string]int{}
	for i := range 300 {
		d.Do(context.Background(), i%3, &r)
		if r.Class != stats.OK {
			t.Fatalf("%s: %v %s", r.Op, r.Class, r.Message)
		}
		counts[r.Op]++
	}
	t.Logf("ops: %v", counts)
	if err := d.Cleanup(context.Background(), func(done, total int64) { last = [2]int64{done, total} }); err != nil {
		t.Fatal(err)
	}
	if want := int64(37 + counts["PUT"]); last != [2]int64{want, want} {
		t.Errorf("last cleanup progress %v, want %d of %d", last, want, want)
	}
	left := srv.objects(t, bucket)
	if len(left) != 2 || left["foreign/keep"] == 0 || left["mine/foreign-keep"] == 0 {
		t.Errorf("after Cleanup the bucket holds %v, want only the two foreign objects", left)
	}
}

// TestCreateBucket: Prepare fails on a missing bucket unless create_bucket
// is set; then it creates it, and Cleanup removes it.
func TestCreateBucket(t *testing.T) {
	srv := startServer(t)
	c := srv.config("created", map[string]int{"get": 1})
	c.Objects, c.Size = 3, "10"
	// One upload at a time: of three at once, Prepare returns on the
	// first NoSuchBucket and cancels the others, but versitygw may still
	// be at one of them; it then lands in the bucket the next Prepare
	// creates (1 run in about 40), an object of the first driver that the
	// second's Cleanup rightly leaves, and the bucket is not empty.
	c.PrepareConcurrency = 1
	err := newDriver(t, c).Prepare(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("Prepare into a missing bucket without create_bucket: %v, want NoSuchBucket", err)
	}
	c.CreateBucket, c.PrepareConcurrency = true, 0
	d := newDriver(t, c)
	if err := d.Prepare(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var r driver.Result
	d.Do(context.Background(), 0, &r)
	if r.Class != stats.OK || r.BytesRecv != 10 {
		t.Fatalf("GET: %v %s, %d bytes", r.Class, r.Message, r.BytesRecv)
	}
	if err := d.Cleanup(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := srv.admin.BucketExists(context.Background(), "created"); err != nil || ok {
		t.Errorf("bucket exists after Cleanup: %v %v", ok, err)
	}
}

// TestErrorsAgainstVersityGW: the S3 error code reaches Message, the class
// follows the status.
func TestErrorsAgainstVersityGW(t *testing.T) {
	srv := startServer(t)
	srv.makeBucket(t, "errs")
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		class stats.Class
		codes []string
	}{
		{"no such bucket", func(c *Config) { c.Bucket = "missing" }, stats.Status4xx, []string{"NoSuchBucket"}},
		{"no such key", func(c *Config) { c.Ops = map[string]int{"get": 1} }, stats.Status4xx, []string{"NoSuchKey"}},
		{"unknown access key", func(c *Config) { c.AccessKey = "nobody" }, stats.Status4xx, []string{"InvalidAccessKeyId", "XAdminUserNotFound"}}, // versitygw answers the latter
		{"wrong secret", func(c *Config) { c.SecretKey = "wrong-secret" }, stats.Status4xx, []string{"SignatureDoesNotMatch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := srv.config("errs", map[string]int{"put": 1})
			c.Objects, c.Size = 5, "1KiB"
			tc.edit(&c)
			d := newDriver(t, c)
			var r driver.Result
			d.Do(context.Background(), 0, &r)
			if r.Class != tc.class || !containsAny(r.Message, tc.codes) {
				t.Errorf("%s: %v %q, want %v with one of %v", r.Op, r.Class, r.Message, tc.class, tc.codes)
			}
			if strings.Contains(r.Message, srv.secret) {
				t.Errorf("message shows the secret: %q", r.Message)
			}
		})
	}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// TestOpenModel: the engine's open model, arrivals at a rate served by a
// VU pool, against the real server. Every arrival due is accounted for:
// the engine's Summary counts as Scheduled those the dispatcher issued,
// and as Dropped those not served, which include the Unissued ones (due
// but never issued: the generator fell behind). So the operations done
// and the arrivals dropped make the issued and the unissued together,
// on any machine. How many were served is a timing figure: 210 are due
// in 0.7 s at 300/s, and a generator or a versitygw short of CPU serves
// fewer.
func TestOpenModel(t *testing.T) {
	testutil.Alone(t)
	srv := startServer(t)
	srv.makeBucket(t, "open")
	c := srv.config("open", map[string]int{"get": 3, "put": 1, "head": 1})
	c.Objects, c.Size = 10, "4KiB"
	d := newDriver(t, c)
	if err := d.Prepare(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c2 := &checked{d: d, t: t, ops: map[string]*opTally{}}
	w := engine.Workload{Name: "open", Model: engine.Open, Rate: pacer.Constant(300, 700*time.Millisecond),
		VUsMin: 2, VUsMax: 32, Backlog: 1000, Grace: 5 * time.Second, Driver: c2}
	machine := testutil.Measure(t)
	sum, err := engine.Run(context.Background(), context.Background(), w, nil)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for op, o := range c2.ops {
		if o.failed > 0 {
			t.Errorf("%s: %d failed, first %s", op, o.failed, o.sample)
		}
		total += o.ok + o.failed
	}
	if total+int64(sum.Dropped) != int64(sum.Scheduled+sum.Unissued) {
		t.Errorf("%d operations + %d dropped, want %d scheduled + %d unissued", total, sum.Dropped, sum.Scheduled, sum.Unissued)
	}
	t.Logf("%d operations, %d dropped (%d unissued) of %d scheduled, %d VUs at most: %v",
		total, sum.Dropped, sum.Unissued, sum.Scheduled, sum.MaxVUs, c2.ops["GET"])
	machine.Check(t, total >= 150, testutil.Need{}, "%d operations of 210 due, want at least 150", total)
}
