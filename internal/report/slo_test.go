package report

import (
	"encoding/json"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/slo"
	"github.com/perflab/perflab/internal/view"
)

// sloRun is singleRun with gates: on both workloads (100 requests a second
// at 10 ms each; 15 intervals of "low" and 5 of "high" in their windows)
//
//	p99 < 20ms         passes on both
//	p50 < 5ms          fails on both (10 ms)
//	error_rate < 0.01% insufficient on both: 1,500 and 500 requests can't show a rate under 1 in 10,000
//	lost_samples == 0  a figure the run supplies: 3 samples lost on "low"
func sloRun(t *testing.T) *view.Run {
	t.Helper()
	r := singleRun()
	gates, errs := slo.ParseGates([]string{"p99 < 20ms", "p50 < 5ms", "error_rate < 0.01%", "lost_samples == 0"})
	if errs != nil {
		t.Fatal(errs)
	}
	vs, err := analysis.EvaluateGates(gates[:3], r.Workloads, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		r.SLO = append(r.SLO, view.Gate{Verdict: v, Source: "command line"})
	}
	lost, err := analysis.EvaluateGates(gates[3:], nil, map[string]analysis.Supplied{"lost_samples": {Value: 3}})
	if err != nil {
		t.Fatal(err)
	}
	lost[0].Workload = "low"
	r.SLO = append(r.SLO, view.Gate{Verdict: lost[0], Source: "plan: workload low"})
	r.State, r.Message = "completed", "SLO not met: "+sloHeadline(r.SLO)
	return r
}

func TestGoldenSLO(t *testing.T) {
	r := sloRun(t)
	_, js, _ := goldenRun(t, "slo", r)
	var out struct {
		SLO struct {
			Met   bool `json:"met"`
			Gates []struct {
				State string `json:"state"`
			} `json:"gates"`
		} `json:"slo"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.SLO.Met || len(out.SLO.Gates) != 7 || out.SLO.Gates[0].State != "pass" || out.SLO.Gates[4].State != "insufficient" || out.SLO.Gates[6].State != "fail" {
		t.Errorf("slo = %+v", out.SLO)
	}
}
