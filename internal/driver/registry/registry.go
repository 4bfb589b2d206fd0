// Package registry is every driver a plan can name, in one map literal:
// how each decodes and checks a workload's params into a Spec (what the
// load goes to, how to build the driver, what it needs of other workloads)
// and which of its params say where the system is or hold credentials.
// It opens nothing: plan checking decodes every workload of every cell.
package registry

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

// Spec is a workload's driver configuration, decoded and validated
// but not yet built: plan checking decodes every workload of every cell
// without opening anything.
type Spec struct {
	Target  string                        // what the load goes to, for reports, secrets redacted
	OpBytes int64                         // payload bytes of one operation, for byte rates; 0 when none
	New     func() (driver.Driver, error) // builds the driver

	// Optional.
	Kind        string        // what the workload is to others, e.g. "otlp ingest"
	ImpliesRate bool          // its driver is a driver.Rater: without a rate in the plan, its rate is the workload's
	Timed       bool          // its driver is a driver.Timed: without a rate in the plan, its arrivals are the workload's schedule
	Measured    *Measured     // payload bytes of one operation, known once the driver is built
	Needs       *Dependency   // another workload of the profile whose built driver this one needs
	VerifyWait  time.Duration // how long Verify may wait for written data to become visible
}

// Input is what a driver factory decodes: a workload's params, the
// plan file they are in (for error positions) and its directory, against
// which relative paths resolve.
type Input struct {
	Params    plan.Params
	File, Dir string
}

// factory decodes a workload's params strictly. Every problem is
// returned, each at its position in the plan file when it has one.
type factory func(in Input) (Spec, []error)

// entry is a driver a plan can name.
type entry struct {
	decode factory
	// params is a zero value of what the workload's params decode into
	// (the driver's Config): it declares which of them are not the load.
	params  driver.Keyed
	gateway bool // the params may hold a gateway block (withGateway)
}

// drivers is every driver a plan can name.
var drivers = map[string]entry{
	"http":         {decode: httpDriver, params: httpParams{}, gateway: true},
	"openai":       {decode: openaiDriver, params: openaidriver.Config{}, gateway: true},
	"otlp":         {decode: otlpDriver, params: otlpdriver.Config{}},
	"promql":       {decode: promqlDriver, params: promql.Config{}},
	"remote_write": {decode: remoteWriteDriver, params: remotewrite.Config{}},
	"s3":           {decode: plain(s3driver.New), params: s3driver.Config{}},
}

// factory decodes the params of a workload of the driver.
func (d entry) factory() factory {
	if d.gateway {
		return withGateway(d.decode)
	}
	return d.decode
}

// keys are the driver's declared ParamKeys, with the gateway block a
// place: it says where the gateway is.
func (d entry) keys() driver.ParamKeys {
	k := d.params.ParamKeys()
	if d.gateway {
		k.Place = append(slices.Clip(k.Place), "gateway")
	}
	return k
}

// Keys are the declared ParamKeys of the driver called name; none
// for a driver perflab does not have (a run made by another version).
func Keys(name string) driver.ParamKeys {
	if d, ok := drivers[name]; ok {
		return d.keys()
	}
	return driver.ParamKeys{}
}

// secretKeys are the keys of k that hold credentials, as secret reads them.
func secretKeys(k driver.ParamKeys) secret.Keys {
	return secret.Keys{Secret: k.Secret, Headers: k.Headers}
}

