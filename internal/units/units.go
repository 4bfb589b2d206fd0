// Package units parses and prints the quantities users write in plans and
// flags: rates ("5000/s", "300/m"), sizes ("1KiB", "4MB") and byte rates
// ("5.8MB/s").
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseRate reads an operation rate: "5000/s", "300/m", "2/h", "250" (per
// second), "1/100ms". It returns operations per second.
func ParseRate(s string) (float64, error) {
	num, per, found := strings.Cut(strings.TrimSpace(s), "/")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("cannot parse rate %q: want a number >= 0 with an optional unit, like 5000/s or 300/m", s)
	}
	if !found {
		return v, nil
	}
	d, err := perUnit(strings.TrimSpace(per))
	if err != nil {
		return 0, fmt.Errorf("cannot parse rate %q: %w", s, err)
	}
	return v / d.Seconds(), nil
}

func perUnit(u string) (time.Duration, error) {
	switch u {
	case "s", "sec":
		return time.Second, nil
	case "m", "min":
		return time.Minute, nil
	case "h":
		return time.Hour, nil
	}
	d, err := time.ParseDuration(u)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("unknown rate unit %q: use s, m, h or a duration like 100ms", u)
	}
	return d, nil
}

var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseBytes reads a size: "512", "1KiB", "4MiB", "5.8MB" (decimal units are
// powers of 1000, binary units powers of 1024).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	mult, ok := byteUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if err != nil || !ok || v < 0 || v*mult > math.MaxInt64 {
		return 0, fmt.Errorf("cannot parse size %q: want a number with an optional unit, like 512, 1KiB, 4MiB or 5.8MB", s)
	}
	return int64(math.Round(v * mult)), nil
}

// ParseByteRate reads a byte rate like "5.8MB/s" or "100KiB/s"; it returns
// bytes per second.
func ParseByteRate(s string) (float64, error) {
	size, per, found := strings.Cut(strings.TrimSpace(s), "/")
	if !found {
		return 0, fmt.Errorf("cannot parse byte rate %q: want a size per time, like 5.8MB/s", s)
	}
	b, err := ParseBytes(size)
	if err != nil {
		return 0, fmt.Errorf("cannot parse byte rate %q: %w", s, err)
	}
	d, err := perUnit(strings.TrimSpace(per))
	if err != nil {
		return 0, fmt.Errorf("cannot parse byte rate %q: %w", s, err)
	}
	return float64(b) / d.Seconds(), nil
}

// FormatBytes prints n bytes with a binary unit and three significant digits.
func FormatBytes(n float64) string {
	const k = 1024.0
	for _, u := range []struct {
		size float64
		name string
	}{{k * k * k * k, "TiB"}, {k * k * k, "GiB"}, {k * k, "MiB"}, {k, "KiB"}} {
		if math.Abs(n) >= u.size {
			return Sig3(n/u.size) + " " + u.name
		}
	}
	return fmt.Sprintf("%.0f B", n)
}

// Sig3 writes v with three significant digits, no exponent and no
// trailing zeros, at any magnitude: 0.000123, 0.05, 1.5, 183, 1234.
func Sig3(v float64) string {
	if v == 0 {
		return "0"
	}
	prec := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
