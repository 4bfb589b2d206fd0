package remotewrite

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/prompb"
)

// Label names every generated series carries, besides its family's.
const (
	instanceLabel = "instance"
	jobLabel      = "job"
)

// tseries is one series of the target template: its labels, sorted by name,
// with the instance and job values left to fill per target; and how its
// value moves from scrape to scrape.
type tseries struct {
	labels  []prompb.Label
	inst    int // index of the instance label in labels
	job     int // index of the job label
	kind    kind
	mag     float64
	integer bool
	frac    float64        // bucket: share of observations at or below le; hsum: the mean observation
	group   uint64         // seeds the value; all parts of one histogram share it, so they agree
	refs    []uint32       // remote write 2.0: labels as symbols of the generator's table; instanceRef for the instance value
	help    uint32         // remote write 2.0: the help text's symbol
	native  *nativeBuckets // nhist: its buckets
	bound   int            // of its encoded size but for the instance and job values (sizeBound)
}

// template expands families into the series of one target.
func template(fams []family) []tseries {
	var out []tseries
	for _, f := range fams {
		for _, set := range product(f.dims) {
			if f.kind != histogram {
				out = append(out, newSeries(f.name, set, f.kind, f.mag, f.integer, 0, uint64(len(out))))
				continue
			}
			group := uint64(len(out))
			for _, le := range append(slices.Clone(f.buckets), math.Inf(1)) {
				ls := append(slices.Clone(set), prompb.Label{Name: "le", Value: formatLe(le)})
				out = append(out, newSeries(f.name+"_bucket", ls, bucket, f.mag, true, logLogistic(le, f.median), group))
			}
			out = append(out,
				newSeries(f.name+"_sum", set, hsum, f.mag, false, f.median*math.Pi/2, group),
				newSeries(f.name+"_count", set, hcount, f.mag, true, 0, group))
		}
	}
	return out
}

// product is the cartesian product of dims: every combination of one value
// of each, as the labels it sets. No dims: one empty set.
func product(dims []dim) [][]prompb.Label {
	sets := [][]prompb.Label{nil}
	for _, d := range dims {
		next := make([][]prompb.Label, 0, len(sets)*len(d))
		for _, s := range sets {
			for _, v := range d {
				next = append(next, append(slices.Clone(s), v...))
			}
		}
		sets = next
	}
	return sets
}

func newSeries(name string, set []prompb.Label, k kind, mag float64, integer bool, frac float64, group uint64) tseries {
	ls := make([]prompb.Label, 0, len(set)+3)
	ls = append(ls, prompb.Label{Name: "__name__", Value: name})
	ls = append(ls, set...)
	ls = append(ls, prompb.Label{Name: instanceLabel}, prompb.Label{Name: jobLabel})
	slices.SortFunc(ls, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
	t := tseries{labels: ls, kind: k, mag: mag, integer: integer, frac: frac, group: group}
	for i, l := range ls {
		switch l.Name {
		case instanceLabel:
			t.inst = i
		case jobLabel:
			t.job = i
		}
	}
	return t
}

func formatLe(le float64) string {
	if math.IsInf(le, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(le, 'f', -1, 64)
}

// logLogistic is the share of observations at or below x when half of
// them fall below median: a latency-like distribution, nondecreasing in x,
// 1 at +Inf.
func logLogistic(x, median float64) float64 {
	if math.IsInf(x, 1) {
		return 1
	}
	r := median / x
	return 1 / (1 + r*r)
}

// mix is splitmix64's finalizer: a well-spread hash of x.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// value is the series' value at a scrape round for the target whose
// instance has id. It depends on nothing else, so it needs no state:
// counters grow by about mag per round, gauges wander within ±20 % of their
// level, histogram buckets are the round's count times their share, so
// they are cumulative and the +Inf bucket equals the count.
func (t *tseries) value(id, round uint64) float64 {
	h := mix(id*0x9e3779b97f4a7c15 + t.group)
	u1, h2 := unit(h), mix(h)
	u2 := unit(h2)
	r := float64(round)
	var v float64
	switch t.kind {
	case counter:
		v = t.mag*1000*u1 + r*t.mag*(0.5+u2)
	case gauge:
		period := 20 + 100*unit(mix(h2))
		v = t.mag * (0.5 + u1) * (1 + 0.2*math.Sin(2*math.Pi*(r/period+u2)))
	case fixed:
		v = t.mag * (0.5 + u1)
	case info:
		return t.mag
	case bucket, hsum, hcount:
		count := math.Floor(t.mag*1000*u1 + r*t.mag*(0.5+u2))
		switch t.kind {
		case bucket:
			return math.Floor(count * t.frac)
		case hsum:
			return count * t.frac
		}
		return count
	}
	if t.integer {
		v = math.Floor(v)
	}
	return v
}

// layoutFor picks the hardware of a target with about want series (within
// 4, or the smallest target when want is below it): CPUs, disks,
// filesystems and interfaces grow together, 4:1:2:1, then CPUs and
// filesystems are adjusted to come closest.
func layoutFor(want int) layout {
	fixedPart, per := seriesCoefficients()
	unitSize := 4*per[0] + per[1] + 2*per[2] + per[3]
	k := float64(want-fixedPart) / float64(unitSize)
	base := layout{
		cpus:        max(1, int(math.Round(4*k))),
		disks:       max(1, int(math.Round(k))),
		filesystems: max(1, int(math.Round(2*k))),
		netdevs:     max(1, int(math.Round(k))),
	}
	best, bestDiff := base, math.MaxInt
	for dc := -4; dc <= 4; dc++ {
		for df := -6; df <= 6; df++ {
			l := base
			l.cpus += dc
			l.filesystems += df
			if l.cpus < 1 || l.filesystems < 1 {
				continue
			}
			total := fixedPart + l.cpus*per[0] + l.disks*per[1] + l.filesystems*per[2] + l.netdevs*per[3]
			if d := abs(total - want); d < bestDiff {
				best, bestDiff = l, d
			}
		}
	}
	return best
}

// seriesCoefficients says how many series a target has: fixedPart plus
// per[0] per CPU, per[1] per disk, per[2] per filesystem, per[3] per
// network interface.
func seriesCoefficients() (fixedPart int, per [4]int) {
	one := seriesCount(layout{1, 1, 1, 1})
	per[0] = seriesCount(layout{2, 1, 1, 1}) - one
	per[1] = seriesCount(layout{1, 2, 1, 1}) - one
	per[2] = seriesCount(layout{1, 1, 2, 1}) - one
	per[3] = seriesCount(layout{1, 1, 1, 2}) - one
	return one - per[0] - per[1] - per[2] - per[3], per
}

// seriesCount is the number of series of a target of layout l.
func seriesCount(l layout) int {
	n := 0
	for _, f := range families(l) {
		size := 1
		for _, d := range f.dims {
			size *= len(d)
		}
		if f.kind == histogram {
			size *= len(f.buckets) + 3 // the buckets, +Inf, sum and count
		}
		n += size
	}
	return n
}

// minSeriesPerTarget is the size of the smallest target: one CPU, disk,
// filesystem and interface.
func minSeriesPerTarget() int { return seriesCount(layout{1, 1, 1, 1}) }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
