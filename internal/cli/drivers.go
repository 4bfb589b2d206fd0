package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/perflab/perflab/internal/driver"
	httpdriver "github.com/perflab/perflab/internal/driver/http"
	openaidriver "github.com/perflab/perflab/internal/driver/openai"
	otlpdriver "github.com/perflab/perflab/internal/driver/otlp"
	"github.com/perflab/perflab/internal/driver/promql"
	"github.com/perflab/perflab/internal/driver/remotewrite"
	s3driver "github.com/perflab/perflab/internal/driver/s3"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/secret"
)

// driverSpec is a workload's driver configuration, decoded and validated
// but not yet built: plan checking decodes every workload of every cell
// without opening anything.
type driverSpec struct {
	target  string                        // what the load goes to, for reports, secrets redacted
	opBytes int64                         // payload bytes of one operation, for byte rates; 0 when none
	new     func() (driver.Driver, error) // builds the driver

	// Optional, see drivers_link.go.
	kind        string        // what the workload is to others, e.g. "otlp ingest"
	impliesRate bool          // its driver is a driver.Rater: without a rate in the plan, its rate is the workload's
	measured    *measuredOp   // payload bytes of one operation, known once the driver is built
	needs       *dependency   // another workload of the profile whose built driver this one needs
	verifyWait  time.Duration // how long Verify may wait for written data to become visible
}

// driverInput is what a driver factory decodes: a workload's params, the
// plan file they are in (for error positions) and its directory, against
// which relative paths resolve.
type driverInput struct {
	params    plan.Params
	file, dir string
}

// driverFactory decodes a workload's params strictly. Every problem is
// returned, each at its position in the plan file when it has one.
type driverFactory func(in driverInput) (driverSpec, []error)

// driverEntry is a driver a plan can name.
type driverEntry struct {
	decode driverFactory
	// params is a zero value of what the workload's params decode into
	// (the driver's Config): it declares which of them are not the load.
	params  driver.Keyed
	gateway bool // the params may hold a gateway block (withGateway)
}

// drivers is every driver a plan can name.
var drivers = map[string]driverEntry{
	"http":         {decode: httpDriver, params: httpParams{}, gateway: true},
	"openai":       {decode: openaiDriver, params: openaidriver.Config{}, gateway: true},
	"otlp":         {decode: otlpDriver, params: otlpdriver.Config{}},
	"promql":       {decode: promqlDriver, params: promql.Config{}},
	"remote_write": {decode: remoteWriteDriver, params: remotewrite.Config{}},
	"s3":           {decode: s3Driver, params: s3driver.Config{}},
}

// factory decodes the params of a workload of the driver.
func (d driverEntry) factory() driverFactory {
	if d.gateway {
		return withGateway(d.decode)
	}
	return d.decode
}

// keys are the driver's declared ParamKeys, with the gateway block a
// place: it says where the gateway is.
func (d driverEntry) keys() driver.ParamKeys {
	k := d.params.ParamKeys()
	if d.gateway {
		k.Place = append(slices.Clip(k.Place), "gateway")
	}
	return k
}

// declaredKeys are the declared ParamKeys of the driver called name; none
// for a driver perflab does not have (a run made by another version).
func declaredKeys(name string) driver.ParamKeys {
	if d, ok := drivers[name]; ok {
		return d.keys()
	}
	return driver.ParamKeys{}
}

