package units

import (
	"math"
	"testing"
)

func TestParseRate(t *testing.T) {
	good := map[string]float64{"5000/s": 5000, "5000": 5000, "300/m": 5, "7200/h": 2, "1/100ms": 10, " 2.5 / s ": 2.5, "0": 0}
	for in, want := range good {
		if got, err := ParseRate(in); err != nil || math.Abs(got-want) > 1e-9 {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "-1/s", "10/fortnight", "10/0s", "NaN"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) accepted", in)
		}
	}
}

func TestParseBytes(t *testing.T) {
	good := map[string]int64{"512": 512, "1KiB": 1024, "4MiB": 4 << 20, "5.8MB": 5_800_000, "1k": 1000, "2 GiB": 2 << 30, "0": 0}
	for in, want := range good {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "KiB", "1XB", "-1", "1.2.3MB", "1e30TiB"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) accepted", in)
		}
	}
}

func TestParseByteRate(t *testing.T) {
	if got, err := ParseByteRate("5.8MB/s"); err != nil || got != 5_800_000 {
		t.Errorf("ParseByteRate = %v, %v", got, err)
	}
	if got, err := ParseByteRate("60MiB/m"); err != nil || got != 1<<20 {
		t.Errorf("ParseByteRate = %v, %v", got, err)
	}
	for _, in := range []string{"5.8MB", "x/s", "1MB/fortnight"} {
		if _, err := ParseByteRate(in); err == nil {
			t.Errorf("ParseByteRate(%q) accepted", in)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for in, want := range map[float64]string{512: "512 B", 1536: "1.5 KiB", 1023.4 * 1024 * 1024: "1023 MiB", 1010 * 1024 * 1024: "1010 MiB", -3 * 1024: "-3 KiB", 1.456 * 1024: "1.46 KiB", 64 << 20: "64 MiB", 4 << 20: "4 MiB", 3 << 30: "3 GiB"} {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestSig3(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 0.000123: "0.000123", 0.05: "0.05", 1.5: "1.5", 183.4: "183", 1234: "1234", 9.999: "10", -14.56: "-14.6"} {
		if got := Sig3(in); got != want {
			t.Errorf("Sig3(%v) = %q, want %q", in, got, want)
		}
	}
}