func Names() string {
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// PlaceKeys are the param keys of the driver called name that say where
// a system is or how to reach it (its declared Place and Secret keys)
// rather than what load it gets: two systems compared on the same load
// differ in them. A run records them with each workload (results.Workload)
// so that a comparison read later needs no driver; none for a driver
// perflab does not have.
func PlaceKeys(name string) []string {
	k := Keys(name)
	return slices.Concat(k.Place, k.Secret)
}

// Has reports whether a plan can name the driver called name.
func Has(name string) bool {
	_, ok := drivers[name]
	return ok
}

// Decode decodes the params of a workload of the driver called name
// strictly, without opening anything: every problem is returned, each at
// its position in the plan file when it has one.
func Decode(name string, in Input) (Spec, []error) {
	d, ok := drivers[name]
	if !ok {
		return Spec{}, []error{fmt.Errorf("unknown driver %q; perflab has %s", name, Names())}
	}
	return d.factory()(in)
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
	Expect   located[string]            `yaml:"expect_status"`
	Follow   located[int]               `yaml:"follow_redirects"`
}

// ParamKeys declares which of the http driver's params say where the
// system is; its credentials are in headers.
func (httpParams) ParamKeys() driver.ParamKeys {
	return driver.ParamKeys{Place: []string{"url", "ca_file", "insecure"}, Headers: []string{"headers"}}
}

// httpDriver decodes the params of an http workload.
func httpDriver(in Input) (Spec, []error) {
	var p httpParams
	keys, errs := decodeConfig(in, &p)
	cfg := httpdriver.Config{URL: p.URL.V, Method: strings.ToUpper(p.Method.V), Header: http.Header{},
		Timeout: p.Timeout.V, Proto: p.Proto.V, CAFile: p.CAFile.V, InsecureSkipVerify: p.Insecure.V,
		MaxConns: p.MaxConns.V, Name: p.Name.V, ExpectStatus: p.Expect.V, FollowRedirects: p.Follow.V}
	for k, v := range p.Headers.V {
		cfg.Header.Add(k, v)
	}
	keys.resolve(&cfg.CAFile)
	var err error
	if cfg.Body, err = p.body(in); err != nil {
		errs = append(errs, err)
	}
	if errs = append(errs, keys.place(cfg.Validate())...); len(errs) > 0 {
		return Spec{}, errs
	}
	target := cfg.Method
	if target == "" {
		target = http.MethodGet
	}
	return Spec{
		Target:  target + " " + secret.URL(cfg.URL),
		OpBytes: int64(len(cfg.Body)),
		New:     func() (driver.Driver, error) { return httpdriver.New(cfg) },
	}, nil
}

// body is the request body: body as written, or body_file's contents.
func (p *httpParams) body(in Input) ([]byte, error) {
	switch {
	case p.Body.set && p.BodyFile.set:
		return nil, in.errorAt(p.BodyFile.locator, "body_file", "give %s or %s, not both", in.name("body"), in.name("body_file"))
	case p.BodyFile.set:
		path := p.BodyFile.V
		if !filepath.IsAbs(path) {
			path = filepath.Join(in.Dir, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, in.errorAt(p.BodyFile.locator, "body_file", "cannot read %s: %v", in.name("body_file"), err)
		}
		return b, nil
	case p.Body.set:
		return []byte(p.Body.V), nil
	}
	return nil, nil
}

// StoredParams is a workload's params as stored with the run: as written
// in the plan (so ${VAR} references stay references) with credentials
// written literally masked (secret.MaskParams, by the keys of the driver).
func StoredParams(params plan.Params, driverName string) json.RawMessage {
	raw, err := params.JSON()
	if err != nil {
		return json.RawMessage("{}")
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	secret.MaskParams(m, secretKeys(Keys(driverName)))
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// DescribedPlan is the plan as stored with a run (Plan.Describe), with
// credentials written literally masked as in storedParams.
func DescribedPlan(p *plan.Plan) (string, error) {
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
				secret.MaskParams(params, secretKeys(Keys(name)))
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

// pos is where the field was; the zero Pos when it was not given.
func (l locator) pos() plan.Pos { return plan.Pos{Line: l.line, Col: l.col} }

func (l locator) errorf(file, format string, a ...any) error {
	return plan.ErrorAt(file, plan.Pos{Line: l.line, Col: l.col}, format, a...)
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

// Measured is the payload of one operation of a driver that knows its
// size only once built (otlp ingest measures its mean trace): bytes gives
// it; each operation carries perOp items (item: "trace").
type Measured struct {
	Bytes func(driver.Driver) float64
	Item  string
	PerOp int
}

// Dependency is another workload of the same profile whose built driver a
// workload's driver needs (an otlp query workload's ids_from): the name,
// where the plan gives it, the kind that workload must be, and how to build
// this driver from that one.
type Dependency struct {
	Name  string
	At    plan.Pos
	Kind  string
	Build func(dep driver.Driver) (driver.Driver, error)
}
