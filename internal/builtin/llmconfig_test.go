package builtin

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseRateLimit(t *testing.T) {
	tests := []struct {
		in     string
		n      int
		window time.Duration
	}{
		{"", 0, 0},
		{"100/1s", 100, time.Second},
		{"100/s", 100, time.Second},
		{" 6000 / 1m ", 6000, time.Minute},
		{"5/250ms", 5, 250 * time.Millisecond},
		{"5/.5s", 5, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		n, w, err := ParseRateLimit(tt.in)
		if err != nil || n != tt.n || w != tt.window {
			t.Errorf("ParseRateLimit(%q) = %d, %v, %v; want %d, %v", tt.in, n, w, err, tt.n, tt.window)
		}
	}
	for _, bad := range []string{"100", "x/1s", "1/2/3", "10/fast", "/1s"} {
		if _, _, err := ParseRateLimit(bad); err == nil {
			t.Errorf("ParseRateLimit(%q) succeeded, want an error", bad)
		} else if !strings.HasPrefix(err.Error(), "cannot parse rate limit") {
			t.Errorf("ParseRateLimit(%q) error %q lacks the standard prefix", bad, err)
		}
	}
	if _, _, err := ParseRateLimit("100"); !errors.Is(err, errRateLimitSyntax) {
		t.Errorf("ParseRateLimit without a window = %v, want errRateLimitSyntax", err)
	}
}

func TestLLMConfigValidate(t *testing.T) {
	if errs := (LLMConfig{}).Validate(); errs != nil {
		t.Errorf("zero config: %v", errs)
	}
	good := LLMConfig{Latency: 50 * time.Millisecond, Jitter: 5 * time.Millisecond, Dist: DistUniform,
		Tokens: 50, TokensPerSecond: 100, ErrorRate: 0.1, RateLimit: 100, RateWindow: time.Second}
	if errs := good.Validate(); errs != nil {
		t.Errorf("good config: %v", errs)
	}
	bad := LLMConfig{Latency: -1, Jitter: -1, Dist: "zipf", Tokens: -1, TokensPerSecond: math.NaN(),
		ErrorRate: 2, RateLimit: -1, RateWindow: -1, Model: "a\nb"}
	errs := bad.Validate()
	for _, want := range []string{"latency", "jitter", "distribution", "tokens -1", "tokens per second",
		"error rate", "rate limit -1", "window", "model"} {
		found := false
		for _, err := range errs {
			found = found || strings.Contains(err.Error(), want)
		}
		if !found {
			t.Errorf("Validate() = %v: nothing about %q", errs, want)
		}
	}
	if errs := (LLMConfig{RateLimit: 10}).Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "needs a window") {
		t.Errorf("limit without window: %v", errs)
	}
	if errs := (LLMConfig{TokensPerSecond: math.Inf(1)}).Validate(); len(errs) != 1 {
		t.Errorf("infinite token rate: %v", errs)
	}
}

func TestTokenSchedule(t *testing.T) {
	c := LLMConfig{TokensPerSecond: 100}
	if got := c.interval(); got != 10*time.Millisecond {
		t.Errorf("interval at 100 tokens/s = %v", got)
	}
	if got := (LLMConfig{}).interval(); got != 0 {
		t.Errorf("interval unpaced = %v", got)
	}
	if got := tokenAt(0, 50*time.Millisecond, 10*time.Millisecond); got != 50*time.Millisecond {
		t.Errorf("first token at %v, want the time to first token", got)
	}
	if got := tokenAt(49, 50*time.Millisecond, 10*time.Millisecond); got != 540*time.Millisecond {
		t.Errorf("token 49 at %v, want 540ms", got)
	}
}

func TestWindowLimiter(t *testing.T) {
	l := &windowLimiter{limit: 2, window: time.Second}
	steps := []struct {
		at    time.Duration
		ok    bool
		retry time.Duration
	}{
		{0, true, 0},
		{100 * time.Millisecond, true, 0},
		{200 * time.Millisecond, false, 800 * time.Millisecond},
		{999 * time.Millisecond, false, time.Millisecond}, // refusals do not use the budget...
		{time.Second, true, 0},                            // ...and a new window starts afresh
		{1500 * time.Millisecond, true, 0},
		{1600 * time.Millisecond, false, 400 * time.Millisecond},
		{5 * time.Second, true, 0}, // windows with no request in between
	}
	for _, s := range steps {
		ok, retry := l.admit(s.at)
		if ok != s.ok || retry != s.retry {
			t.Errorf("admit(%v) = %v, %v; want %v, %v", s.at, ok, retry, s.ok, s.retry)
		}
	}
}
