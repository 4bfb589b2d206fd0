package shard

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// shardedAndWhole records the same operations twice: each into the
// recorder of the shard that issued it (arrival n goes to shard n mod N, as
// the open model splits a schedule), and all into one recorder; both flush
// at the same instants. It returns the shards' intervals after a trip
// through the wire form, and the whole run's.
func shardedAndWhole(t *testing.T, n, seconds, perSecond int) (shards [][]WorkloadInterval, whole []*stats.Interval) {
	t.Helper()
	t0 := time.Unix(1_800_000_000, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	one := stats.NewRecorder(1, t0)
	recs := make([]*stats.Recorder, n)
	for i := range recs {
		recs[i] = stats.NewRecorder(2, t0)
	}
	shards = make([][]WorkloadInterval, n)
	arrival := 0
	for s := range seconds {
		for range perSecond {
			intended := t0.Add(time.Duration(s)*time.Second + time.Duration(rng.IntN(int(time.Second))))
			x := &stats.Sample{Op: "GET /", Intended: intended, Start: intended.Add(time.Duration(rng.IntN(3000)) * time.Microsecond),
				TTFB: time.Duration(1+rng.IntN(50)) * time.Millisecond, BytesSent: 100, BytesRecv: int64(rng.IntN(5000))}
			x.End = x.Start.Add(time.Duration(rng.ExpFloat64()*20e6) + time.Millisecond)
			if rng.IntN(10) == 0 {
				x.Class, x.Message, x.Op = stats.Status5xx, "503 Service Unavailable", "POST /write"
			}
			if rng.IntN(4) == 0 {
				x.Measures = []stats.Timing{{Measure: stats.TTFT, D: time.Duration(rng.IntN(90)+10) * time.Millisecond}}
				x.Counters[stats.OutputTokens] = int64(rng.IntN(100))
			}
			one.Record(0, x)
			recs[arrival%n].Record(arrival, x)
			one.RecordLag(time.Duration(rng.IntN(500)) * time.Microsecond)
			arrival++
		}
		end := t0.Add(time.Duration(s+1) * time.Second)
		whole = append(whole, one.Flush(end))
		for i, r := range recs {
			wire, err := EncodeIntervals([]WorkloadInterval{{Workload: "ingest", Interval: r.Flush(end)}})
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeIntervals(wire)
			if err != nil {
				t.Fatal(err)
			}
			shards[i] = append(shards[i], back...)
		}
	}
	return shards, whole
}

func TestMergedShardsEqualOneRecorderBucketForBucket(t *testing.T) {
	const n = 3
	shards, whole := shardedAndWhole(t, n, 4, 900)
	m := NewMerger(n)
	// Deliveries arrive out of step: shard 2 lags behind, then catches up.
	m.Add(0, shards[0])
	m.Add(1, shards[1][:3])
	m.Add(2, shards[2][:1])
	if got := m.Ready(); len(got) != 1 || got[0].Index != 0 {
		t.Fatalf("with shard 2 at interval 0, Ready gave %d intervals", len(got))
	}
	m.Add(1, shards[1][3:])
	m.Add(2, shards[2][1:])
	merged := m.Ready()
	if len(merged) != 3 {
		t.Fatalf("Ready gave %d more intervals, want 3", len(merged))
	}
	for i, got := range merged {
		want := whole[i+1]
		if got.Index != want.Index || !got.End.Equal(want.End) {
			t.Errorf("interval %d: index %d end %v, want %d %v", i+1, got.Index, got.End, want.Index, want.End)
		}
		for name, w := range want.Ops {
			g := got.Ops[name]
			if g == nil {
				t.Fatalf("interval %d: no op %q after the merge", want.Index, name)
			}
			same(t, name+" latency", g.Latency, w.Latency)
			same(t, name+" service", g.Service, w.Service)
			same(t, name+" ttfb", g.TTFB, w.TTFB)
			if w.HasFailed() {
				same(t, name+" failed", g.Failed, w.Failed)
			}
			if w.Measures[stats.TTFT] != nil {
				same(t, name+" ttft", g.Measures[stats.TTFT], w.Measures[stats.TTFT])
			}
			if g.Classes != w.Classes || g.BytesRecv != w.BytesRecv || g.BytesSent != w.BytesSent || g.Counters != w.Counters {
				t.Errorf("interval %d %s: classes %v bytes %d/%d counters %v; want %v %d/%d %v", want.Index, name,
					g.Classes, g.BytesSent, g.BytesRecv, g.Counters, w.Classes, w.BytesSent, w.BytesRecv, w.Counters)
			}
		}
		if len(got.Ops) != len(want.Ops) {
			t.Errorf("interval %d: %d ops, want %d", want.Index, len(got.Ops), len(want.Ops))
		}
	}
}

func same(t *testing.T, what string, got, want *stats.Hist) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s: merged histogram (n=%d, p99 %v) differs from the one recorder's (n=%d, p99 %v)",
			what, got.Count(), got.Quantile(0.99), want.Count(), want.Quantile(0.99))
	}
}

func TestAnEndedShardDoesNotHoldTheOthersBack(t *testing.T) {
	shards, _ := shardedAndWhole(t, 2, 3, 50)
	m := NewMerger(2)
	m.Add(0, shards[0])
	m.Add(1, shards[1][:1]) // shard 1 failed after its first interval
	if got := m.Ready(); len(got) != 1 {
		t.Fatalf("before shard 1 ended: %d intervals ready, want 1", len(got))
	}
	m.End(1)
	got := m.Ready()
	if len(got) != 2 || got[0].Index != 1 || got[1].Index != 2 {
		t.Fatalf("after shard 1 ended: %d intervals ready", len(got))
	}
	if n := got[0].Ops["GET /"].Classes.Total() + got[0].Ops["POST /write"].Classes.Total(); n != shards[0][1].Ops["GET /"].Classes.Total()+shards[0][1].Ops["POST /write"].Classes.Total() {
		t.Errorf("interval 1 holds %d operations, want shard 0's alone", n)
	}
}

func TestRestHandsOutWhatAShardNeverFinished(t *testing.T) {
	shards, _ := shardedAndWhole(t, 2, 2, 10)
	m := NewMerger(2)
	m.Add(0, shards[0])
	if got := m.Ready(); len(got) != 0 {
		t.Fatalf("%d intervals ready while shard 1 delivered nothing", len(got))
	}
	if got := m.Rest(); len(got) != 2 {
		t.Errorf("Rest gave %d intervals, want shard 0's 2", len(got))
	}
}
