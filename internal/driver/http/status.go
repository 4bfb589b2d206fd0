package httpdriver

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// DefaultExpectStatus is the statuses that count as a success when a
// plan names none: every 2xx and 3xx (a redirect not followed is an
// answer).
const DefaultExpectStatus = "200-399"

// StatusSet is the final statuses that count as a success
// (Config.ExpectStatus): ranges of codes, each in 100–599.
type StatusSet []statusRange

type statusRange struct{ lo, hi int }

// ParseStatusSet reads "200-299,304": codes and ranges of codes, comma
// separated; "" is DefaultExpectStatus.
func ParseStatusSet(s string) (StatusSet, error) {
	if strings.TrimSpace(s) == "" {
		s = DefaultExpectStatus
	}
	var set StatusSet
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, errA := strconv.Atoi(strings.TrimSpace(lo))
		b, errB := strconv.Atoi(strings.TrimSpace(hi))
		switch {
		case errA != nil || errB != nil:
			return nil, fmt.Errorf("expect_status %q: %q is not a status or a range of them (200-299)", s, part)
		case a < 100 || b > 599 || a > b:
			return nil, fmt.Errorf("expect_status %q: %q is not within 100-599, low to high", s, part)
		}
		set = append(set, statusRange{a, b})
	}
	return set, nil
}

// Has tells whether code is a success.
func (s StatusSet) Has(code int) bool {
	for _, r := range s {
		if r.lo <= code && code <= r.hi {
			return true
		}
	}
	return false
}

// String is the set as ParseStatusSet reads it.
func (s StatusSet) String() string {
	parts := make([]string, len(s))
	for i, r := range s {
		parts[i] = strconv.Itoa(r.lo)
		if r.hi != r.lo {
			parts[i] += "-" + strconv.Itoa(r.hi)
		}
	}
	return strings.Join(parts, ",")
}

// statusClass is the class of a final answer of status code: OK when the
// set has it; else 429 is RateLimited, 4xx and 5xx theirs, and any other
// (1xx, 2xx or 3xx the plan does not count as a success) StatusOther.
func (s StatusSet) statusClass(code int) stats.Class {
	switch {
	case s.Has(code):
		return stats.OK
	case code == http.StatusTooManyRequests:
		return stats.RateLimited
	case code >= 500:
		return stats.Status5xx
	case code >= 400:
		return stats.Status4xx
	}
	return stats.StatusOther
}

// judge fills in r's class and message from a final answer: status code,
// its reason phrase, the start of its body and the body's length.
func (d *Driver) judge(r *driver.Result, code int, reason string, head []byte, n int64) {
	if r.Class = d.expect.statusClass(code); r.Class == stats.OK {
		return
	}
	r.Message = statusMessage(code, reason, head, n, d.secrets)
	if r.Class == stats.StatusOther {
		r.Message += notExpected(code, d.expect)
	}
}

// notExpected says why a status under 400 failed.
func notExpected(code int, expect StatusSet) string {
	if code == http.StatusSwitchingProtocols {
		return " (the connection no longer speaks HTTP/1.1)"
	}
	return " (not an expected status: " + expect.String() + ")"
}
