package s3driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/driver/dial"

	"github.com/minio/minio-go/v7"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// listPage is the number of keys one LIST asks for (S3's maximum).
const listPage = 1000

// maxMessage bounds Result.Message.
const maxMessage = driver.MaxMessage

// get reads a random prepared object into the VU's buffer. minio-go's
// Core.GetObject sends the request and returns once the headers are in;
// TTFB is stamped when the first body bytes are read, so it covers the
// request, the headers and the first bytes of the body.
func (d *Driver) get(ctx context.Context, st *vuState, start int64, r *driver.Result) error {
	key := d.fixedName(st.rng.IntN(d.objects))
	body, _, _, err := d.core.GetObject(ctx, d.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer body.Close()
	for {
		n, err := body.Read(st.buf)
		if r.TTFB == 0 && (n > 0 || err != nil) {
			r.TTFB = time.Duration(st.now() - start)
		}
		r.BytesRecv += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &bodyError{err: err}
		}
	}
}

// put writes an object from the shared random payload: a new name, or with
// PutOverwrite a random prepared one (keeping its size).
func (d *Driver) put(ctx context.Context, st *vuState, r *driver.Result) error {
	var key string
	var size int64
	if d.cfg.PutOverwrite {
		i := st.rng.IntN(d.objects)
		key, size = d.fixedName(i), d.fixedSize(i)
		d.markFixed(int64(d.objects))
	} else {
		n := st.next.Add(1) - 1 // counted before the request: Cleanup deletes it even if it timed out
		key, size = d.freshName(st.vu, n), d.spec.sizes.pick(st.rng)
	}
	st.body.reset(d.body(size, st.rng.IntN(payloadSlack+1)))
	_, err := d.client.PutObject(ctx, d.bucket, key, &st.body, size, d.putOpts)
	r.BytesSent = st.body.n
	return err
}

// head asks for a random prepared object's metadata.
func (d *Driver) head(ctx context.Context, st *vuState) error {
	_, err := d.client.StatObject(ctx, d.bucket, d.fixedName(st.rng.IntN(d.objects)), minio.StatObjectOptions{})
	return err
}

// remove deletes, in order of preference: the oldest object this VU PUT
// and has not deleted; with no PUT in the mix, the next prepared object no
// VU has deleted; else a name not written (S3 answers 204 all the same).
func (d *Driver) remove(ctx context.Context, st *vuState) error {
	var key string
	next := st.next.Load()
	switch {
	case st.oldest < next:
		key = d.freshName(st.vu, st.oldest)
		st.oldest++
	case d.spec.deleteFix:
		if i := d.fixedIndex(d.fixedDeleted.Add(1) - 1); i < int64(d.objects) {
			key = d.fixedName(int(i))
			break
		}
		fallthrough
	default:
		key = d.freshName(st.vu, next)
	}
	return d.client.RemoveObject(ctx, d.bucket, key, minio.RemoveObjectOptions{})
}

// list asks for one page of up to listPage keys under the key prefix.
func (d *Driver) list(ctx context.Context) error {
	noOwner := false
	n := 0
	for obj := range d.client.ListObjectsIter(ctx, d.bucket, minio.ListObjectsOptions{
		Prefix: d.prefix, Recursive: true, MaxKeys: listPage, FetchOwner: &noOwner,
	}) {
		if obj.Err != nil {
			return obj.Err
		}
		if n++; n >= listPage {
			break // the page is in; stop before a second request
		}
	}
	return nil
}

// bodyError is an error met reading a GET body, after the answer began.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "cannot read object body: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// classify maps an operation's error to its class and message:
//
//   - parent done: Interrupted (the engine cut the operation short).
//   - an S3 error answer: SlowDown or HTTP 429 are RateLimited, other 5xx
//     Status5xx, anything else the server answered (4xx, and the 3xx
//     redirects S3 sends for a wrong region) Status4xx; the message starts
//     with the S3 code. An error minio-go raised before sending (no
//     status) is Protocol.
//   - our timeout: Timeout. Our TLS handshake failing: TLS.
//   - else dial.Classify (dns, connect, timeout, tls, protocol); a
//     connection lost while reading a body is Protocol.
func classify(err error, parent context.Context, timeout time.Duration) (stats.Class, string) {
	var (
		er   minio.ErrorResponse
		tlsE *dial.HandshakeError
		body *bodyError
	)
	switch {
	case parent.Err() != nil:
		return stats.Interrupted, trim(err.Error())
	case errors.As(err, &er) && (er.Code != "" || er.StatusCode != 0):
		return s3Class(er), s3Message(er)
	case errors.Is(err, context.DeadlineExceeded):
		return stats.Timeout, fmt.Sprintf("operation timed out after %v", timeout)
	case errors.As(err, &tlsE):
		return stats.TLS, trim(err.Error())
	}
	class, msg := dial.Classify(err, parent)
	if errors.As(err, &body) {
		class = dial.BodyClass(class)
	}
	return class, trim(msg)
}

func s3Class(er minio.ErrorResponse) stats.Class {
	switch {
	case er.StatusCode == 0:
		return stats.Protocol
	case er.Code == "SlowDown" || er.StatusCode == 429:
		return stats.RateLimited
	case er.StatusCode >= 500:
		return stats.Status5xx
	default:
		return stats.Status4xx
	}
}

// s3Message is "NoSuchBucket (HTTP 404): The specified bucket does not
// exist".
func s3Message(er minio.ErrorResponse) string {
	code := er.Code
	if code == "" {
		code = "HTTP error"
	}
	if er.StatusCode != 0 {
		code += " (HTTP " + strconv.Itoa(er.StatusCode) + ")"
	}
	if er.Message != "" {
		code += ": " + er.Message
	}
	return trim(code)
}

func trim(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage-3] + "..."
	}
	return s
}
