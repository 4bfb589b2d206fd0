// Package s3driver drives an S3-compatible object store with a weighted
// mix of GET, PUT, HEAD, DELETE and LIST operations, one per Do, through
// minio-go (SigV4, path- or virtual-host-style addressing), and reports
// each as a driver.Result named after its operation ("GET", "PUT", …), so
// each has its own latency and TTFB histograms.
//
// Keys. Everything perflab writes is under KeyPrefix (default
// "perflab-<random>/", unique to the Driver):
//
//   - Fixed names, KeyPrefix + "obj-000123": the Objects objects Prepare
//     uploads. GET and HEAD read one at random. With PutOverwrite, PUT
//     overwrites one at random; with DELETE but no PUT in the mix, each
//     DELETE removes the next one not yet removed.
//   - Fresh names, KeyPrefix + "put-<vu>-<n>": each PUT (without
//     PutOverwrite) writes a new one. A DELETE removes the oldest one its
//     VU wrote and has not removed; with none, it deletes a fresh name not
//     written yet (S3 answers 204 for a missing key, so it counts as OK).
//
// The driver remembers exactly which names it may have written (fixed
// names up to the highest index uploaded, fresh names up to each VU's
// count) and Cleanup deletes those, in multi-object DELETE batches of
// 1000, and nothing else: it never deletes by listing.
//
// What a Result holds:
//
//   - TTFB: GET, from the start of Do to the first byte of the body read
//     (the request, the response headers and the first body bytes); other
//     operations, to the first byte of the response.
//   - Connect: TCP connect + TLS handshake of a connection opened for this
//     operation; 0 when a kept-alive connection was reused.
//   - BytesRecv: GET, the body bytes read. BytesSent: PUT, the body bytes
//     the client sent. Headers, XML of LIST and DELETE, and framing are not
//     counted.
//   - Class: an S3 error answer by its HTTP status (status_4xx, or
//     status_5xx), except SlowDown and HTTP 429, which are rate_limited;
//     Message starts with the S3 code ("NoSuchBucket (HTTP 404): …").
//     Network errors are classed as the http driver classes them.
//
// minio-go is set for measuring: no retries (a failure is data), the
// region set (no bucket-location lookup), no checksums beyond what SigV4
// needs, PUT in one request (no multipart), UNSIGNED-PAYLOAD for PUT
// bodies unless SignPayload asks for chunk signing on plain http.
//
// Link-bound rule: with Link set, Facts gives the link's capacity in bytes
// per second and the threshold above which a run is link-bound: a
// measured throughput (GET BytesRecv + PUT BytesSent per second) of at
// least LinkBoundFraction of the link means the network, not the server,
// was the limit.
package s3driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

var (
	_ driver.Driver    = (*Driver)(nil)
	_ driver.Closer    = (*Driver)(nil)
	_ driver.Describer = (*Driver)(nil)
	_ driver.Preparer  = (*Driver)(nil)
	_ driver.Cleaner   = (*Driver)(nil)
)

// LinkBoundFraction: a throughput at or above this share of the configured
// link means the result is link-bound.
const LinkBoundFraction = 0.9

// payloadSlack is extra random bytes past the largest object: each PUT
// body starts at a random offset in it, so objects differ.
const payloadSlack = 4096

// Driver runs the operations of its Config. It is safe for concurrent use
// by many VUs; calls with the same vu must not overlap, and vu must be >= 0.
type Driver struct {
	cfg     Config // as given, with defaults applied; secrets only for the client
	spec    spec
	client  *minio.Client
	core    minio.Core
	rt      *http.Transport
	bucket  string
	prefix  string
	objects int
	width   int    // digits of fixed-name indexes
	payload []byte // random bytes, every PUT body is a slice of it
	putOpts minio.PutObjectOptions
	creds   string // where the credentials came from, for Facts
	states  driver.VUs[vuState]

	// A worker of a distributed run (Shard): its index of workers, its
	// random streams apart from the other workers'. workers is 0 otherwise.
	worker, workers int
	streams         uint64

	fixedHigh     atomic.Int64 // fixed names [0, fixedHigh) may have been written
	fixedDeleted  atomic.Int64 // DELETE without PUT: fixed names [0, n) claimed for deletion
	createdBucket atomic.Bool
}

