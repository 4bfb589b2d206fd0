package registry

import (
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/promql"
	"github.com/perflab/perflab/internal/driver/remotewrite"
)

// remoteWriteDriver decodes the params of a remote_write workload:
// node_exporter-like series written to a Prometheus remote write receiver.
// Without a rate in the plan, the workload runs at the driver's own rate:
// every series one sample per scrape interval.
func remoteWriteDriver(in Input) (Spec, []error) {
	var cfg remotewrite.Config
	keys, errs := decodeConfig(in, &cfg)
	if errs = append(errs, keys.place(cfg.Validate())...); len(errs) > 0 {
		return Spec{}, errs
	}
	wait := cfg.VerifyWait
	if wait == 0 {
		wait = remotewrite.DefaultVerifyWait
	}
	return Spec{
		Target:      cfg.Redacted(),
		ImpliesRate: true,
		VerifyWait:  wait,
		New:         func() (driver.Driver, error) { return remotewrite.New(cfg) },
	}, nil
}

// promqlDriver decodes the params of a promql workload: instant and range
// queries, inline or every rule of a rules file (relative to the plan).
// Without a rate in the plan, every query runs once per query interval.
func promqlDriver(in Input) (Spec, []error) {
	var cfg promql.Config
	keys, errs := decodeConfig(in, &cfg)
	keys.resolve(&cfg.RulesFile)
	if errs = append(errs, keys.place(cfg.Validate())...); len(errs) > 0 {
		return Spec{}, errs
	}
	return Spec{
		Target:      cfg.Redacted(),
		ImpliesRate: true,
		New:         func() (driver.Driver, error) { return promql.New(cfg) },
	}, nil
}
