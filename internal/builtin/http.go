package builtin

import (
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"time"
)

// maxChunk bounds the pre-built body buffer; larger responses write it
// repeatedly, so a 1 GiB response does not cost 1 GiB of memory.
const maxChunk = 1 << 20

// errorBody is the body of an injected 500.
const errorBody = "perflab: injected error\n"

// rejectedBody is the body of a 503 for a request over the capacity.
const rejectedBody = "perflab: over capacity\n"

// HTTP is the built-in HTTP target. Every path except /metrics and /health
// is a load endpoint that answers after a sampled delay with a body of the
// configured size, or with a 500 for the configured fraction of requests.
type HTTP struct {
	cfg     HTTPConfig
	dist    string
	now     func() time.Time
	clock   answerClock // times the answers
	start   time.Time
	rng     *rand.Rand
	chunk   []byte
	ballast []byte         // held, never touched: see HTTPConfig.Ballast
	held    []byte         // held and written: see HTTPConfig.Resident
	queue   *capacityQueue // nil without a capacity
	metrics *targetMetrics
}

var _ http.Handler = (*HTTP)(nil)

// NewHTTP returns the target for cfg, which should have passed Validate;
// NewHTTP does not check it again (negative delays and sizes act as 0).
// now places requests relative to the stall windows, which start at the
// handler's creation; nil means time.Now. Durations reported in /metrics are
// measured with the real monotonic clock whatever now is.
func NewHTTP(cfg HTTPConfig, now func() time.Time) *HTTP {
	if now == nil {
		now = time.Now
	}
	h := &HTTP{
		cfg:   cfg,
		dist:  cfg.dist(),
		now:   now,
		clock: fineClock{},
		start: now(),
		rng:   newRand(cfg.Seed),
		chunk: newChunk(cfg.Size),
	}
	if cfg.Ballast > 0 {
		h.ballast = make([]byte, cfg.Ballast)
	}
	if cfg.Resident > 0 {
		h.held = resident(cfg.Resident)
	}
	if cfg.Capacity > 0 {
		maxWait := cfg.QueueMax
		if maxWait <= 0 {
			maxWait = DefaultQueueMax
		}
		h.queue = newCapacityQueue(cfg.Capacity, maxWait)
	}
	h.metrics = newTargetMetrics(h.stallsBegun, float64(len(h.ballast)))
	return h
}

// resident returns n bytes written once a page at a time: each page is
// then the process's own, resident (a fresh allocation from the OS is
// zero pages the kernel has not yet given it).
func resident(n int64) []byte {
	b := make([]byte, n)
	page := os.Getpagesize()
	for i := 0; i < len(b); i += page {
		b[i] = 1
	}
	return b
}

// newChunk returns the body buffer: a readable repeating pattern of up to
// maxChunk bytes.
func newChunk(size int64) []byte {
	const pattern = "perflab-builtin-target\n"
	n := min(max(size, 0), maxChunk)
	chunk := make([]byte, n)
	for i := range chunk {
		chunk[i] = pattern[i%len(pattern)]
	}
	return chunk
}

// ServeHTTP answers /health and /metrics directly and every other path as a
// load endpoint.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/health":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "OK")
	case "/metrics":
		h.metrics.handler.ServeHTTP(w, r)
	default:
		h.serveLoad(w, r)
	}
}

// serveLoad drains the request, holds it through any stall and its sampled
// latency, then answers. If the client goes away first it gives up at once.
func (h *HTTP) serveLoad(w http.ResponseWriter, r *http.Request) {
	began := h.clock.now()
	m := h.metrics
	m.inFlight.Inc()
	defer m.inFlight.Dec()

	_, _ = io.Copy(io.Discard, r.Body)
	BurnCPU(h.cfg.CPUWork)
	var queued time.Duration
	if h.queue != nil {
		var ok bool
		if queued, ok = h.queue.admit(h.clock.now()); !ok {
			m.rejected.Inc()
			m.bytes.Add(float64(writeStatus(w, http.StatusServiceUnavailable, rejectedBody)))
			return
		}
	}
	wait := queued + stallWait(h.now().Sub(h.start), h.cfg.StallFor, h.cfg.StallEvery)
	fail := h.cfg.ErrorRate > 0 && h.rng.Float64() < h.cfg.ErrorRate
	wait += sampleLatency(h.rng, h.dist, h.cfg.Latency, h.cfg.Jitter)
	if !sleep(r.Context(), h.clock, wait) {
		m.canceled.Inc()
		return
	}

	var n int64
	if fail {
		n = writeError(w)
		m.failed.Inc()
	} else {
		n = h.writeBody(w)
		m.ok.Inc()
	}
	m.bytes.Add(float64(n))
	m.duration.Observe(h.clock.now().Sub(began).Seconds())
}

// writeBody writes a 200 with exactly cfg.Size bytes and returns how many
// body bytes reached the connection.
func (h *HTTP) writeBody(w http.ResponseWriter) int64 {
	size := max(h.cfg.Size, 0)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	var written int64
	for written < size {
		n, err := w.Write(h.chunk[:min(size-written, int64(len(h.chunk)))])
		written += int64(n)
		if err != nil {
			break
		}
	}
	return written
}

func writeError(w http.ResponseWriter) int64 {
	return writeStatus(w, http.StatusInternalServerError, errorBody)
}

// writeStatus answers with code and a short text body.
func writeStatus(w http.ResponseWriter, code int, body string) int64 {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	n, _ := io.WriteString(w, body)
	return int64(n)
}

// stallsBegun feeds perflab_target_stalls_total at scrape time.
func (h *HTTP) stallsBegun() float64 {
	return float64(stallsBegun(h.now().Sub(h.start), h.cfg.StallFor, h.cfg.StallEvery))
}
