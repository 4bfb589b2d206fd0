package run

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
)

// TestStagesKeepTheirStart: a plan workload's stages are stored with the
// rate before the first stage (byte rates divided into operations), and
// read back as the schedule reports show; so are the closed model's.
func TestStagesKeepTheirStart(t *testing.T) {
	open := plan.Workload{Name: "get", Model: plan.Open, StartRate: plan.Rate{BytesPerSecond: 10_000},
		Stages: []plan.Stage{{Duration: 30 * time.Second, Rate: plan.Rate{BytesPerSecond: 200_000}}, {Duration: time.Minute, Rate: plan.Rate{BytesPerSecond: 200_000}}}}
	closed := plan.Workload{Name: "c", Model: plan.Closed, StartConcurrency: 2, Stages: []plan.Stage{{Duration: 10 * time.Second, Concurrency: 50}}}
	for _, tt := range []struct {
		w     plan.Workload
		start float64
		text  string
	}{
		{open, 10, "ramp 10 → 200/s over 30 s, 200/s for 60 s"}, // 1000 bytes per operation
		{closed, 2, "ramp 2 → 50 VUs over 10 s"},
	} {
		var eng engine.Workload
		var desc results.Workload
		if err := Schedule(tt.w, 2*time.Minute, 1000, &eng, &desc); err != nil {
			t.Fatal(err)
		}
		s, err := analysis.ParseSchedule(desc.Stages)
		unit := "/s"
		if tt.w.Model == plan.Closed {
			unit = " VUs"
		}
		if err != nil || s == nil || s.Start != tt.start || s.Text(unit) != tt.text {
			t.Errorf("%s: stored %s, read %+v, %v", tt.w.Name, desc.Stages, s, err)
		}
	}
}

// TestScheduleCarriesTheOpenModelsSettings: a plan workload's VUs,
// backlog and dispatch quantum reach the engine.
func TestScheduleCarriesTheOpenModelsSettings(t *testing.T) {
	w := plan.Workload{Name: "w", Model: plan.Open, Rate: plan.Rate{PerSecond: 100},
		VUs: plan.VUs{Min: 2, Max: 50}, Backlog: 3, DispatchQuantum: 250 * time.Microsecond}
	var eng engine.Workload
	var desc results.Workload
	if err := Schedule(w, 10*time.Second, 0, &eng, &desc); err != nil {
		t.Fatal(err)
	}
	if eng.Model != engine.Open || eng.VUsMin != 2 || eng.VUsMax != 50 || eng.Backlog != 3 || eng.Quantum != 250*time.Microsecond {
		t.Errorf("engine workload %+v", eng)
	}
}
