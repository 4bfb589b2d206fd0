package slo

import "testing"

func TestKindFormat(t *testing.T) {
	tests := []struct {
		kind Kind
		v    float64
		want string
	}{
		{KindDuration, 0.18325, "183ms"}, {KindDuration, 1.2345, "1.23s"}, {KindDuration, 0.0000456, "45.6µs"},
		{KindDuration, 1234, "1234s"}, {KindFraction, 0.0005, "0.05%"}, {KindFraction, 1, "100%"},
		{KindRate, 957.34, "957/s"}, {KindCount, 3, "3"}, {KindNumber, 0.125, "0.125"}, {KindDuration, 0, "0µs"},
	}
	for _, tt := range tests {
		if got := tt.kind.Format(tt.v); got != tt.want {
			t.Errorf("Kind(%v).Format(%v) = %q, want %q", tt.kind, tt.v, got, tt.want)
		}
	}
}

func TestKindOf(t *testing.T) {
	for _, tt := range []struct {
		metric string
		kind   Kind
		ok     bool
	}{
		{"p99", KindDuration, true}, {"error_rate", KindFraction, true}, {"output_tokens_rate", KindRate, true},
		{"dropped", KindCount, true}, {"lost_samples", KindNumber, false},
	} {
		if k, ok := KindOf(tt.metric); k != tt.kind || ok != tt.ok {
			t.Errorf("KindOf(%q) = %v, %v, want %v, %v", tt.metric, k, ok, tt.kind, tt.ok)
		}
	}
}
