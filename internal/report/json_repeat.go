package report

import (
	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// The JSON of a repeated run's combinations (summary.json's repeated[],
// docs/format/summary.md).
type (
	jsonRepeated struct {
		Name        string                `json:"name"`
		Vars        []view.Var            `json:"vars"`
		Repetitions []int                 `json:"repetitions"` // cell indices, in repetition order
		Profiles    []jsonRepeatedProfile `json:"profiles"`
		Insights    *jsonInsights         `json:"insights,omitempty"`
		SideBySide  []jsonSideBySide      `json:"side_by_side,omitempty"`
	}
	jsonRepeatedProfile struct {
		Profile    string                  `json:"profile"`
		Components []jsonRepeatedComponent `json:"components"`
		Operations []jsonRepeatedOp        `json:"operations"`
	}
	jsonRepeatedComponent struct {
		Name   string     `json:"name"`
		CPU    jsonSpread `json:"cpu_p99_cores"`
		Memory jsonSpread `json:"memory_p99_bytes"`
		Heap   jsonSpread `json:"heap_avg_bytes"`
		GC     jsonSpread `json:"gc_per_min_avg"`
	}
	jsonRepeatedOp struct {
		Workload  string     `json:"workload"`
		Operation string     `json:"operation"`
		Rate      jsonSpread `json:"rate"`
		P50       jsonSpread `json:"latency_p50_ms"`
		P99       jsonSpread `json:"latency_p99_ms"`
	}
	// jsonSpread is an analysis.Spread; the figures are null without values,
	// low and high without an interval (fewer than two values).
	jsonSpread struct {
		Values []float64 `json:"values"`
		Mean   *float64  `json:"mean"`
		Min    *float64  `json:"min"`
		Max    *float64  `json:"max"`
		Low    *float64  `json:"low"`
		High   *float64  `json:"high"`
	}
)

func toJSONRepeated(gs []*view.Repeated) []jsonRepeated {
	var out []jsonRepeated
	for _, g := range gs {
		jg := jsonRepeated{Name: g.Cell.Name, Vars: append([]view.Var{}, g.Cell.Vars...), Repetitions: []int{},
			Profiles: []jsonRepeatedProfile{}, Insights: toJSONInsights(g.Cell.Insights), SideBySide: toJSONSideBySide(g.Cell.SideBySide)}
		for _, c := range g.Repetitions {
			jg.Repetitions = append(jg.Repetitions, c.Index)
		}
		for _, p := range g.Profiles {
			jp := jsonRepeatedProfile{Profile: p.Profile, Components: []jsonRepeatedComponent{}, Operations: []jsonRepeatedOp{}}
			for _, c := range p.Components {
				jp.Components = append(jp.Components, jsonRepeatedComponent{Name: c.Name, CPU: toJSONSpread(c.CPU, 1),
					Memory: toJSONSpread(c.Memory, 1), Heap: toJSONSpread(c.Heap, 1), GC: toJSONSpread(c.GC, 1)})
			}
			for _, op := range p.Workloads {
				jp.Operations = append(jp.Operations, jsonRepeatedOp{Workload: op.Workload, Operation: op.Operation,
					Rate: toJSONSpread(op.Rate, 1), P50: toJSONSpread(op.P50, 1000), P99: toJSONSpread(op.P99, 1000)})
			}
			jg.Profiles = append(jg.Profiles, jp)
		}
		out = append(out, jg)
	}
	return out
}

// toJSONSpread writes s with every figure multiplied by k (1000: seconds to
// milliseconds).
func toJSONSpread(s analysis.Spread, k float64) jsonSpread {
	j := jsonSpread{Values: []float64{}, Mean: optFloat(k * s.Mean), Min: optFloat(k * s.Min), Max: optFloat(k * s.Max),
		Low: optFloat(k * s.Low), High: optFloat(k * s.High)}
	for _, v := range s.Values {
		j.Values = append(j.Values, round6(k*v))
	}
	return j
}
