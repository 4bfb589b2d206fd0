package otlpdriver

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/secret"
)

// Modes, protocols and query APIs Config accepts.
const (
	ModeIngest = "ingest" // export generated traces over OTLP
	ModeQuery  = "query"  // query the traces an ingest workload wrote

	ProtoGRPC = "grpc" // OTLP/gRPC
	ProtoHTTP = "http" // OTLP/HTTP with protobuf bodies

	APITempo  = "tempo"  // GET /api/traces/<id>, GET /api/search?q=<TraceQL>
	APIJaeger = "jaeger" // GET /api/traces/<id>, GET /api/traces?service=&operation=

	OpExport    = "export"      // the operation name of an ingest request
	OpTraceByID = "trace_by_id" // the operation name of a lookup by trace ID
	OpSearch    = "search"      // the operation name of a search
	// OpNoTraceYet is a trace_by_id due before the ingest workload it takes
	// IDs from had written a trace delay ago: nothing was sent.
	OpNoTraceYet = "trace_by_id (no trace old enough yet)"
)

// Defaults applied by New to zero fields.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultDelay        = 5 * time.Second
	DefaultIDRing       = 100_000
	DefaultVerifySample = 100
	DefaultVerifyWait   = 30 * time.Second
	DefaultSearchLimit  = 20
	DefaultLookback     = 15 * time.Minute
	maxBatch            = 10_000
)

// Config is one OTLP workload: ingestion (Mode ingest) or queries (Mode
// query) — two driver instances, since a plan runs them as two concurrent
// workloads. Durations are time.Duration: YAML strings like "5s" decode
// into them (yaml.v3, which the plan's strict decoder uses).
type Config struct {
	Mode string `yaml:"mode"` // ingest (default) or query

	// Endpoint is where ingest mode exports to. protocol http: a URL,
	// http:// or https://; the path defaults to /v1/traces when empty or
	// "/". protocol grpc: host:port (plaintext), or http://host:port
	// (plaintext) or https://host:port (TLS).
	Endpoint string `yaml:"endpoint"`
	Protocol string `yaml:"protocol"` // grpc (default) or http

	// Headers go with every request this driver sends: exports in ingest
	// mode, queries in query mode and Verify's lookups. Values may be
	// secrets; see Redacted.
	Headers  map[string]string `yaml:"headers"`
	CAFile   string            `yaml:"ca_file"`  // PEM bundle trusted instead of the system roots
	Insecure bool              `yaml:"insecure"` // skip TLS certificate verification
	Timeout  time.Duration     `yaml:"timeout"`  // one request; default 10s
	// Conns is the number of gRPC connections the VUs share, VU i on
	// connection i mod Conns; default 1. HTTP keeps a keep-alive
	// connection per concurrent VU.
	Conns int `yaml:"conns"`

	Shape  string      `yaml:"shape"`  // small, medium (default), large, xlarge or custom
	Custom ShapeParams `yaml:"custom"` // with shape custom; zero fields take medium's
	Batch  int         `yaml:"batch"`  // traces per export request; default 1
	Seed   uint64      `yaml:"seed"`   // 0: a random seed, reported in Facts

	// QueryURL is the base URL of the query API, e.g. http://tempo:3200 or
	// Jaeger's http://jaeger:16686: what query mode queries and what
	// Verify reads back from in ingest mode (Verify is skipped without it).
	QueryURL string `yaml:"query_url"`
	QueryAPI string `yaml:"query_api"` // tempo (default) or jaeger
	// Delay is how long after its write a trace is looked up by ID: the
	// time the system is allowed to make it readable. Default 5s.
	Delay time.Duration `yaml:"delay"`
	// Queries is the mix of query mode: each operation takes the next name
	// in turn; repeat a name to weight it. Default [trace_by_id, search].
	Queries []string     `yaml:"queries"`
	Search  SearchParams `yaml:"search"`

	IDRing       int `yaml:"id_ring"`       // written trace IDs kept for lookups; default 100000
	VerifySample int `yaml:"verify_sample"` // trace IDs Verify looks up; default 100
	// VerifyWait is how long after its first look Verify keeps looking
	// again, with backoff, for traces (or spans) not found yet before it
	// calls them lost: query APIs such as Tempo's and Jaeger's return a
	// trace only once an ingester has flushed it. In query mode, the
	// lookups that got a 404 during the run are looked up again for as
	// long. Default 30s.
	VerifyWait time.Duration `yaml:"verify_wait"`

	// IDsFrom names the ingest workload whose written trace IDs query mode
	// looks up. The driver does not read it: whoever builds the drivers
	// sets Journal from it.
	IDsFrom string `yaml:"ids_from"`
	// Journal is where ingest mode records written trace IDs and query
	// mode picks them from: set it to the ingest driver's Journal(). Nil
	// in ingest mode: New makes one. Nil in query mode: there is nothing
	// to look up by ID, and trace_by_id operations run searches instead
	// (counted in Facts).
	Journal *Journal `yaml:"-"`
}

