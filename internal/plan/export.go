package plan

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	redact "github.com/perflab/perflab/internal/secret"
)

// The kinds of export target (internal/export).
const (
	ExportRemoteWrite = "remote-write" // Prometheus remote write 1.0
	ExportOTLP        = "otlp"         // OTLP metrics over HTTP (http, https) or gRPC (grpc, grpcs)
)

// Export is a target the run's measurements are sent to as it makes
// them. URL and header values may read the environment (${VAR}), which
// credentials must; {{name}} has no value here: an export is the same for
// every cell.
type Export struct {
	Kind     string
	URL      string
	Headers  []Header      // in file order
	Interval time.Duration // how often it is sent what is queued; 0: the export's default
	// NativeHistograms sends the latency as a Prometheus native
	// histogram too (remote-write only).
	NativeHistograms bool
	at               where
}

// Header is one HTTP header (gRPC metadata) sent with every push.
type Header struct {
	Name, Value string
}

const exportKeys = "kind, url, headers, interval, native_histograms"

// exports decodes the export list.
func (d *decoder) exports(n *yaml.Node) ([]Export, error) {
	var out []Export
	err := d.list("export", n, func(item *yaml.Node) {
		e := Export{at: where{}}
		m := d.fields(item, "export", e.at, exportKeys)
		d.field(m, e.at, "kind", func(n *yaml.Node) (err error) { e.Kind, err = scalar("kind", n); return })
		d.field(m, e.at, "url", func(n *yaml.Node) (err error) { e.URL, err = d.text("url", n); return })
		d.field(m, e.at, "interval", func(n *yaml.Node) (err error) { e.Interval, err = durationOf("interval", n); return })
		d.field(m, e.at, "headers", func(n *yaml.Node) (err error) { e.Headers, err = d.headers(n, e.at); return })
		d.field(m, e.at, "native_histograms", func(n *yaml.Node) (err error) {
			e.NativeHistograms, err = boolOf("native_histograms", n)
			return
		})
		out = append(out, e)
	})
	return out, err
}

// headers decodes a mapping of header names to values, keeping its order.
func (d *decoder) headers(n *yaml.Node, at where) ([]Header, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("headers: want a mapping of header names to values, got %s", kindName(n))
	}
	var hs []Header
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		k, v := d.node(n.Content[i]), d.node(n.Content[i+1])
		if k == nil || v == nil {
			break
		}
		name, ok := d.key(k, "headers", seen, "")
		if !ok {
			continue
		}
		key := "headers." + name
		at[key] = posOf(v)
		value, err := d.text(key, v)
		if err != nil {
			d.errorf(v, "%v", err)
			at[key+"!"] = posOf(v)
		}
		hs = append(hs, Header{Name: name, Value: value})
	}
	return hs, nil
}

// export checks one export target.
func (v *validator) export(e *Export) {
	switch e.Kind {
	case ExportRemoteWrite, ExportOTLP:
	case "":
		v.at(e.at, "kind", "export needs a kind: %s or %s", ExportRemoteWrite, ExportOTLP)
	default:
		v.at(e.at, "kind", "export kind %q: want %s or %s", e.Kind, ExportRemoteWrite, ExportOTLP)
	}
	if e.URL == "" {
		v.at(e.at, "url", "export needs a url")
	} else if v.envOnly(e.at, "url", e.URL) {
		v.exportURL(e)
	}
	for _, h := range e.Headers {
		key := "headers." + h.Name
		if v.envOnly(e.at, key, h.Value) && redact.SensitiveName(h.Name) && !hasEnvRef(h.Value) {
			v.at(e.at, key, "%s: write the secret as ${VAR} and export VAR: secrets come from the environment, never the plan", key)
		}
	}
	if e.NativeHistograms && e.Kind == ExportOTLP {
		v.at(e.at, "native_histograms", "native_histograms: Prometheus native histograms are sent over remote-write only")
	}
	if e.at.has("interval") && e.Interval <= 0 {
		v.at(e.at, "interval", "interval %v must be > 0", e.Interval)
	}
}

// boolOf reads true or false.
func boolOf(key string, n *yaml.Node) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		return false, fmt.Errorf("%s: want true or false, got %s", key, kindName(n))
	}
	return b, nil
}

// envOnly checks that s has sound references to the environment alone:
// an export is the same for every cell.
func (v *validator) envOnly(w where, key, s string) bool {
	rs, err := refs(s)
	if err != nil {
		v.at(w, key, "%s: %v", key, err)
		return false
	}
	for _, r := range rs {
		if !r.env {
			v.at(w, key, "%s: %s has no value in an export, which is the same for every cell; only ${VAR} may be used", key, r)
			return false
		}
	}
	return true
}

// exportURL checks the scheme and host of an export's URL.
func (v *validator) exportURL(e *Export) {
	schemes, want := []string{"http", "https"}, "an http:// or https:// URL"
	if e.Kind == ExportOTLP {
		schemes, want = []string{"http", "https", "grpc", "grpcs"}, "an http:// or https:// (OTLP/HTTP) or grpc:// or grpcs:// (OTLP/gRPC) URL"
	}
	if shown := redact.URL(e.URL); shown != e.URL {
		v.at(e.at, "url", "url %s holds a credential: write it as ${VAR} and export VAR: secrets come from the environment, never the plan", shown)
		return
	}
	if hasRefs(e.URL) {
		return
	}
	u, err := url.Parse(e.URL)
	if err != nil || u.Host == "" || !slices.Contains(schemes, u.Scheme) {
		v.at(e.at, "url", "url %q: want %s", e.URL, want)
	}
}

// ExpandExports returns the plan's exports with ${VAR} replaced by the
// values read when the plan was loaded. They hold credentials: use them,
// never store or print them.
func (p *Plan) ExpandExports() ([]Export, error) {
	x := &expander{file: p.File, dir: p.Dir, env: p.env}
	out := make([]Export, len(p.Export))
	for i, e := range p.Export {
		out[i] = e
		out[i].URL = x.str(e.at, "url", e.URL)
		out[i].Headers = slices.Clone(e.Headers)
		for j, h := range e.Headers {
			out[i].Headers[j].Value = x.str(e.at, "headers."+h.Name, h.Value)
		}
	}
	if len(x.errs) > 0 {
		return nil, x.errs.sorted()
	}
	return out, nil
}

// describeExports is the plan's exports as Describe writes them:
// references unexpanded, so no secret.
func describeExports(es []Export) []exportJSON {
	var out []exportJSON
	for _, e := range es {
		ej := exportJSON{Kind: e.Kind, URL: e.URL, Interval: optDur(e.Interval), NativeHistograms: e.NativeHistograms}
		if len(e.Headers) > 0 {
			ej.Headers = orderedObject(len(e.Headers), func(i int) (string, any) { return e.Headers[i].Name, e.Headers[i].Value })
		}
		out = append(out, ej)
	}
	return out
}

type exportJSON struct {
	Kind     string          `json:"kind"`
	URL      string          `json:"url"`
	Headers  json.RawMessage `json:"headers,omitempty"`
	Interval string          `json:"interval,omitempty"`
	// NativeHistograms is left out when false: a plan without it is
	// described as before.
	NativeHistograms bool `json:"native_histograms,omitempty"`
}
