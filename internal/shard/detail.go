package shard

import (
	"encoding/json"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/secret"
)

// StoreTimeout bounds a store's last writes (a worker's remaining
// intervals and its end) and the coordinator's words to the workers.
const StoreTimeout = 30 * time.Second

// Detail is the Detail of a worker's End: what it reports of
// its part of a phase besides its intervals (docs/format/shards.md).
type Detail struct {
	Host      string        `json:"host"`
	Workloads []WorkloadEnd `json:"workloads"`
	Self      Self          `json:"self"`
}

// WorkloadEnd is how one workload of a worker's part of a phase ended.
type WorkloadEnd struct {
	Name        string          `json:"name"`
	Start       time.Time       `json:"start"`
	LoadEnd     time.Time       `json:"load_end"`
	End         time.Time       `json:"end"`
	Scheduled   uint64          `json:"scheduled"`
	Dropped     uint64          `json:"dropped"`
	Unissued    uint64          `json:"unissued,omitempty"` // of Dropped, those its dispatcher did not issue
	MaxVUs      int             `json:"max_vus"`
	Interrupted bool            `json:"interrupted,omitempty"`
	WindowStart time.Time       `json:"window_start"`
	WindowEnd   time.Time       `json:"window_end"`
	WindowRule  string          `json:"window_rule"`
	Facts       []driver.Fact   `json:"facts,omitempty"`
	Checks      []driver.Check  `json:"checks,omitempty"`
	CheckNote   string          `json:"check_note,omitempty"` // why there are no checks: skipped
	ReadBack    json.RawMessage `json:"read_back,omitempty"`  // what a driver.ShardVerifier acknowledged
	Cleanup     string          `json:"cleanup_error,omitempty"`
}

// Self is what the worker saw of itself over its load, and its
// verdict: whether it, not the system under test, was the limit.
type Self struct {
	Samples        int     `json:"samples"`
	CPUP99         float64 `json:"cpu_p99_cores"` // nearest rank; the maximum with fewer than 10 samples
	CPUMax         float64 `json:"cpu_max_cores"`
	CoresAvailable float64 `json:"cores_available"`
	SchedLatP99    float64 `json:"sched_latency_p99_s"` // the largest of the Go scheduler's per-second p99
	LagP99         float64 `json:"lag_p99_s"`           // the open-model workloads' dispatch lag
	ClientBound    bool    `json:"client_bound"`
	ClientWhy      string  `json:"client_why,omitempty"`
}

// Scrub takes the plan's credentials out of every text of d, before it
// leaves the worker for the shared store: what drivers say (facts, checks,
// errors) may hold one, as an interval's error samples may
// (scrubInterval).
func (d *Detail) Scrub(s *secret.Scrubber) {
	for i := range d.Workloads {
		sw := &d.Workloads[i]
		for j := range sw.Facts {
			sw.Facts[j].Name, sw.Facts[j].Value = s.String(sw.Facts[j].Name), s.String(sw.Facts[j].Value)
		}
		for j := range sw.Checks {
			c := &sw.Checks[j]
			c.Name, c.Note, c.Reason = s.String(c.Name), s.String(c.Note), s.String(c.Reason)
		}
		sw.CheckNote, sw.Cleanup, sw.WindowRule = s.String(sw.CheckNote), s.String(sw.Cleanup), s.String(sw.WindowRule)
	}
	d.Self.ClientWhy = s.String(d.Self.ClientWhy)
}