// SearchParams is what a search asks for.
type SearchParams struct {
	// Query is the TraceQL of a Tempo search; default
	// { resource.service.name = "<Service>" }.
	Query string `yaml:"query"`
	// Service and Operation are a Jaeger search's; Service defaults to the
	// shape's first service, Operation to any.
	Service   string        `yaml:"service"`
	Operation string        `yaml:"operation"`
	Limit     int           `yaml:"limit"`    // traces per search; default 20
	Lookback  time.Duration `yaml:"lookback"` // searched time range ending now; default 15m
}

// ParamKeys declares which params say where the system is (its ingest
// endpoint and query API, TLS trust, headers such as a tenant's) and which
// hold credentials (credential-named headers).
func (Config) ParamKeys() driver.ParamKeys {
	return driver.ParamKeys{
		Place:   []string{"endpoint", "query_url", "query_api", "ca_file", "insecure", "headers"},
		Headers: []string{"headers"},
	}
}

// withDefaults fills in every default in one place.
func (c Config) withDefaults() Config {
	set := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	set(&c.Mode, ModeIngest)
	set(&c.Protocol, ProtoGRPC)
	set(&c.Shape, ShapeMedium)
	set(&c.QueryAPI, APITempo)
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Conns == 0 {
		c.Conns = 1
	}
	if c.Batch == 0 {
		c.Batch = 1
	}
	if c.Delay == 0 {
		c.Delay = DefaultDelay
	}
	if len(c.Queries) == 0 {
		c.Queries = []string{OpTraceByID, OpSearch}
	}
	if c.IDRing == 0 {
		c.IDRing = DefaultIDRing
	}
	if c.VerifySample == 0 {
		c.VerifySample = DefaultVerifySample
	}
	if c.VerifyWait == 0 {
		c.VerifyWait = DefaultVerifyWait
	}
	s := &c.Search
	set(&s.Service, c.shape().Services[0])
	set(&s.Query, fmt.Sprintf("{ resource.service.name = %q }", s.Service))
	if s.Limit == 0 {
		s.Limit = DefaultSearchLimit
	}
	if s.Lookback == 0 {
		s.Lookback = DefaultLookback
	}
	return c
}

// shape resolves the shape's parameters; for an unknown name, medium's.
func (c Config) shape() ShapeParams {
	if c.Shape == ShapeCustom {
		return c.Custom.withDefaults()
	}
	if p, ok := NamedShape(c.Shape); ok {
		return p
	}
	p, _ := NamedShape(ShapeMedium)
	return p
}

// Redacted returns c with every header value masked and the credentials
// in its URLs hidden (secret.URL), for logs and stored configs.
func (c Config) Redacted() Config {
	if c.Headers != nil {
		h := make(map[string]string, len(c.Headers))
		for k := range c.Headers {
			h[k] = "REDACTED"
		}
		c.Headers = h
	}
	c.Endpoint, c.QueryURL = secret.URL(c.Endpoint), secret.URL(c.QueryURL)
	return c
}

// Validate reports every problem with c at once; nil means New will
// accept it.
func (c Config) Validate() []error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, format, a...)) }
	mode := c.Mode
	switch mode {
	case "", ModeIngest:
		mode = ModeIngest
		errs = append(errs, c.validateIngest()...)
	case ModeQuery:
		if c.QueryURL == "" {
			add("query_url", "query_url is required in query mode")
		}
	default:
		add("mode", "mode %q is unknown (want ingest or query)", c.Mode)
	}
	if c.QueryURL != "" {
		if err := checkHTTPURL("query_url", c.QueryURL); err != nil {
			errs = append(errs, err)
		}
	}
	switch c.QueryAPI {
	case "", APITempo, APIJaeger:
	default:
		add("query_api", "query_api %q is unknown (want tempo or jaeger)", c.QueryAPI)
	}
	for name, v := range c.Headers {
		if !httpguts.ValidHeaderFieldName(name) {
			add("headers", "header name %q is not valid", name)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			add("headers", "header %q: value is not valid", name) // the value may be a secret
		}
	}
	if c.CAFile != "" {
		if _, err := dial.LoadCA(c.CAFile); err != nil {
			errs = append(errs, driver.WithKey("ca_file", err))
		}
	}
	errs = append(errs, c.validateNumbers()...)
	errs = append(errs, c.validateQueries(mode)...)
	return errs
}