// New validates c, fills in defaults (credentials and region from the AWS
// environment variables when c has none) and builds a Driver. It opens no
// connection.
func New(c Config) (*Driver, error) {
	s, errs := c.parse()
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid s3 driver config: %w", errors.Join(errs...))
	}
	if s.prefix == "" {
		s.prefix = "perflab-" + randomHex(6) + "/"
	}
	c.KeyPrefix = s.prefix
	creds := "config"
	if c.AccessKey == "" {
		c.AccessKey, c.SecretKey = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		c.SessionToken = os.Getenv("AWS_SESSION_TOKEN")
		creds = "environment (AWS_ACCESS_KEY_ID)"
		if c.AccessKey == "" || c.SecretKey == "" {
			c.AccessKey, c.SecretKey, c.SessionToken = "", "", ""
			creds = "none: anonymous requests"
		}
	}
	if c.Region == "" {
		if c.Region = os.Getenv("AWS_REGION"); c.Region == "" {
			c.Region = DefaultRegion
		}
	}
	rt := newTransport(newDialer(s, c.Insecure), s.ops.has(opPut))
	client, err := minio.New(s.endpoint.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(c.AccessKey, c.SecretKey, c.SessionToken),
		Secure:       s.endpoint.Scheme == "https",
		Transport:    rt,
		Region:       c.Region,
		BucketLookup: s.lookup,
		MaxRetries:   1, // measure every attempt; never retry behind the engine's back
	})
	if err != nil {
		return nil, fmt.Errorf("cannot create s3 client: %w", err)
	}
	client.SetAppInfo("perflab", "s3")
	d := &Driver{
		cfg: c, spec: s, client: client, core: minio.Core{Client: client}, rt: rt,
		bucket: c.Bucket, prefix: s.prefix, objects: c.Objects,
		width:   max(6, len(strconv.Itoa(max(c.Objects-1, 0)))),
		payload: randomPayload(s.maxSize+payloadSlack, c.Seed),
		putOpts: minio.PutObjectOptions{
			DisableMultipart:     true,
			DisableContentSha256: !c.SignPayload,
			ContentType:          "application/octet-stream",
		},
		creds: creds,
	}
	epoch := time.Now()
	d.states.New = func(vu int) *vuState { return newVUState(vu, c.Seed, d.streams+uint64(vu), epoch) }
	return d, nil
}

// Close closes idle connections. Call it after the last Do and Cleanup.
func (d *Driver) Close() error {
	d.rt.CloseIdleConnections()
	return nil
}

// Do performs one operation, picked by weight with the VU's random source,
// and fills in r. A ctx done before or during it is stats.Interrupted; the
// driver's own timeout is stats.Timeout.
func (d *Driver) Do(ctx context.Context, vu int, r *driver.Result) {
	if vu < 0 {
		*r = driver.Result{Op: "S3", Class: stats.Protocol, Message: "s3 driver: negative vu " + strconv.Itoa(vu)}
		return
	}
	st := d.states.Get(vu)
	op := d.spec.ops.pick(st.rng)
	*r = driver.Result{Op: op.String()}
	start := st.begin()
	octx, cancel := context.WithTimeout(st.ctx(ctx), d.spec.timeout)
	var err error
	switch op {
	case opGet:
		err = d.get(octx, st, start, r)
	case opPut:
		err = d.put(octx, st, r)
	case opHead:
		err = d.head(octx, st)
	case opDelete:
		err = d.remove(octx, st)
	case opList:
		err = d.list(octx)
	}
	cancel()
	if r.TTFB == 0 {
		r.TTFB = st.responseTTFB(start)
	}
	r.Connect = time.Duration(st.connect.Load())
	if err != nil {
		r.Class, r.Message = classify(err, ctx, d.spec.timeout)
	}
}

// fixedName is the key of prepared object i.
func (d *Driver) fixedName(i int) string {
	s := strconv.Itoa(i)
	buf := make([]byte, 0, len(d.prefix)+4+d.width)
	buf = append(buf, d.prefix...)
	buf = append(buf, "obj-"...)
	for n := len(s); n < d.width; n++ {
		buf = append(buf, '0')
	}
	return string(append(buf, s...))
}

// freshName is the key of the n-th object VU vu PUT under a new name:
// "put-<vu>-<n>", or a worker's "put-w<worker>-<vu>-<n>".
func (d *Driver) freshName(vu int, n int64) string {
	buf := make([]byte, 0, len(d.prefix)+40)
	buf = append(buf, d.prefix...)
	buf = append(buf, "put-"...)
	if d.workers > 1 {
		buf = append(buf, 'w')
		buf = strconv.AppendInt(buf, int64(d.worker), 10)
		buf = append(buf, '-')
	}
	buf = strconv.AppendInt(buf, int64(vu), 10)
	buf = append(buf, '-')
	return string(strconv.AppendInt(buf, n, 10))
}

// fixedSize is the size of prepared object i: the same for the same seed.
func (d *Driver) fixedSize(i int) int64 {
	if len(d.spec.sizes.values) == 1 {
		return d.spec.sizes.values[0]
	}
	return d.spec.sizes.at(hashIndex(d.cfg.Seed, i) % d.spec.sizes.total())
}

// body slices a PUT body of size bytes from the random payload at off.
func (d *Driver) body(size int64, off int) []byte {
	off %= payloadSlack + 1
	return d.payload[off : off+int(size)]
}

// markFixed records that fixed names below n may have been written.
func (d *Driver) markFixed(n int64) {
	for {
		cur := d.fixedHigh.Load()
		if cur >= n || d.fixedHigh.CompareAndSwap(cur, n) {
			return
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

// randomPayload returns n random bytes (ChaCha8, seeded: the same every
// run), cheap to make even for a 1 GiB object.
func randomPayload(n int64, seed uint64) []byte {
	var key [32]byte
	for i := range 4 {
		v := hashIndex(seed, i)
		for j := range 8 {
			key[i*8+j] = byte(v >> (8 * j))
		}
	}
	b := make([]byte, n)
	c := mrand.NewChaCha8(key)
	_, _ = c.Read(b)
	return b
}
