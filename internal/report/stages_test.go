package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// stagesRun is a plan of two profiles. In "ramp" workload get follows
// start_rate 10/s, a ramp to 200/s over 30 s and 200/s for 60 s, but the
// target serves at most 150/s: each of its 90 one-second intervals holds
// min(150, the schedule's arrivals due in that second) operations: 11941
// in the window, which leaves out the first second (134.2/s), where the
// schedule asked for (15150 − 13.17) / 89 = 170.08/s. "steady" is 100/s.
func stagesRun() *view.Run {
	sch := &analysis.Schedule{Start: 10, Stages: []analysis.Stage{{Duration: 30 * time.Second, Target: 200}, {Duration: 60 * time.Second, Target: 200}}}
	var ivs []*stats.Interval
	for i := range 90 {
		n := int(math.Min(150, math.Round(sch.Due(sec(float64(i+1)))-sch.Due(sec(float64(i))))))
		st := stats.NewOpStats()
		for range n {
			st.Latency.Record(10 * time.Millisecond)
			st.Service.Record(9 * time.Millisecond)
		}
		st.Classes[stats.OK] = int64(n)
		ivs = append(ivs, &stats.Interval{Index: i, Start: t0.Add(sec(float64(i))), End: t0.Add(sec(float64(i + 1))),
			Ops: map[string]*stats.OpStats{"GET /": st}, Lag: stats.NewHist(), VUs: 10})
	}
	w := analysis.Workload{Name: "ramp/get", Short: "get", Profile: "ramp", Driver: "http", Model: "open",
		Target: "GET http://127.0.0.1:8080/", Schedule: sch, VUsMin: 10, VUsMax: 100, MaxVUs: 12,
		Start: t0, LoadEnd: t0.Add(90 * time.Second), End: t0.Add(90 * time.Second), Scheduled: 15150,
		Window: analysis.Window{Start: t0.Add(time.Second), End: t0.Add(90 * time.Second), Rule: "schedule after the first interval, to the end of load"}}
	ramp := analysis.Summarize(w, ivs)
	steady := workload("steady/get", "get", "steady", 0, t0.Add(2*time.Minute), 21)
	steady.Workload.Profile = "steady"
	r := &view.Run{Name: "stages", Dir: "/runs/stages", Command: "perflab run stages.yaml", Tool: "perflab 0.1.0", Host: "bench-1",
		Started: t0, Ended: t0.Add(3 * time.Minute), State: "completed", Workloads: []*analysis.Summary{ramp, steady}}
	cell := &view.Cell{Name: "default", State: "completed", Started: t0, Ended: r.Ended}
	for _, s := range r.Workloads {
		cell.Phases = append(cell.Phases, &view.Phase{Profile: s.Workload.Profile, State: "completed", Start: s.Workload.Start,
			LoadEnd: s.Workload.LoadEnd, Window: s.Window, Workloads: []*analysis.Summary{s}})
	}
	r.Cells = []*view.Cell{cell}
	return r
}

// TestStagesReported: a ramping workload's report states its schedule
// and, over its window, the rate achieved against the mean rate the
// schedule asked for there, in Markdown, HTML and summary.json; not an
// arrival rate of 0/s and no target.
func TestStagesReported(t *testing.T) {
	r := stagesRun()
	out := render(t, r)
	const sched = "ramp 10 → 200/s over 30 s, 200/s for 60 s"
	for _, want := range []string{
		"- Load model: open (arrival rate " + sched + ": 170.1/s on average over the window; VUs 10–100, peak 12 used;",
		"| GET / | 11941 | 134.2/s | 170.1/s (schedule mean) | 100 % |",
		"achieved 134.2 ops/s, below the target 170.1 ops/s",
		"| ramp | get | http | open | " + sched + " | 10/100 | 89.0 s |",
		"| ramp | get | 134.2/s | 170.1/s (schedule mean) |",
		"| steady | get | 100.0/s | 100/s |",
	} {
		if !strings.Contains(out.md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, bad := range []string{"arrival rate 0/s", "| stages |"} {
		if strings.Contains(out.md, bad) {
			t.Errorf("report.md has %q", bad)
		}
	}
	if !strings.Contains(out.html, `<td class="n">`+sched+"</td>") || !strings.Contains(out.html, `<td class="n">170.1/s (schedule mean)</td>`) {
		t.Errorf("report.html lacks the schedule or its mean")
	}
	var got struct {
		Workloads []struct {
			TargetRate float64 `json:"target_rate"`
			Schedule   *struct {
				Unit   string  `json:"unit"`
				Start  float64 `json:"start"`
				Stages []struct {
					Seconds float64 `json:"seconds"`
					Target  float64 `json:"target"`
				} `json:"stages"`
				Text string `json:"text"`
			} `json:"schedule"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(out.js), &got); err != nil {
		t.Fatal(err)
	}
	ramp := got.Workloads[0]
	if math.Abs(ramp.TargetRate-(15150-(10+10+190.0/30)/2)/89) > 1e-9 || ramp.Schedule == nil || ramp.Schedule.Unit != "ops/s" ||
		ramp.Schedule.Start != 10 || len(ramp.Schedule.Stages) != 2 || ramp.Schedule.Stages[0].Seconds != 30 || ramp.Schedule.Text != sched {
		t.Errorf("summary.json workload: %+v %+v", ramp, ramp.Schedule)
	}
	if got.Workloads[1].Schedule != nil {
		t.Errorf("a constant rate has a schedule in summary.json")
	}
}
