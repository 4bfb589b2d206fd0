package readback

import (
	"encoding/json"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver/interleave"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// gatewayOverheads measures the overhead of the gateway of every workload
// whose stored params have a gateway block (see withGateway): one figure
// per operation that ran both ways. sums are the workloads' summaries in
// the order of ws; cells hold the phases' resources. A gateway component
// that carried several of them in one phase has its CPU per request
// shared among all their requests (analysis.ShareGatewayCPU).
func gatewayOverheads(wd workloadData, ws []results.Workload, sums []*analysis.Summary, cells []*view.Cell) []*analysis.Overhead {
	var out []*analysis.Overhead
	type through struct {
		phase     *view.Phase
		component string
	}
	shared := map[through][]*analysis.Overhead{}
	var order []through
	for i, w := range ws {
		component, ok := storedGateway(w.Params)
		if !ok || i >= len(sums) {
			continue
		}
		s := sums[i]
		cell, phase := phaseOf(cells, s)
		if component == "" && cell != nil {
			component = groupComponent(cell.Components, "gateway")
		}
		var res *analysis.Resources
		if phase != nil {
			res = phase.Resources
		}
		for _, pair := range overheadPairs(s.Ops) {
			ov := analysis.GatewayOverhead(analysis.OverheadInput{Summary: s, Intervals: wd.ivs[w.Name],
				Direct: pair[0], Gateway: pair[1], Component: component, Resources: res}, analysis.DefaultBootstrap())
			out = append(out, ov)
			if k := (through{phase, component}); phase != nil && component != "" {
				if shared[k] == nil {
					order = append(order, k)
				}
				shared[k] = append(shared[k], ov)
			}
		}
	}
	for _, k := range order {
		analysis.ShareGatewayCPU(shared[k])
	}
	return out
}

// storedGateway reads the gateway block of a workload's stored params: ok
// when there is one, with the component it names ("" when none).
func storedGateway(params json.RawMessage) (component string, ok bool) {
	var p struct {
		Gateway *struct {
			Component string `json:"component"`
		} `json:"gateway"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p.Gateway == nil {
		return "", false
	}
	return p.Gateway.Component, true
}

// phaseOf finds the cell and phase a workload summary is in.
func phaseOf(cells []*view.Cell, s *analysis.Summary) (*view.Cell, *view.Phase) {
	for _, c := range cells {
		for _, p := range c.Phases {
			for _, ps := range p.Workloads {
				if ps == s {
					return c, p
				}
			}
		}
	}
	return nil, nil
}

// groupComponent is the one component of group, or "" when there is not
// exactly one.
func groupComponent(comps []analysis.Component, group string) string {
	name := ""
	for _, c := range comps {
		if c.Group == group {
			if name != "" {
				return ""
			}
			name = c.Name
		}
	}
	return name
}

// overheadPairs pairs each direct operation with the gateway operation of
// the same inner name, in the order of ops. When none pair by name (the
// inner driver names its operation after the URL's path, and the gateway's
// path differs) and there is one operation each way, those two pair.
func overheadPairs(ops []analysis.Op) [][2]string {
	direct, gateway := map[string]string{}, map[string]string{}
	var order, directs, gateways []string
	for _, op := range ops {
		side, inner, ok := interleave.Split(op.Name)
		switch {
		case !ok:
		case side == interleave.Direct:
			direct[inner] = op.Name
			order = append(order, inner)
			directs = append(directs, op.Name)
		default:
			gateway[inner] = op.Name
			gateways = append(gateways, op.Name)
		}
	}
	var out [][2]string
	for _, inner := range order {
		if g, ok := gateway[inner]; ok {
			out = append(out, [2]string{direct[inner], g})
		}
	}
	if len(out) == 0 && len(directs) == 1 && len(gateways) == 1 {
		out = append(out, [2]string{directs[0], gateways[0]})
	}
	return out
}
