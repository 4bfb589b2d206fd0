package remotewrite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

var (
	_ driver.Sharder       = (*Driver)(nil)
	_ driver.ShardVerifier = (*Driver)(nil)
)

// Shard makes the driver worker index's part of of in a distributed run:
// it writes the targets t with t mod of == index, under the instance
// labels they have in the whole load, so the workers' series are disjoint
// and together the plan's active series. Each request keeps the whole
// load's batch: the coordinator's rate (the whole load's) split among the
// workers then passes each worker's series once per scrape interval. A
// worker whose share of the series is smaller than a batch, or who has no
// target at all, is refused. Call Shard before the first Do.
func (d *Driver) Shard(index, of int) error {
	if of < 1 || index < 0 || index >= of {
		return fmt.Errorf("cannot make remote write worker %d of %d", index, of)
	}
	if of == 1 {
		return nil
	}
	whole := d.gen.active
	d.gen.shard(index, of)
	switch {
	case d.gen.local == 0:
		return fmt.Errorf("remote write worker %d of %d has none of the %d targets: run at most %d workers", index, of, d.gen.targets, d.gen.targets)
	case d.gen.active < uint64(d.batch):
		return fmt.Errorf("remote write worker %d of %d writes %d of the %d series, fewer than a batch of %d: lower batch or the number of workers",
			index, of, d.gen.active, whole, d.batch)
	}
	return nil
}

// readBack is what a driver (a worker, for VerifyShards) acknowledged:
// series, samples, the first and last sample time, and when it had the
// last acknowledgement, from which late data is timed.
type readBack struct {
	Series  int64     `json:"series"`
	Samples int64     `json:"samples"`
	First   int64     `json:"first_ms"`
	Last    int64     `json:"last_ms"`
	AckedAt time.Time `json:"last_acked_at"`
	// Native histograms: how many were acknowledged, and the sum of the
	// count and of the sum of each series' last one.
	Histograms int64   `json:"histograms,omitempty"`
	HistCount  float64 `json:"histogram_count,omitempty"`
	HistSum    float64 `json:"histogram_sum,omitempty"`
	Exemplars  int64   `json:"exemplars,omitempty"`
	// What the worker sent and what the receiver said it wrote of it.
	Acks ackState `json:"acks"`
}

// ackState is ackFigures as a worker hands them to the coordinator.
type ackState struct {
	Sent      [3]int64 `json:"sent"` // samples, histograms, exemplars
	OKSent    [3]int64 `json:"ok_sent"`
	Acked     [3]int64 `json:"acked"`
	Bare      int64    `json:"ok_without_counts,omitempty"`
	Short     int64    `json:"short,omitempty"`
	ShortNote string   `json:"short_note,omitempty"`
}

func toArray(c counts) [3]int64   { return [3]int64{c.samples, c.histograms, c.exemplars} }
func fromArray(a [3]int64) counts { return counts{a[0], a[1], a[2]} }

func ackStateOf(f ackFigures) ackState {
	return ackState{Sent: toArray(f.sent), OKSent: toArray(f.okSent), Acked: toArray(f.acked),
		Bare: f.okBare, Short: f.short, ShortNote: f.shortNote}
}

// add sums a worker's acknowledgements into f.
func (f *ackFigures) addState(a ackState) {
	f.sent.add(fromArray(a.Sent))
	f.okSent.add(fromArray(a.OKSent))
	f.acked.add(fromArray(a.Acked))
	f.okBare += a.Bare
	f.short += a.Short
	if f.shortNote == "" {
		f.shortNote = a.ShortNote
	}
}

// ReadBackState is what the driver had acknowledged: series (each once),
// samples, the first and last sample time and when the last
// acknowledgement came.
func (d *Driver) ReadBackState() ([]byte, error) {
	rb := d.acks.readBack(d.gen.tmpl)
	rb.Acks = ackStateOf(d.proto.snapshot())
	return json.Marshal(rb)
}

// VerifyShards reads back what every worker acknowledged, as Verify does
// for one driver: the workers' series are disjoint (Shard), so the
// series and samples each acknowledged add up, over the span from the
// first worker's first sample to the last one's last; late data is timed
// from the last acknowledgement any worker had.
func (d *Driver) VerifyShards(ctx context.Context, states [][]byte) ([]driver.Check, error) {
	var sum readBack
	var figs ackFigures
	for i, s := range states {
		var rb readBack
		if err := json.Unmarshal(s, &rb); err != nil {
			return nil, fmt.Errorf("cannot read worker %d's acknowledgements: %w", i, err)
		}
		figs.addState(rb.Acks)
		if rb.Samples+rb.Histograms == 0 {
			continue
		}
		if sum.First == 0 || rb.First < sum.First {
			sum.First = rb.First
		}
		sum.Last = max(sum.Last, rb.Last)
		if rb.AckedAt.After(sum.AckedAt) {
			sum.AckedAt = rb.AckedAt
		}
		sum.Series += rb.Series
		sum.Samples += rb.Samples
		sum.Histograms += rb.Histograms
		sum.HistCount += rb.HistCount
		sum.HistSum += rb.HistSum
		sum.Exemplars += rb.Exemplars
	}
	checks, err := d.verify(ctx, sum)
	return withAcks(checks, figs), err
}
