// Package observetest holds the test helpers the observe sources share:
// take a sample, compare points.
package observetest

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

// Sample samples src at at and fails the test on an error.
func Sample(t testing.TB, src observe.Source, at time.Time) []observe.Point {
	t.Helper()
	points, err := src.Sample(context.Background(), at)
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	return points
}

// CheckPoints reports an error unless got holds want's metrics in order,
// each value within 1e-9.
func CheckPoints(t testing.TB, got, want []observe.Point) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Metric == want[i].Metric && math.Abs(got[i].Value-want[i].Value) < 1e-9
	}
	if !ok {
		t.Errorf("points\n got %v\nwant %v", got, want)
	}
}
