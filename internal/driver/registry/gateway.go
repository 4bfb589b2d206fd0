package registry

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/interleave"
	"github.com/perflab/perflab/internal/plan"
)

// gatewayParams is the `gateway` block a workload's params may hold when
// its driver is wrapped by withGateway: the workload then runs straight to
// params.url and through the gateway at gateway.url, interleaved.
type gatewayParams struct {
	URL       located[string] `yaml:"url"`       // takes the place of params.url on the gateway side
	Component located[string] `yaml:"component"` // the plan component that is the gateway
}

// componentName is what the plan format allows as a component name.
var componentName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// withGateway lets the workloads of a driver whose params have a url
// measure a gateway's overhead. Without a gateway block in the params, f
// decodes them as they are. With one, f decodes them twice: as written
// without the block (straight to the upstream), and with url replaced by
// gateway.url (through the gateway); the workload's driver alternates
// between the two (package interleave), so each side gets every other
// arrival of the workload's schedule.
func withGateway(f factory) factory {
	return func(in Input) (Spec, []error) {
		rest, block, found := in.Params.Cut("gateway")
		if !found {
			return f(in)
		}
		in.Params = rest
		direct, errs := f(in)
		errs = append(errs, checkGateway(in, block)...)
		via := in
		var ok bool
		if via.Params, ok = rest.Replace("url", block, "url"); !ok {
			return Spec{}, errs // checkGateway said why
		}
		through, verrs := f(via)
		errs = append(errs, newProblems(errs, verrs)...)
		if len(errs) > 0 {
			return Spec{}, errs
		}
		spec := direct
		spec.Target = direct.Target + " direct; " + through.Target + " through the gateway"
		spec.New = func() (driver.Driver, error) {
			d, err := direct.New()
			if err != nil {
				return nil, err
			}
			g, err := through.New()
			if err != nil {
				if c, ok := d.(driver.Closer); ok {
					c.Close()
				}
				return nil, fmt.Errorf("through the gateway: %w", err)
			}
			return interleave.New(d, g), nil
		}
		return spec, nil
	}
}

// checkGateway decodes a gateway block strictly and checks that it and
// the rest of the params have a url.
func checkGateway(in Input, block plan.Params) []error {
	var g gatewayParams
	var errs []error
	if err := block.Decode(&g); err != nil {
		for _, e := range plan.Problems(err) {
			var pe plan.Error
			if errors.As(e, &pe) && strings.HasPrefix(pe.Msg, "params") {
				pe.Msg = "params.gateway" + strings.TrimPrefix(pe.Msg, "params")
				e = pe
			}
			errs = append(errs, e)
		}
		return errs
	}
	at := locator{line: block.Pos().Line, col: block.Pos().Col}
	if !g.URL.set || g.URL.V == "" {
		errs = append(errs, at.errorf(in.File, "params.gateway: url is required: the gateway's URL, which takes the place of params.url"))
	}
	if !in.Params.Has("url") {
		errs = append(errs, at.errorf(in.File, "params.gateway: the workload needs params.url, the upstream the gateway stands in front of"))
	}
	if g.Component.set && !componentName.MatchString(g.Component.V) {
		errs = append(errs, g.Component.errorf(in.File, "params.gateway.component: %q is not a component name ([a-z0-9_-]+)", g.Component.V))
	}
	return errs
}

// newProblems is the problems of more that are not already in errs: the
// gateway side's params repeat the direct side's, and so their problems.
func newProblems(errs, more []error) []error {
	seen := map[string]bool{}
	for _, e := range errs {
		seen[e.Error()] = true
	}
	var out []error
	for _, e := range more {
		if !seen[e.Error()] {
			out = append(out, e)
		}
	}
	return out
}

// GatewayProblems checks that every gateway block's component is a
// component of the plan.
func GatewayProblems(p *plan.Plan) []error {
	names := make([]string, 0, len(p.Components))
	for _, c := range p.Components {
		names = append(names, c.Name)
	}
	var out []error
	for _, pr := range p.Profiles {
		for _, w := range pr.Workloads {
			_, block, found := w.Params.Cut("gateway")
			var g gatewayParams
			if !found || block.Decode(&g) != nil || !g.Component.set || !componentName.MatchString(g.Component.V) {
				continue
			}
			if !slices.Contains(names, g.Component.V) {
				have := "no components"
				if len(names) > 0 {
					have = "components " + strings.Join(names, ", ")
				}
				out = append(out, g.Component.errorf(p.File, "params.gateway.component: no component %q in the plan; it has %s", g.Component.V, have))
			}
		}
	}
	return out
}
