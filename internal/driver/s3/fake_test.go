package s3driver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// fakeS3 is an httptest server that answers like S3 enough for minio-go
// and records each request as "METHOD key" (the path without the bucket).
type fakeS3 struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []string
	// answer, when set, may answer a request itself (returns true).
	answer func(w http.ResponseWriter, r *http.Request) bool
}

const fakeBody = "0123456789"

func newFakeS3(t *testing.T, answer func(w http.ResponseWriter, r *http.Request) bool) *fakeS3 {
	f := &fakeS3{answer: answer}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeS3) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	_, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	f.mu.Lock()
	f.reqs = append(f.reqs, r.Method+" "+key)
	f.mu.Unlock()
	if f.answer != nil && f.answer(w, r) {
		return
	}
	h := w.Header()
	h.Set("ETag", `"abc"`)
	h.Set("Last-Modified", time.Unix(0, 0).UTC().Format(http.TimeFormat))
	switch {
	case r.Method == http.MethodGet && key == "": // ListObjectsV2
		h.Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`)
	case r.Method == http.MethodGet, r.Method == http.MethodHead:
		h.Set("Content-Length", fmt.Sprint(len(fakeBody)))
		if r.Method == http.MethodGet {
			io.WriteString(w, fakeBody)
		}
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (f *fakeS3) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

func fakeConfig(f *fakeS3, ops map[string]int) Config {
	return Config{Endpoint: f.URL, Bucket: "bkt", AccessKey: "AK", SecretKey: "SECRETSECRET", PathStyle: PathStyleTrue,
		Ops: ops, Objects: 5, Size: "100", KeyPrefix: "p", Timeout: "5s"}
}

// TestMixWeightsAndDeterminism: ops come in the configured proportions,
// and the same seed and VU give the same sequence.
func TestMixWeightsAndDeterminism(t *testing.T) {
	f := newFakeS3(t, nil)
	c := fakeConfig(f, map[string]int{"get": 80, "PUT": 15, "delete": 5})
	c.Seed = 42
	run := func() (map[string]int, string) {
		d := newDriver(t, c)
		counts := map[string]int{}
		var seq strings.Builder
		var r driver.Result
		for range 2000 {
			d.Do(context.Background(), 3, &r)
			if r.Class != stats.OK {
				t.Fatalf("%s: %v %s", r.Op, r.Class, r.Message)
			}
			counts[r.Op]++
			seq.WriteString(r.Op[:1])
		}
		return counts, seq.String()
	}
	counts, seq1 := run()
	for op, want := range map[string]float64{"GET": 0.80, "PUT": 0.15, "DELETE": 0.05} {
		if got := float64(counts[op]) / 2000; got < want-0.03 || got > want+0.03 {
			t.Errorf("%s: %.3f of operations, want %.2f ± 0.03", op, got, want)
		}
	}
	if _, seq2 := run(); seq1 != seq2 {
		t.Error("same seed and VU gave different sequences")
	}
	c.Seed = 43
	if _, seq3 := run(); seq1 == seq3 {
		t.Error("another seed gave the same sequence")
	}
}

// TestKeySelection: GET and HEAD read prepared names, PUT writes fresh
// names per VU, DELETE removes the VU's oldest first.
func TestKeySelection(t *testing.T) {
	f := newFakeS3(t, nil)
	d := newDriver(t, fakeConfig(f, map[string]int{"get": 1, "head": 1, "put": 1, "delete": 1, "list": 1}))
	var r driver.Result
	for range 200 {
		d.Do(context.Background(), 7, &r)
		if r.Class != stats.OK {
			t.Fatalf("%s: %v %s", r.Op, r.Class, r.Message)
		}
	}
	// Replay the requests: PUT n writes p/put-7-n; a DELETE removes the
	// oldest name PUT and not deleted, or with none the next name.
	var puts, oldest int
	seen := map[string]bool{}
	for _, req := range f.requests() {
		method, key, _ := strings.Cut(req, " ")
		switch method {
		case http.MethodGet, http.MethodHead:
			if key == "" {
				continue // LIST
			}
			if !strings.HasPrefix(key, "p/obj-00000") || key > "p/obj-000004" {
				t.Errorf("%s read %q, not a prepared object", method, key)
			}
			seen[key] = true
		case http.MethodPut:
			if want := fmt.Sprintf("p/put-7-%d", puts); key != want {
				t.Fatalf("PUT wrote %q, want %q", key, want)
			}
			puts++
		case http.MethodDelete:
			want := fmt.Sprintf("p/put-7-%d", puts)
			if oldest < puts {
				want = fmt.Sprintf("p/put-7-%d", oldest)
				oldest++
			}
			if key != want {
				t.Fatalf("DELETE removed %q, want %q", key, want)
			}
		}
	}
	if len(seen) != 5 {
		t.Errorf("reads touched %d of the 5 prepared objects", len(seen))
	}
	if _, total := d.written(); total != int64(puts) {
		t.Errorf("written: %d names, want the %d PUT names", total, puts)
	}
}

// TestDeleteWithoutPut claims each prepared object once, then deletes
// missing names.
func TestDeleteWithoutPut(t *testing.T) {
	f := newFakeS3(t, nil)
	d := newDriver(t, fakeConfig(f, map[string]int{"delete": 1}))
	var r driver.Result
	for i := range 7 {
		d.Do(context.Background(), i%2, &r)
	}
	got := f.requests()
	want := []string{"DELETE p/obj-000000", "DELETE p/obj-000001", "DELETE p/obj-000002", "DELETE p/obj-000003",
		"DELETE p/obj-000004", "DELETE p/put-1-0", "DELETE p/put-0-0"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("requests %v, want %v", got, want)
	}
}

// TestPutOverwrite writes the prepared names only.
func TestPutOverwrite(t *testing.T) {
	f := newFakeS3(t, nil)
	c := fakeConfig(f, map[string]int{"put": 1})
	c.PutOverwrite = true
	d := newDriver(t, c)
	var r driver.Result
	for range 20 {
		d.Do(context.Background(), 0, &r)
		if r.Class != stats.OK || r.BytesSent != 100 {
			t.Fatalf("PUT: %v %s, %d bytes", r.Class, r.Message, r.BytesSent)
		}
	}
	for _, req := range f.requests() {
		if !strings.HasPrefix(req, "PUT p/obj-00000") {
			t.Errorf("request %q is not a PUT of a prepared name", req)
		}
	}
	if _, total := d.written(); total != 5 {
		t.Errorf("written: %d names, want the 5 prepared ones", total)
	}
}

// TestVirtualHostStyle: path_style false puts the bucket in the host name.
func TestVirtualHostStyle(t *testing.T) {
	for style, wantHost := range map[string]string{PathStyleFalse: "bkt.localhost:9000", PathStyleTrue: "localhost:9000"} {
		c := Config{Endpoint: "http://localhost:9000", Bucket: "bkt", Objects: 1, PathStyle: style, AccessKey: "a", SecretKey: "s"}
		d := newDriver(t, c)
		u, err := d.client.PresignedGetObject(context.Background(), "bkt", "k", time.Minute, url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		if u.Host != wantHost {
			t.Errorf("path_style %s: host %q, want %q (url %s)", style, u.Host, wantHost, u.Path)
		}
	}
}
