package cli

import (
	"cmp"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"

	httpdriver "github.com/perflab/perflab/internal/driver/http"
	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/plan"
)

// minSecret is the length of the shortest value scrubbed from text: a
// shorter one cannot be told from the rest of the text (and is no
// credential worth the name). Params stored with a run mask credentials
// of any length (maskSecrets).
const minSecret = 4

// scrubber replaces, in any text, every credential a run was configured
// with: the value of a ${VAR} by its reference, a credential written
// literally by [redacted]. One is built per run, from the plan or the
// command line, and applied where text leaves perflab: the run store
// (results.CreateScrubbed), the terminal (useScrubber) and the component
// logs in the run directory (target.Spec.Scrub). A nil scrubber leaves text as it
// is.
type scrubber struct {
	r *strings.Replacer
}

// String is s scrubbed.
func (s *scrubber) String(text string) string {
	if s == nil || s.r == nil {
		return text
	}
	return s.r.Replace(text)
}

// secretSet collects the values a scrubber replaces and what with.
type secretSet map[string]string

// env adds the value of an environment variable and its reference,
// ${NAME}.
func (set secretSet) env(value, ref string) {
	if len(value) >= minSecret {
		if _, ok := set[value]; !ok {
			set[value] = ref
		}
	}
}

// literal adds a credential written literally: after an authorization
// scheme ("Bearer xyz"), what follows it. A value with a reference in it
// (${VAR}, {{name}}) is not literal: the references' values are added as
// such.
func (set secretSet) literal(value string) {
	value = strings.TrimSpace(value)
	if strings.Contains(value, "${") || strings.Contains(value, "{{") {
		return
	}
	if scheme, rest, ok := strings.Cut(value, " "); ok && authSchemes[strings.ToLower(scheme)] {
		value = strings.TrimSpace(rest)
	}
	if _, ok := set[value]; !ok && len(value) >= minSecret {
		set[value] = "[redacted]"
	}
}

// authSchemes are the schemes an Authorization value may start with.
var authSchemes = map[string]bool{"bearer": true, "basic": true, "token": true, "digest": true, "apikey": true, "negotiate": true}

// scrubber builds the scrubber: longest values first, so that a secret
// containing another is replaced whole.
func (set secretSet) scrubber() *scrubber {
	if len(set) == 0 {
		return nil
	}
	values := make([]string, 0, len(set))
	for v := range set {
		values = append(values, v)
	}
	slices.SortFunc(values, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	pairs := make([]string, 0, 2*len(values))
	for _, v := range values {
		pairs = append(pairs, v, set[v])
	}
	return &scrubber{r: strings.NewReplacer(pairs...)}
}

// planScrubber is the scrubber of a run of p: the value of every ${VAR}
// the plan reads; the credentials its workloads' params hold literally
// (each driver's secret keys, credential-named headers, URL passwords)
// and those their drivers read from the environment; and those its
// components are given literally.
func planScrubber(p *plan.Plan) *scrubber {
	set := secretSet{}
	for _, r := range p.SecretRefs() {
		set.env(r.Value, r.Ref)
	}
	for _, pr := range p.Profiles {
		for _, w := range pr.Workloads {
			keys := registry.Keys(w.Driver)
			var params map[string]any
			if raw, err := w.Params.JSON(); err == nil && json.Unmarshal(raw, &params) == nil {
				for _, k := range keys.Secret {
					if v, ok := params[k].(string); ok {
						set.literal(v)
					}
				}
				for _, k := range keys.Headers {
					hs, _ := params[k].(map[string]any)
					for name, v := range hs {
						if s, ok := v.(string); ok && httpdriver.SensitiveHeader(name) {
							set.literal(s)
						}
					}
				}
				registry.EachString(params, func(s string) string { set.literal(registry.URLPassword(s)); return s })
			}
			for _, name := range keys.SecretEnv {
				set.env(os.Getenv(name), "${"+name+"}")
			}
		}
	}
	for _, c := range p.Components {
		set.component(c)
	}
	return set.scrubber()
}

// component adds the credentials a component is given literally: its
// credential-named environment variables and the password in the URL of
// the Prometheus it is read from (a plan gives that Prometheus' token and
// password as ${VAR} only).
func (set secretSet) component(c plan.Component) {
	if c.Run != nil {
		for _, e := range c.Run.Env {
			if httpdriver.SensitiveHeader(e.Name) {
				set.literal(e.Value)
			}
		}
	}
	if pr := c.Prometheus; pr != nil {
		set.literal(registry.URLPassword(pr.URL))
	}
}

// useScrubber makes s the scrubber of e's run: of the store it creates
// and of everything it prints from now on, errors included.
func (e *env) useScrubber(s *scrubber) {
	if s == nil {
		return
	}
	e.scrub = s
	e.stdout, e.stderr = &scrubWriter{w: e.stdout, s: s}, &scrubWriter{w: e.stderr, s: s}
}

// scrubWriter scrubs what is written to w. Each Write is scrubbed on its
// own: perflab prints a line (or a progress update) in one Write.
type scrubWriter struct {
	w io.Writer
	s *scrubber
}

func (sw *scrubWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(sw.w, sw.s.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
