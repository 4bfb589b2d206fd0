package registry

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	otlpdriver "github.com/perflab/perflab/internal/driver/otlp"
)

// Kinds of otlp workloads, for ids_from.
const (
	kindOTLPIngest = "otlp ingest"
	kindOTLPQuery  = "otlp query"
)

// otlpDriver decodes the params of an otlp workload: generated traces
// exported over OTLP (mode ingest), or looked up and searched for (mode
// query). An ingest workload's byte rate (rate: 5.8MB/s) is turned into
// export requests per second from the trace size its driver measures when
// built. A query workload's ids_from names the ingest workload of the same
// profile whose written trace IDs it looks up. ca_file is relative to the
// plan.
func otlpDriver(in Input) (Spec, []error) {
	var cfg otlpdriver.Config
	keys, errs := decodeConfig(in, &cfg)
	keys.resolve(&cfg.CAFile)
	if cfg.IDsFrom != "" && cfg.Mode != otlpdriver.ModeQuery {
		errs = append(errs, keys.errorf("ids_from", "params: ids_from is for query mode: an ingest workload keeps its own trace IDs"))
	}
	if errs = append(errs, keys.place(cfg.Validate())...); len(errs) > 0 {
		return Spec{}, errs
	}
	spec := Spec{Target: otlpTarget(cfg), Kind: kindOTLPIngest, VerifyWait: otlpVerifyWait(cfg),
		New: func() (driver.Driver, error) { return otlpdriver.New(cfg) }}
	if cfg.Mode == otlpdriver.ModeQuery {
		spec.Kind = kindOTLPQuery
		if cfg.IDsFrom != "" {
			spec.Needs = &Dependency{Name: cfg.IDsFrom, At: keys.at["ids_from"].pos(), Kind: kindOTLPIngest,
				Build: func(dep driver.Driver) (driver.Driver, error) {
					c := cfg
					c.Journal = dep.(*otlpdriver.Driver).Journal()
					return otlpdriver.New(c)
				}}
		}
		return spec, nil
	}
	batch := max(cfg.Batch, 1)
	spec.Measured = &Measured{Item: "trace", PerOp: batch, Bytes: func(d driver.Driver) float64 {
		return d.(*otlpdriver.Driver).MeanTraceBytes() * float64(batch)
	}}
	return spec, nil
}

// otlpVerifyWait is how long an otlp workload's read-back may wait for
// traces to show: an ingest workload's, until its last sampled trace is
// delay old, then verify_wait; a query workload's, verify_wait. Without
// a query_url an ingest workload does not read back.
func otlpVerifyWait(cfg otlpdriver.Config) time.Duration {
	if cfg.QueryURL == "" {
		return 0
	}
	wait := cmp.Or(cfg.VerifyWait, otlpdriver.DefaultVerifyWait)
	if cfg.Mode == otlpdriver.ModeQuery {
		return wait
	}
	return cmp.Or(cfg.Delay, otlpdriver.DefaultDelay) + wait
}

// otlpTarget describes an otlp workload from its redacted config.
func otlpTarget(cfg otlpdriver.Config) string {
	c := cfg.Redacted()
	api := c.QueryAPI
	if api == "" {
		api = otlpdriver.APITempo
	}
	if c.Mode == otlpdriver.ModeQuery {
		queries := c.Queries
		if len(queries) == 0 {
			queries = []string{otlpdriver.OpTraceByID, otlpdriver.OpSearch}
		}
		s := fmt.Sprintf("otlp query %s API %s: %s", api, c.QueryURL, strings.Join(queries, ", "))
		if c.IDsFrom != "" {
			s += " (trace IDs written by " + c.IDsFrom + ")"
		}
		return s
	}
	proto, shape := c.Protocol, c.Shape
	if proto == "" {
		proto = otlpdriver.ProtoGRPC
	}
	if shape == "" {
		shape = otlpdriver.ShapeMedium
	}
	s := fmt.Sprintf("otlp %s export to %s: %s traces, %d per request", proto, c.Endpoint, shape, max(c.Batch, 1))
	if c.QueryURL != "" {
		s += fmt.Sprintf(", read back from %s API %s", api, c.QueryURL)
	}
	return s
}
