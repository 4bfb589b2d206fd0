package registry

import (
	"github.com/perflab/perflab/internal/driver"
	s3driver "github.com/perflab/perflab/internal/driver/s3"
)

// s3Driver decodes the params of an s3 workload: a mix of GET, PUT, HEAD,
// DELETE and LIST against a bucket, with the objects it reads uploaded
// before the load (Prepare) and everything it wrote removed after it
// (Cleanup). ca_file is relative to the plan.
func s3Driver(in Input) (Spec, []error) {
	var cfg s3driver.Config
	keys, errs := decodeConfig(in, &cfg)
	keys.resolve(&cfg.CAFile)
	if errs = append(errs, keys.place(cfg.Validate())...); len(errs) > 0 {
		return Spec{}, errs
	}
	return Spec{
		Target: cfg.Redacted(),
		New:    func() (driver.Driver, error) { return s3driver.New(cfg) },
	}, nil
}
