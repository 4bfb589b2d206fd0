// Package builtin holds perflab's built-in targets: small servers with a
// known, configurable behaviour (latency distribution, response size, error
// rate, periodic stalls) that the demo and the accuracy tests measure, so
// that what perflab reports can be checked against what the target did.
package builtin

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Latency distributions understood by HTTPConfig.Dist.
const (
	DistFixed   = "fixed"   // every response waits exactly Latency
	DistUniform = "uniform" // Latency ± Jitter, uniformly
	DistNormal  = "normal"  // normal around Latency with standard deviation Jitter
)

// HTTPConfig describes how the built-in HTTP target answers. The zero value
// answers at once with an empty 200.
type HTTPConfig struct {
	Latency    time.Duration // base response delay
	Jitter     time.Duration // spread: uniform ±Jitter, or normal with stddev Jitter
	Dist       string        // "fixed" (default when Jitter==0), "uniform", "normal" (default when Jitter>0)
	Size       int64         // response body bytes
	ErrorRate  float64       // fraction [0,1] of requests answered 500
	StallFor   time.Duration // periodic stall: every StallEvery, the server holds all responses for StallFor
	StallEvery time.Duration
	Seed       int64 // 0 = random
	// Ballast is the size of a heap allocation the target holds and never
	// touches: the classic trick to make the Go GC run less often, whose
	// effect (with and without GOMEMLIMIT) a plan's matrix can measure. It
	// counts in the heap (go_memstats_heap_inuse_bytes) but, untouched, not
	// in resident memory.
	Ballast int64
	// Resident is the size of a heap allocation the target writes once, a
	// page at a time, and holds: unlike the ballast it is resident memory,
	// a known memory cost (as CPUWork is a known CPU cost), against which
	// a measurement of the target's memory (its RSS, its container's
	// working set) can be checked.
	Resident int64
	// Capacity caps the load endpoint at this many requests per second,
	// served first come first served (0: unlimited); a request that would
	// wait longer than QueueMax for its turn is answered 503 at once. The
	// wait comes before Latency.
	Capacity float64
	QueueMax time.Duration // 0: DefaultQueueMax
	// CPUWork is the CPU time each request to the load endpoint burns
	// (BurnCPU) before it waits its latency: a known cost per request, so
	// that a comparison of two runs can be checked against it.
	CPUWork time.Duration
}

// Validate lists every problem with the configuration at once; nil means
// the configuration is usable.
func (c HTTPConfig) Validate() []error {
	var errs []error
	nonNegative := func(name string, d time.Duration) {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s %v must be >= 0", name, d))
		}
	}
	nonNegative("latency", c.Latency)
	nonNegative("jitter", c.Jitter)
	nonNegative("stall duration", c.StallFor)
	nonNegative("stall period", c.StallEvery)
	nonNegative("cpu work", c.CPUWork)
	if c.Size < 0 {
		errs = append(errs, fmt.Errorf("response size %d must be >= 0", c.Size))
	}
	if c.Ballast < 0 {
		errs = append(errs, fmt.Errorf("ballast %d must be >= 0", c.Ballast))
	}
	if c.Resident < 0 {
		errs = append(errs, fmt.Errorf("resident memory %d must be >= 0", c.Resident))
	}
	if math.IsNaN(c.ErrorRate) || c.ErrorRate < 0 || c.ErrorRate > 1 {
		errs = append(errs, fmt.Errorf("error rate %v must be between 0 and 1", c.ErrorRate))
	}
	switch c.Dist {
	case "", DistUniform, DistNormal:
	case DistFixed:
		if c.Jitter > 0 {
			errs = append(errs, fmt.Errorf("jitter %v has no effect with dist %q; use %q or %q", c.Jitter, DistFixed, DistUniform, DistNormal))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown latency distribution %q; want %q, %q or %q", c.Dist, DistFixed, DistUniform, DistNormal))
	}
	errs = append(errs, c.validateCapacity()...)
	return append(errs, c.validateStall()...)
}

func (c HTTPConfig) validateStall() []error {
	switch {
	case c.StallFor > 0 && c.StallEvery == 0:
		return []error{fmt.Errorf("stall duration %v needs a stall period", c.StallFor)}
	case c.StallFor > 0 && c.StallFor >= c.StallEvery:
		return []error{fmt.Errorf("stall duration %v must be shorter than its period %v", c.StallFor, c.StallEvery)}
	}
	return nil
}

// dist returns the distribution the handler samples from, applying the
// default: fixed without jitter, normal with it. An unknown name (which
// Validate rejects) falls back to the default too.
func (c HTTPConfig) dist() string {
	switch c.Dist {
	case DistFixed, DistUniform, DistNormal:
		return c.Dist
	}
	if c.Jitter > 0 {
		return DistNormal
	}
	return DistFixed
}

// errStallSyntax is wrapped by ParseStall for input not of the form
// "<duration>/<duration>".
var errStallSyntax = errors.New(`want <stall>/<period>, e.g. "1s/10s"`)

// ParseStall parses a periodic stall written "<stall>/<period>", e.g.
// "1s/10s": every 10 seconds the target holds all responses for 1 second.
// The empty string means no stall. Ranges are checked by
// HTTPConfig.Validate, not here.
func ParseStall(s string) (stallFor, every time.Duration, err error) {
	if s == "" {
		return 0, 0, nil
	}
	forText, everyText, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(everyText, "/") {
		return 0, 0, fmt.Errorf("cannot parse stall %q: %w", s, errStallSyntax)
	}
	stallFor, err = time.ParseDuration(strings.TrimSpace(forText))
	if err != nil {
		return 0, 0, fmt.Errorf("cannot parse stall %q: %w", s, err)
	}
	every, err = time.ParseDuration(strings.TrimSpace(everyText))
	if err != nil {
		return 0, 0, fmt.Errorf("cannot parse stall %q: %w", s, err)
	}
	return stallFor, every, nil
}
