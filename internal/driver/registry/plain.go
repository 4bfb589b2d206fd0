package registry

import "github.com/perflab/perflab/internal/driver"

// Config is a driver's Config whose params are the Config alone: it
// declares which params are not the load (driver.Keyed), checks itself
// (every problem at once, each a driver.ParamError where it names a key)
// and says what it loads with its credentials cut. Its file paths, when
// a pointer to it has Paths, resolve against the plan's directory.
type Config interface {
	driver.Keyed
	Validate() []error
	Redacted() string
}

// paths is a Config's file paths, relative to the plan as written.
type paths interface {
	Paths() []*string
}

// plain is the factory of a driver whose params are its Config C alone:
// decoded strictly, its paths resolved, checked by C's Validate, the
// driver built by build. Such a driver is its package and one line in
// drivers, `"name": {decode: plain(pkg.New), params: pkg.Config{}}`; a
// driver that needs more of the registry (a rate of its own, another
// workload's driver, a gateway) has a decoder of its own here.
func plain[C Config, D driver.Driver](build func(C) (D, error)) factory {
	return func(in Input) (Spec, []error) {
		var cfg C
		keys, errs := decodeConfig(in, &cfg)
		if p, ok := any(&cfg).(paths); ok {
			for _, path := range p.Paths() {
				keys.resolve(path)
			}
		}
		if errs = append(errs, keys.place(cfg.Validate())...); len(errs) > 0 {
			return Spec{}, errs
		}
		return Spec{
			Target: cfg.Redacted(),
			New: func() (driver.Driver, error) {
				d, err := build(cfg)
				if err != nil {
					return nil, err // not a nil *D in a non-nil interface
				}
				return d, nil
			},
		}, nil
	}
}