func (c Config) validateIngest() []error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, format, a...)) }
	if c.Endpoint == "" {
		add("endpoint", "endpoint is required in ingest mode")
	}
	switch c.Protocol {
	case "", ProtoGRPC:
		if c.Endpoint != "" {
			if _, _, err := grpcTarget(c.Endpoint); err != nil {
				errs = append(errs, driver.WithKey("endpoint", err))
			}
		}
	case ProtoHTTP:
		if c.Endpoint != "" {
			if err := checkHTTPURL("endpoint", c.Endpoint); err != nil {
				errs = append(errs, err)
			}
		}
	default:
		add("protocol", "protocol %q is unknown (want grpc or http)", c.Protocol)
	}
	switch c.Shape {
	case "", ShapeSmall, ShapeMedium, ShapeLarge, ShapeXLarge:
		if !isZeroShape(c.Custom) {
			add("custom", "custom shape parameters need shape: custom (shape is %q)", c.Shape)
		}
	case ShapeCustom:
		for _, err := range c.Custom.withDefaults().validate() {
			errs = append(errs, driver.WithKey("custom", err))
		}
	default:
		add("shape", "shape %q is unknown (want small, medium, large, xlarge or custom)", c.Shape)
	}
	if c.Batch < 0 || c.Batch > maxBatch {
		add("batch", "batch %d: want 1 to %d (0 means 1)", c.Batch, maxBatch)
	}
	return errs
}

func isZeroShape(p ShapeParams) bool {
	return p.Spans == (Range{}) && p.Depth == 0 && len(p.Services) == 0 &&
		p.Attributes == (Range{}) && p.AttributeSize == (Range{}) &&
		p.ResourceAttributes == 0 && p.SpanDuration == (DurationRange{}) && p.ErrorRate == 0
}

func (c Config) validateNumbers() []error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"timeout", c.Timeout}, {"delay", c.Delay}, {"verify_wait", c.VerifyWait}, {"search.lookback", c.Search.Lookback}} {
		if d.v < 0 {
			errs = append(errs, driver.ParamErrorf(topKey(d.name), "%s %v is negative", d.name, d.v))
		}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"conns", c.Conns}, {"id_ring", c.IDRing}, {"verify_sample", c.VerifySample}, {"search.limit", c.Search.Limit}} {
		if n.v < 0 {
			errs = append(errs, driver.ParamErrorf(topKey(n.name), "%s %d is negative", n.name, n.v))
		}
	}
	if c.Conns > 1024 {
		errs = append(errs, driver.ParamErrorf("conns", "conns %d: want at most 1024", c.Conns))
	}
	return errs
}

// topKey is the top-level params key of a dotted name: search of
// search.limit.
func topKey(name string) string {
	key, _, _ := strings.Cut(name, ".")
	return key
}

func (c Config) validateQueries(mode string) []error {
	var errs []error
	for _, q := range c.Queries {
		if q != OpTraceByID && q != OpSearch {
			errs = append(errs, driver.ParamErrorf("queries", "queries: %q is unknown (want trace_by_id or search)", q))
		}
	}
	if len(c.Queries) > 0 && mode != ModeQuery {
		errs = append(errs, driver.ParamErrorf("queries", "queries are for query mode; an ingest workload sends exports only"))
	}
	return errs
}

func checkHTTPURL(field, s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return driver.ParamErrorf(field, "cannot parse %s: %w", field, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return driver.ParamErrorf(field, "%s %q: scheme must be http or https", field, secret.URL(s))
	case u.Host == "":
		return driver.ParamErrorf(field, "%s %q: host is missing", field, secret.URL(s))
	case driver.BadPort(u) != "":
		return driver.ParamErrorf(field, "%s %q: %s", field, secret.URL(s), driver.BadPort(u))
	}
	return nil
}

// grpcTarget splits a gRPC endpoint into host:port and whether it uses TLS.
func grpcTarget(endpoint string) (hostport string, useTLS bool, err error) {
	hostport = endpoint
	if scheme, rest, ok := strings.Cut(endpoint, "://"); ok {
		switch scheme {
		case "http":
		case "https":
			useTLS = true
		default:
			return "", false, fmt.Errorf("endpoint %q: scheme must be http or https (or none: host:port)", endpoint)
		}
		hostport = strings.TrimSuffix(rest, "/")
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || host == "" || port == "" || strings.Contains(hostport, "/") {
		return "", false, fmt.Errorf("endpoint %q: want host:port for grpc", endpoint)
	}
	return hostport, useTLS, nil
}
