package builtin

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidateReportsEveryProblem(t *testing.T) {
	cfg := HTTPConfig{
		Latency:    -time.Millisecond,
		Jitter:     -time.Millisecond,
		Dist:       "lognormal",
		Size:       -1,
		ErrorRate:  1.5,
		StallFor:   10 * time.Second,
		StallEvery: time.Second,
	}
	want := []string{
		"latency -1ms",
		"jitter -1ms",
		"response size -1",
		"error rate 1.5",
		`unknown latency distribution "lognormal"`,
		"stall duration 10s must be shorter than its period 1s",
	}
	errs := cfg.Validate()
	if len(errs) != len(want) {
		t.Fatalf("Validate() returned %d errors, want %d:\n%v", len(errs), len(want), errors.Join(errs...))
	}
	for _, w := range want {
		if !anyContains(errs, w) {
			t.Errorf("no error mentions %q in:\n%v", w, errors.Join(errs...))
		}
	}
}

func TestValidateSingleProblems(t *testing.T) {
	tests := []struct {
		name string
		cfg  HTTPConfig
		want string // "" means valid
	}{
		{"zero value", HTTPConfig{}, ""},
		{"fixed", HTTPConfig{Latency: 20 * time.Millisecond, Dist: DistFixed}, ""},
		{"uniform", HTTPConfig{Latency: 20 * time.Millisecond, Jitter: 2 * time.Millisecond, Dist: DistUniform}, ""},
		{"default dist with jitter", HTTPConfig{Jitter: time.Millisecond}, ""},
		{"error rate 0", HTTPConfig{ErrorRate: 0}, ""},
		{"error rate 1", HTTPConfig{ErrorRate: 1}, ""},
		{"stall", HTTPConfig{StallFor: time.Second, StallEvery: 10 * time.Second}, ""},
		{"period without stall", HTTPConfig{StallEvery: 10 * time.Second}, ""},
		{"negative error rate", HTTPConfig{ErrorRate: -0.1}, "error rate -0.1"},
		{"NaN error rate", HTTPConfig{ErrorRate: math.NaN()}, "error rate NaN"},
		{"fixed with jitter", HTTPConfig{Dist: DistFixed, Jitter: time.Millisecond}, "no effect"},
		{"stall without period", HTTPConfig{StallFor: time.Second}, "needs a stall period"},
		{"stall as long as period", HTTPConfig{StallFor: time.Second, StallEvery: time.Second}, "shorter than its period"},
		{"negative stall", HTTPConfig{StallFor: -time.Second, StallEvery: time.Second}, "stall duration -1s"},
		{"negative period", HTTPConfig{StallEvery: -time.Second}, "stall period -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.cfg.Validate()
			if tt.want == "" {
				if len(errs) != 0 {
					t.Fatalf("Validate() = %v, want no errors", errs)
				}
				return
			}
			if len(errs) != 1 || !anyContains(errs, tt.want) {
				t.Fatalf("Validate() = %v, want one error mentioning %q", errs, tt.want)
			}
		})
	}
}

func TestDistDefault(t *testing.T) {
	tests := []struct {
		cfg  HTTPConfig
		want string
	}{
		{HTTPConfig{}, DistFixed},
		{HTTPConfig{Jitter: time.Millisecond}, DistNormal},
		{HTTPConfig{Jitter: time.Millisecond, Dist: DistUniform}, DistUniform},
		{HTTPConfig{Dist: DistNormal}, DistNormal},
	}
	for _, tt := range tests {
		if got := tt.cfg.dist(); got != tt.want {
			t.Errorf("%+v.dist() = %q, want %q", tt.cfg, got, tt.want)
		}
	}
}

func TestParseStall(t *testing.T) {
	tests := []struct {
		in        string
		for_, per time.Duration
		wantErr   string
	}{
		{"", 0, 0, ""},
		{"1s/10s", time.Second, 10 * time.Second, ""},
		{"150ms/2s", 150 * time.Millisecond, 2 * time.Second, ""},
		{" 1s / 1m ", time.Second, time.Minute, ""},
		{"10s/1s", 10 * time.Second, time.Second, ""}, // a range problem, left to Validate
		{"1s", 0, 0, "want <stall>/<period>"},
		{"1s/10s/20s", 0, 0, "want <stall>/<period>"},
		{"1s/", 0, 0, "invalid duration"},
		{"/10s", 0, 0, "invalid duration"},
		{"1/10s", 0, 0, "missing unit"},
		{"a/b", 0, 0, "invalid duration"},
	}
	for _, tt := range tests {
		gotFor, gotEvery, err := ParseStall(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "cannot parse stall") {
				t.Errorf("ParseStall(%q) error = %v, want one mentioning %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || gotFor != tt.for_ || gotEvery != tt.per {
			t.Errorf("ParseStall(%q) = %v, %v, %v; want %v, %v, nil", tt.in, gotFor, gotEvery, err, tt.for_, tt.per)
		}
	}
}

func anyContains(errs []error, s string) bool {
	for _, err := range errs {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}
