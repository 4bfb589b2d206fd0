package stats

import (
	"testing"
	"time"
)

func TestPackAnswersAsDense(t *testing.T) {
	dense, packed := NewHist(), NewHist()
	for i := 1; i <= 5000; i++ {
		d := time.Duration(i*i%9973+1) * time.Microsecond
		dense.Record(d)
		packed.Record(d)
	}
	packed.Record(3 * time.Second) // a wide range
	dense.Record(3 * time.Second)
	packed.Pack()
	if packed.h != nil || packed.p == nil {
		t.Fatal("Pack left the counts dense")
	}
	if !packed.Equal(dense) {
		t.Fatal("packed counts differ from dense ones")
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		if a, b := packed.Quantile(q), dense.Quantile(q); a != b {
			t.Errorf("q%v: packed %v, dense %v", q, a, b)
		}
	}
	if packed.Min() != dense.Min() || packed.Max() != dense.Max() || packed.Mean() != dense.Mean() || packed.Count() != dense.Count() {
		t.Errorf("extremes, mean or count differ: %v %v %v %d, dense %v %v %v %d", packed.Min(), packed.Max(),
			packed.Mean(), packed.Count(), dense.Min(), dense.Max(), dense.Mean(), dense.Count())
	}
	packed.Record(time.Millisecond)
	dense.Record(time.Millisecond)
	if packed.h == nil || !packed.Equal(dense) {
		t.Error("recording into a packed histogram did not unpack it exactly")
	}
	empty := NewHist()
	empty.Pack()
	if empty.Count() != 0 {
		t.Error("packing an empty histogram gave it counts")
	}
}
