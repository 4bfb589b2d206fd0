package remotewrite

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/prompb"
)

func TestSeriesPerTarget(t *testing.T) {
	lo := minSeriesPerTarget()
	if lo < 300 || lo > 500 {
		t.Errorf("smallest target has %d series; want a few hundred", lo)
	}
	fixedPart, per := seriesCoefficients()
	for want := lo; want <= 200_000; want += 1 + want/50 {
		l := layoutFor(want)
		got := fixedPart + l.cpus*per[0] + l.disks*per[1] + l.filesystems*per[2] + l.netdevs*per[3]
		if d := abs(got - want); d > 4 {
			t.Fatalf("series_per_target %d: layout %+v has %d series, %d off", want, l, got, d)
		}
	}
	for _, want := range []int{lo, 800, 1000, 1200, 5000} { // the expanded template, not the arithmetic
		if got := len(template(families(layoutFor(want)))); abs(got-want) > 4 {
			t.Errorf("series_per_target %d: template has %d series", want, got)
		}
	}
	if l := layoutFor(DefaultSeriesPerTarget); l.cpus < 8 || l.disks < 2 || l.filesystems < 4 || l.netdevs < 2 {
		t.Errorf("default target %+v: want a server-like machine", l)
	}
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// TestTemplateLabels: every series has sorted, valid, distinct label names,
// non-empty values but for instance and job, and no two series share a
// label set; the families the brief names are there.
func TestTemplateLabels(t *testing.T) {
	tmpl := template(families(layoutFor(1000)))
	seen := map[string]bool{}
	names := map[string]bool{}
	for i, s := range tmpl {
		var key strings.Builder
		for j, l := range s.labels {
			if !labelName.MatchString(l.Name) {
				t.Fatalf("series %d: label name %q", i, l.Name)
			}
			if j > 0 && s.labels[j-1].Name >= l.Name {
				t.Fatalf("series %d: labels not sorted or repeated: %v", i, s.labels)
			}
			if (l.Value == "") != (j == s.inst || j == s.job) {
				t.Fatalf("series %d: label %s value %q", i, l.Name, l.Value)
			}
			key.WriteString(l.Name + "=" + l.Value + ",")
		}
		if s.labels[s.inst].Name != instanceLabel || s.labels[s.job].Name != jobLabel || s.labels[0].Name != "__name__" {
			t.Fatalf("series %d: %v", i, s.labels)
		}
		if seen[key.String()] {
			t.Fatalf("series %d repeats %s", i, key.String())
		}
		seen[key.String()] = true
		names[s.labels[0].Value] = true
	}
	for _, n := range []string{"node_cpu_seconds_total", "node_memory_MemAvailable_bytes", "node_filesystem_avail_bytes",
		"node_network_receive_bytes_total", "node_disk_read_bytes_total", "node_load1", "go_goroutines",
		"ebpf_exporter_bio_latency_seconds_bucket", "node_exporter_scrape_duration_seconds_count"} {
		if !names[n] {
			t.Errorf("no %s series", n)
		}
	}
}

// TestValues: counters never decrease, histogram buckets are cumulative in
// le with +Inf equal to _count, and the sum agrees with the count.
func TestValues(t *testing.T) {
	tmpl := template(families(layoutFor(1000)))
	for _, id := range []uint64{0, 7, 123456} {
		for round := uint64(0); round < 50; round++ {
			hists := map[uint64][]float64{} // group → bucket values in template order (le ascending)
			counts := map[uint64]float64{}
			for i := range tmpl {
				s := &tmpl[i]
				v := s.value(id, round)
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%v: value %v", s.labels, v)
				}
				if s.integer && v != math.Floor(v) {
					t.Fatalf("%v: value %v is not whole", s.labels, v)
				}
				switch s.kind {
				case counter, hcount, bucket, hsum:
					if prev := s.value(id, round-1); round > 0 && v < prev {
						t.Fatalf("%v fell from %v to %v", s.labels, prev, v)
					}
				}
				switch s.kind {
				case bucket:
					hists[s.group] = append(hists[s.group], v)
				case hcount:
					counts[s.group] = v
				case hsum:
					if c := s.value(id, round); c < 0 {
						t.Fatal("negative sum")
					}
				}
			}
			if len(hists) == 0 {
				t.Fatal("no histograms")
			}
			for g, bs := range hists {
				if !sort.Float64sAreSorted(bs) {
					t.Fatalf("histogram %d buckets not cumulative: %v", g, bs)
				}
				if bs[len(bs)-1] != counts[g] {
					t.Fatalf("histogram %d: +Inf bucket %v, count %v", g, bs[len(bs)-1], counts[g])
				}
			}
		}
	}
}

