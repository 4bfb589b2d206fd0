package registry

import (
	"encoding/json"
	"os"

	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/secret"
)

// Scrubber is the scrubber of a run of p: the value of every ${VAR}
// the plan reads; the credentials its workloads' params hold literally
// (each driver's secret keys, credential-named headers, URL credentials)
// and those their drivers read from the environment; and those its
// components are given literally.
func Scrubber(p *plan.Plan) *secret.Scrubber {
	set := secret.Set{}
	for _, r := range p.SecretRefs() {
		set.Env(r.Value, r.Ref)
	}
	for _, pr := range p.Profiles {
		for _, w := range pr.Workloads {
			keys := Keys(w.Driver)
			var params map[string]any
			if raw, err := w.Params.JSON(); err == nil && json.Unmarshal(raw, &params) == nil {
				set.Params(params, secretKeys(keys))
			}
			for _, name := range keys.SecretEnv {
				set.Env(os.Getenv(name), "${"+name+"}")
			}
		}
	}
	for _, c := range p.Components {
		addComponent(set, c)
	}
	return set.Scrubber()
}

// addComponent adds the credentials a component is given literally: its
// credential-named environment variables and those in the URL of the
// Prometheus it is read from (a plan gives that Prometheus' token and
// password as ${VAR} only).
func addComponent(set secret.Set, c plan.Component) {
	if c.Run != nil {
		for _, e := range c.Run.Env {
			if secret.SensitiveName(e.Name) {
				set.Literal(e.Value)
			}
		}
	}
	if pr := c.Prometheus; pr != nil {
		set.URL(pr.URL)
	}
}
