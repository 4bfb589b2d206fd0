package cli

import (
	"flag"
	"fmt"
	"net/http"
	"strings"

	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/export"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/secret"
)

// exportFlags are the flags of live export, on perflab http and run.
type exportFlags struct {
	targets, headers listFlag
	native           bool
}

func (f *exportFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.targets, "export", "send the measurements live as the run makes them: `KIND=URL`, remote-write=URL (Prometheus remote write) "+
		"or otlp=URL (OTLP metrics; http(s)://: OTLP/HTTP, grpc(s)://host:port: OTLP/gRPC); repeatable")
	fs.Var(&f.headers, "export-header", "header 'Name: value' sent with every --export push (repeatable); ${VAR} is read from the environment")
	fs.BoolVar(&f.native, "export-native-histograms", false, "send the latency as a Prometheus native histogram too, to every remote-write --export "+
		"(perflab_latency_histogram_seconds; Prometheus 2.x needs --enable-feature=native-histograms)")
}

// build is the --export targets with the --export-header headers, every
// problem listed at once (a usage error).
func (f *exportFlags) build() ([]export.Target, error) {
	var problems []string
	h := http.Header{}
	for _, line := range f.headers {
		k, v, err := export.ParseHeader(line)
		if err == nil {
			v, err = expandEnv(v)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("--export-header %s: %v", k, err))
			continue
		}
		h.Add(k, v)
	}
	if len(f.headers) > 0 && len(f.targets) == 0 {
		problems = append(problems, "--export-header needs an --export")
	}
	var out []export.Target
	for _, v := range f.targets {
		t, err := export.ParseFlag(v)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		t.Header, t.NativeHistograms = h, f.native && t.Kind == export.RemoteWrite
		out = append(out, t)
	}
	if len(problems) > 0 {
		return nil, usageErrorf("invalid arguments:\n  %s", strings.Join(problems, "\n  "))
	}
	return out, nil
}

// secrets adds the credentials of the flags to set: the values of the
// environment variables the headers read, credential-named headers'
// values written literally, the credentials in the URLs.
func (f *exportFlags) secrets(set secret.Set) {
	for _, line := range f.headers {
		set.Header(line)
	}
	for _, v := range f.targets {
		_, u, _ := strings.Cut(v, "=")
		set.URL(u)
	}
}

// planExports is the plan's export block as targets, ${VAR} read.
func planExports(p *plan.Plan) ([]export.Target, error) {
	es, err := p.ExpandExports()
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	out := make([]export.Target, len(es))
	for i, e := range es {
		h := http.Header{}
		for _, hd := range e.Headers {
			h.Add(hd.Name, hd.Value)
		}
		out[i] = export.Target{Kind: export.Kind(e.Kind), URL: e.URL, Header: h, Interval: e.Interval, NativeHistograms: e.NativeHistograms}
	}
	return out, nil
}

// exportTargets makes the run's scrubber (the plan's credentials and those
// of the --export flags) e's, and returns where the run of p exports to:
// the plan's export block, then the --export flags.
func (e *env) exportTargets(p *plan.Plan) ([]export.Target, error) {
	set := secret.Set{}
	if e.export != nil {
		e.export.secrets(set)
	}
	e.useScrubber(registry.Scrubber(p).With(set))
	targets, err := planExports(p)
	if err != nil || e.export == nil {
		return targets, err
	}
	more, err := e.export.build()
	return append(targets, more...), err
}