// instancesInRound fills one whole round and returns the instance values
// in it, in slot order.
func instancesInRound(t *testing.T, g *generator, now time.Time) []string {
	t.Helper()
	st := newBuilder()
	var out []string
	for left := g.active; left > 0; {
		n := min(left, 997)
		g.fill(st, int(n), now)
		for _, ts := range st.req.Timeseries {
			inst := ts.Labels[instIndex(ts.Labels)].Value
			if len(out) == 0 || out[len(out)-1] != inst {
				out = append(out, inst)
			}
		}
		left -= n
	}
	return out
}

func instIndex(ls []prompb.Label) int {
	for i, l := range ls {
		if l.Name == instanceLabel {
			return i
		}
	}
	return -1
}

// TestChurn: 10 % of 50 targets every minute: nothing changes before the
// first minute; then exactly 5 slots get new instances each minute, in
// turn, and no instance value ever comes back.
func TestChurn(t *testing.T) {
	c := Config{URL: "http://x/", Targets: 50, SeriesPerTarget: 400, Churn: Churn{Percent: 10, Every: time.Minute}}.withDefaults()
	g := newGenerator(c)
	base := time.Unix(1_700_000_000, 0)
	prev := instancesInRound(t, g, base) // starts the churn clock
	if len(prev) != 50 {
		t.Fatalf("%d targets in a round, want 50", len(prev))
	}
	used := map[string]bool{}
	for _, s := range prev {
		used[s] = true
	}
	for i, at := range []time.Duration{30 * time.Second, 59 * time.Second} {
		if cur := instancesInRound(t, g, base.Add(at)); strings.Join(cur, ",") != strings.Join(prev, ",") {
			t.Fatalf("step %d: targets changed before churn.every", i)
		}
	}
	for minute := 1; minute <= 12; minute++ {
		cur := instancesInRound(t, g, base.Add(time.Duration(minute)*time.Minute))
		var changed []int
		for slot := range cur {
			if cur[slot] != prev[slot] {
				changed = append(changed, slot)
				if used[cur[slot]] {
					t.Fatalf("minute %d: instance %s reused", minute, cur[slot])
				}
				used[cur[slot]] = true
			}
		}
		first := (minute - 1) * 5 % 50
		want := []int{first, first + 1, first + 2, first + 3, first + 4}
		if fmt.Sprint(changed) != fmt.Sprint(want) {
			t.Fatalf("minute %d: slots %v replaced, want %v", minute, changed, want)
		}
		prev = cur
	}
}

// TestChurnFractional: 1 % of 30 targets every 10 minutes replaces one
// target every 3⅓ epochs: 3 by epoch 10, as the share says over time.
func TestChurnFractional(t *testing.T) {
	g := newGenerator(Config{Targets: 30, SeriesPerTarget: 400, Churn: Churn{Percent: 1, Every: 10 * time.Minute}}.withDefaults())
	for k, want := range map[uint64]uint64{0: 0, 3: 0, 4: 1, 9: 2, 10: 3, 100: 30, 101: 30, 104: 31} {
		if got := g.replaced(k); got != want {
			t.Errorf("replaced(%d) = %d, want %d", k, got, want)
		}
	}
}

// TestDerivedRates: samples/s = active series / scrape interval, exactly;
// requests/s = that / samples per request; churn's new series per minute.
func TestDerivedRates(t *testing.T) {
	d := newTestDriver(t, Config{URL: "http://127.0.0.1:1/", Targets: 6000, SeriesPerTarget: 900,
		ScrapeInterval: 15 * time.Second, Churn: Churn{Percent: 1, Every: 10 * time.Minute}})
	spt := int64(d.gen.spt)
	if d.ActiveSeries() != 6000*spt {
		t.Errorf("active series %d, want %d", d.ActiveSeries(), 6000*spt)
	}
	if got, want := d.SamplesPerSecond(), float64(6000*spt)/15; got != want {
		t.Errorf("samples/s %v, want %v", got, want)
	}
	if got, want := d.RequestsPerSecond(), float64(6000*spt)/15/DefaultBatch; got != want {
		t.Errorf("requests/s %v, want %v", got, want)
	}
	if got, want := d.NewSeriesPerMinute(), float64(60*spt)/10; math.Abs(got-want) > 1e-9 {
		t.Errorf("new series/min %v, want %v", got, want)
	}
	small := newTestDriver(t, Config{URL: "http://127.0.0.1:1/", Targets: 1, SeriesPerTarget: 400, Batch: 5000})
	if small.batch != int(small.gen.spt) || small.RequestsPerSecond() != 1.0/15 {
		t.Errorf("batch %d above the active series: requests/s %v, want one per scrape", small.batch, small.RequestsPerSecond())
	}
}
