package self

import (
	"context"
	"testing"
	"time"
)

// BenchmarkSample is the cost of one sample of perflab itself, taken every
// second during a run.
func BenchmarkSample(b *testing.B) {
	s, err := New("")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Sample(context.Background(), now.Add(time.Duration(i)*time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}
