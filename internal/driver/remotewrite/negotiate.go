package remotewrite

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/perflab/perflab/internal/driver/dial"
)

// Content types of the two protocol versions (remote write 2.0 spec,
// "Content-Type"): 1.0's is sent bare, as Prometheus 2 sends it.
const (
	contentType1 = "application/x-protobuf"
	contentType2 = "application/x-protobuf;proto=io.prometheus.write.v2.Request"
)

// Response headers a 2.0 receiver sets on every answer: how much of the
// request it wrote.
const (
	hdrSamplesWritten    = "X-Prometheus-Remote-Write-Samples-Written"
	hdrHistogramsWritten = "X-Prometheus-Remote-Write-Histograms-Written"
	hdrExemplarsWritten  = "X-Prometheus-Remote-Write-Exemplars-Written"
)

// writeHeader is the header of every write of one version: the plan's
// headers, the protocol's, and User-Agent unless the plan sets one.
func writeHeader(plan http.Header, v2 bool) http.Header {
	h := plan.Clone()
	h.Set("Content-Encoding", "snappy")
	if v2 {
		h.Set("Content-Type", contentType2)
		h.Set("X-Prometheus-Remote-Write-Version", "2.0.0")
	} else {
		h.Set("Content-Type", contentType1)
		h.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	}
	if _, ok := plan["User-Agent"]; !ok {
		h.Set("User-Agent", dial.UserAgent)
	}
	return h
}

// counts are samples, histograms and exemplars.
type counts struct{ samples, histograms, exemplars int64 }

func (c *counts) add(o counts) {
	c.samples += o.samples
	c.histograms += o.histograms
	c.exemplars += o.exemplars
}

func (c counts) less(o counts) bool {
	return c.samples < o.samples || c.histograms < o.histograms || c.exemplars < o.exemplars
}

// written reads the written headers of resp; ok is false when it has none
// (a 1.0 receiver). A header that does not parse counts as 0, as
// Prometheus' own sender reads it.
func written(resp *http.Response) (c counts, ok bool) {
	for _, h := range []struct {
		name string
		n    *int64
	}{{hdrSamplesWritten, &c.samples}, {hdrHistogramsWritten, &c.histograms}, {hdrExemplarsWritten, &c.exemplars}} {
		v := resp.Header.Get(h.name)
		if v == "" {
			continue
		}
		ok = true
		*h.n, _ = strconv.ParseInt(v, 10, 64)
	}
	return c, ok
}

// protocol is which version Do sends now, and what the receiver said it
// wrote. With version auto it starts at 2.0 and falls back to 1.0, once,
// when the receiver refuses 2.0 (415) or answers 2xx without saying what
// it wrote (a 1.0 receiver that did not look at the Content-Type).
type protocol struct {
	auto bool
	v2   atomic.Bool
	mu   sync.Mutex
	figs ackFigures
}

// ackFigures are what was sent and what the receiver said it wrote.
type ackFigures struct {
	fellBack  string // why auto fell back to 1.0; "" when it did not
	sent      counts // in every first attempt of a batch
	okSent    counts // in requests answered 2xx with written headers
	acked     counts // what those headers said
	okBare    int64  // 2xx answers without written headers (1.0 receivers)
	short     int64  // 2xx answers whose headers said fewer than sent: silent partial loss
	shortNote string // the first of them
}

func newProtocol(version string) *protocol {
	p := &protocol{auto: version == VersionAuto}
	p.v2.Store(version != Version1)
	return p
}

// fallBack switches auto to 1.0 for the reason why, once; it says whether
// this call did.
func (p *protocol) fallBack(why string) bool {
	if !p.auto {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.figs.fellBack != "" {
		return false
	}
	p.figs.fellBack = why
	p.v2.Store(false)
	return true
}

func (p *protocol) addSent(c counts) {
	p.mu.Lock()
	p.figs.sent.add(c)
	p.mu.Unlock()
}

// answered records a 2xx answer to a request that carried sent: what its
// headers said it wrote (ok: it had them).
func (p *protocol) answered(sent, wrote counts, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ok {
		p.figs.okBare++
		return
	}
	p.figs.okSent.add(sent)
	p.figs.acked.add(wrote)
	if wrote.less(sent) {
		p.figs.short++
		if p.figs.shortNote == "" {
			p.figs.shortNote = "the first: " + describe(wrote) + " written of " + describe(sent)
		}
	}
}

// describe is "2000 samples, 0 histograms, 3 exemplars".
func describe(c counts) string {
	return strconv.FormatInt(c.samples, 10) + " samples, " + strconv.FormatInt(c.histograms, 10) + " histograms, " +
		strconv.FormatInt(c.exemplars, 10) + " exemplars"
}

// snapshot is a copy of p's figures.
func (p *protocol) snapshot() ackFigures {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.figs
}
