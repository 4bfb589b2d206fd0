package readback

import "testing"

// Two runs of one plan whose trace driver derived its rate from sizes
// drawn at random ask for rates that differ in the fourth digit: the
// same load. Rates that differ by more are not.
func TestNearRate(t *testing.T) {
	for _, c := range []struct {
		a, b float64
		want bool
	}{{15.7524, 15.7538, true}, {100, 100.09, true}, {100, 100.2, false}, {100, 200, false}, {0, 0, false}, {0, 1e-9, false}} {
		if got := nearRate(c.a, c.b); got != c.want {
			t.Errorf("nearRate(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
