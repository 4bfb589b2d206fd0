package s3driver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/units"
)

// opKind is one S3 operation.
type opKind uint8

const (
	opGet opKind = iota
	opPut
	opHead
	opDelete
	opList
	numOps
)

// opNames are the Result.Op names: one latency and TTFB histogram each.
var opNames = [numOps]string{"GET", "PUT", "HEAD", "DELETE", "LIST"}

func (k opKind) String() string { return opNames[k] }

func parseOp(s string) (opKind, bool) {
	for i, n := range opNames {
		if strings.EqualFold(s, n) {
			return opKind(i), true
		}
	}
	return 0, false
}

// weights picks values in proportion to integer weights.
type weights[T comparable] struct {
	values []T
	cum    []uint64 // cumulative weights; cum[len-1] is the total
}

func newWeights[T comparable](values []T, ws []int) weights[T] {
	w := weights[T]{values: values, cum: make([]uint64, len(ws))}
	var total uint64
	for i, x := range ws {
		total += uint64(x)
		w.cum[i] = total
	}
	return w
}

// pick returns a value drawn with rng; a single value costs no draw.
func (w *weights[T]) pick(rng *rand.Rand) T {
	if len(w.values) == 1 {
		return w.values[0]
	}
	return w.at(rng.Uint64N(w.total()))
}

// at returns the value whose share of the cumulative weights holds x,
// x < total.
func (w *weights[T]) at(x uint64) T {
	i := sort.Search(len(w.cum), func(i int) bool { return w.cum[i] > x })
	return w.values[i]
}

// hashIndex mixes seed and i into a uniform 64-bit value (splitmix64):
// what a fixed-name object's size is drawn from, so object i has the same
// size in every run with the same seed, whichever worker uploads it.
func hashIndex(seed uint64, i int) uint64 {
	z := seed + uint64(i)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (w *weights[T]) total() uint64 {
	if len(w.cum) == 0 {
		return 0
	}
	return w.cum[len(w.cum)-1]
}

// describe prints "GET 80 %, PUT 20 %" with name giving each value's text.
func (w *weights[T]) describe(name func(T) string) string {
	if len(w.values) == 1 {
		return name(w.values[0])
	}
	parts := make([]string, len(w.values))
	var prev uint64
	for i, v := range w.values {
		pct := 100 * float64(w.cum[i]-prev) / float64(w.total())
		prev = w.cum[i]
		parts[i] = name(v) + " " + strconv.FormatFloat(pct, 'g', 3, 64) + " %"
	}
	return strings.Join(parts, ", ")
}

// mean is the weighted mean of the values.
func (w *weights[T]) mean(val func(T) float64) float64 {
	var sum float64
	var prev uint64
	for i, v := range w.values {
		sum += val(v) * float64(w.cum[i]-prev)
		prev = w.cum[i]
	}
	if t := w.total(); t > 0 {
		return sum / float64(t)
	}
	return 0
}

func (w *weights[T]) has(pred T) bool {
	for _, v := range w.values {
		if v == pred {
			return true
		}
	}
	return false
}

// newRNG is the random source of one VU (or of object index i for sizes):
// the same seed and stream give the same sequence.
func newRNG(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// bitUnits are the link units in bits per second.
var bitUnits = map[string]float64{
	"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12,
	"bit/s": 1, "kbit/s": 1e3, "mbit/s": 1e6, "gbit/s": 1e9, "tbit/s": 1e12,
}

// parseLink reads a link capacity: "10Gbps", "100 Mbit/s" (bits, decimal)
// or a byte rate like "1.25GB/s". It returns bytes per second.
func parseLink(s string) (float64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i > 0 {
		if mult, ok := bitUnits[strings.ToLower(strings.TrimSpace(t[i:]))]; ok {
			v, err := strconv.ParseFloat(t[:i], 64)
			if err == nil && v > 0 && !math.IsInf(v, 0) {
				return v * mult / 8, nil
			}
		}
	}
	if v, err := units.ParseByteRate(t); err == nil && v > 0 {
		return v, nil
	}
	return 0, fmt.Errorf("cannot parse link %q: want a positive bit rate like 10Gbps or 100Mbit/s, or a byte rate like 1.25GB/s", s)
}

// formatBits prints a byte rate as bits per second: "10 Gbps".
func formatBits(bytesPerSec float64) string {
	bits := bytesPerSec * 8
	for _, u := range []struct {
		v    float64
		name string
	}{{1e12, "Tbps"}, {1e9, "Gbps"}, {1e6, "Mbps"}, {1e3, "kbps"}} {
		if bits >= u.v {
			return strconv.FormatFloat(bits/u.v, 'g', 4, 64) + " " + u.name
		}
	}
	return strconv.FormatFloat(bits, 'g', 4, 64) + " bps"
}

func sizeText(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	return units.FormatBytes(float64(n))
}