func driverNames() string {
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// httpParams is the http driver's params: what `perflab http` takes as flags.
type httpParams struct {
	URL      located[string]            `yaml:"url"`
	Method   located[string]            `yaml:"method"`
	Headers  located[map[string]string] `yaml:"headers"`
	Body     located[string]            `yaml:"body"`
	BodyFile located[string]            `yaml:"body_file"`
	Timeout  located[time.Duration]     `yaml:"timeout"`
	Proto    located[string]            `yaml:"proto"`
	CAFile   located[string]            `yaml:"ca_file"`
	Insecure located[bool]              `yaml:"insecure"`
	MaxConns located[int]               `yaml:"max_conns"`
	Name     located[string]            `yaml:"name"`
}

// ParamKeys declares which of the http driver's params say where the
// system is; its credentials are in headers.
func (httpParams) ParamKeys() driver.ParamKeys {
	return driver.ParamKeys{Place: []string{"url", "ca_file", "insecure"}, Headers: []string{"headers"}}
}

// httpDriver decodes the params of an http workload.
func httpDriver(in driverInput) (driverSpec, []error) {
	var p httpParams
	var errs []error
	if err := in.params.Decode(&p); err != nil { // go on: what decoded may have problems too
		errs = planErrors(err)
	}
	cfg := httpdriver.Config{URL: p.URL.V, Method: strings.ToUpper(p.Method.V), Header: http.Header{},
		Timeout: p.Timeout.V, Proto: p.Proto.V, CAFile: p.CAFile.V, InsecureSkipVerify: p.Insecure.V,
		MaxConns: p.MaxConns.V, Name: p.Name.V}
	for k, v := range p.Headers.V {
		cfg.Header.Add(k, v)
	}
	if cfg.CAFile != "" && !filepath.IsAbs(cfg.CAFile) {
		cfg.CAFile = filepath.Join(in.dir, cfg.CAFile)
	}
	var err error
	if cfg.Body, err = p.body(in); err != nil {
		errs = append(errs, err)
	}
	if errs = append(errs, p.problems(cfg, in)...); len(errs) > 0 {
		return driverSpec{}, errs
	}
	target := cfg.Method
	if target == "" {
		target = http.MethodGet
	}
	return driverSpec{
		target:  target + " " + secret.URL(cfg.URL),
		opBytes: int64(len(cfg.Body)),
		new:     func() (driver.Driver, error) { return httpdriver.New(cfg) },
	}, nil
}

// body is the request body: body as written, or body_file's contents.
func (p *httpParams) body(in driverInput) ([]byte, error) {
	switch {
	case p.Body.set && p.BodyFile.set:
		return nil, p.BodyFile.errorf(in.file, "give body or body_file, not both")
	case p.BodyFile.set:
		path := p.BodyFile.V
		if !filepath.IsAbs(path) {
			path = filepath.Join(in.dir, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, p.BodyFile.errorf(in.file, "cannot read body_file: %v", err)
		}
		return b, nil
	case p.Body.set:
		return []byte(p.Body.V), nil
	}
	return nil, nil
}

// problems is cfg.Validate with each problem at the position of the field
// it is about: each field is validated alone first, on an otherwise valid
// config; what only the whole config shows goes to proto (or the params).
func (p *httpParams) problems(cfg httpdriver.Config, in driverInput) []error {
	const ok = "http://127.0.0.1/"
	fields := []struct {
		at   locator
		solo httpdriver.Config
	}{
		{p.URL.locator, httpdriver.Config{URL: cfg.URL}},
		{p.Method.locator, httpdriver.Config{URL: ok, Method: cfg.Method}},
		{p.Headers.locator, httpdriver.Config{URL: ok, Header: cfg.Header}},
		{p.Timeout.locator, httpdriver.Config{URL: ok, Timeout: cfg.Timeout}},
		{p.CAFile.locator, httpdriver.Config{URL: ok, CAFile: cfg.CAFile}},
		{p.MaxConns.locator, httpdriver.Config{URL: ok, MaxConns: cfg.MaxConns}},
		{p.Proto.locator, cfg},
	}
	var errs []error
	seen := map[string]bool{}
	for _, f := range fields {
		for _, err := range f.solo.Validate() {
			if msg := err.Error(); !seen[msg] {
				seen[msg] = true
				errs = append(errs, f.at.or(in.params.Pos()).errorf(in.file, "params: %s", msg))
			}
		}
	}
	return errs
}

// storedParams is a workload's params as stored with the run: as written
// in the plan (so ${VAR} references stay references) with credentials
// written literally masked (secret.MaskParams, by the keys of the driver).
func storedParams(params plan.Params, driverName string) json.RawMessage {
	raw, err := params.JSON()
	if err != nil {
		return json.RawMessage("{}")
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	secret.MaskParams(m, declaredKeys(driverName))
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// describedPlan is the plan as stored with a run (Plan.Describe), with
// credentials written literally masked as in storedParams.
func describedPlan(p *plan.Plan) (string, error) {
	raw, err := p.Describe()
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	profiles, _ := m["profiles"].([]any)
	for _, pr := range profiles {
		ws, _ := pr.(map[string]any)["workloads"].([]any)
		for _, w := range ws {
			w, _ := w.(map[string]any)
			name, _ := w["driver"].(string)
			if params, ok := w["params"].(map[string]any); ok {
				secret.MaskParams(params, declaredKeys(name))
			}
		}
	}
	out, err := json.Marshal(m)
	return string(out), err
}

// locator is where a params field was in the plan file.
type locator struct {
	set       bool
	line, col int
}

func (l locator) or(p plan.Pos) locator {
	if l.set {
		return l
	}
	return locator{line: p.Line, col: p.Col}
}

func (l locator) errorf(file, format string, a ...any) error {
	return errorAt(file, plan.Pos{Line: l.line, Col: l.col}, format, a...)
}

// located is a params field that remembers its position, so that a
// problem found after decoding is reported where the value is.
type located[T any] struct {
	V T
	locator
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (l *located[T]) UnmarshalYAML(n *yaml.Node) error {
	l.set, l.line, l.col = true, n.Line, n.Column
	if err := n.Decode(&l.V); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return fmt.Errorf("want %s, got %q", hintOf(l.V), n.Value)
		}
		return err
	}
	return nil
}

func hintOf(v any) string {
	switch v.(type) {
	case time.Duration:
		return "a duration like 5s"
	case bool:
		return "true or false"
	case int:
		return "a whole number"
	case map[string]string:
		return "a mapping of names to values"
	}
	return "a string"
}

// planErrors flattens a plan.Errors into its items.
func planErrors(err error) []error {
	var pe plan.Errors
	if errors.As(err, &pe) {
		out := make([]error, len(pe))
		for i, e := range pe {
			out[i] = e
		}
		return out
	}
	return []error{err}
}
