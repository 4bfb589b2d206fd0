package registry

import (
	"path/filepath"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/plan"
)

// paramKeys is where each top-level key of a workload's params is in the
// plan file, for placing the problems a driver's Config.Validate finds,
// which carry the key they are about but know no positions.
type paramKeys struct {
	in Input
	at map[string]locator
}

// decodeConfig decodes in's params strictly into cfg, a pointer to a
// driver's Config (unknown keys, duplicates and wrong types at their
// positions), and returns where each top-level key is.
func decodeConfig(in Input, cfg any) (paramKeys, []error) {
	var errs []error
	if err := in.Params.Decode(cfg); err != nil { // go on: what decoded may have problems too
		errs = plan.Problems(err)
	}
	keys := paramKeys{in: in, at: map[string]locator{}}
	var at map[string]located[any]
	if in.Params.Decode(&at) == nil {
		for k, v := range at {
			keys.at[k] = v.locator
		}
	}
	return keys, errs
}

// resolve makes a relative path in the params relative to the plan's
// directory, as the plan format does for its own paths.
func (k paramKeys) resolve(path *string) {
	if *path != "" && !filepath.IsAbs(*path) {
		*path = filepath.Join(k.in.Dir, *path)
	}
}

// errorf is a problem at key's position, or at the params when the plan
// does not give key; at the flag that gave key, for params built from a
// command line.
func (k paramKeys) errorf(key, format string, a ...any) error {
	return k.in.errorAt(k.at[key].or(k.in.Params.Pos()), key, format, a...)
}

// place puts each of a Config's problems at the key it carries (its
// driver.ParamError's Key), or at the params when it carries none or the
// plan does not give that key. From a command line, where there are no
// params to speak of, the problem is the Config's text alone.
func (k paramKeys) place(errs []error) []error {
	format := "params: %s"
	if k.in.Params.FromFlags() {
		format = "%s"
	}
	out := make([]error, 0, len(errs))
	for _, err := range errs {
		out = append(out, k.errorf(driver.KeyOf(err), format, err))
	}
	return out
}

// errorAt is a problem with the param key, at l in the plan file, or at
// the flag that gave key.
func (in Input) errorAt(l locator, key, format string, a ...any) error {
	if f := in.Params.Flag(key); f != "" {
		return plan.ErrorAt(in.File, plan.Pos{Flag: f}, format, a...)
	}
	return l.errorf(in.File, format, a...)
}

// name is how a problem names the param key: by its flag, for params
// built from a command line.
func (in Input) name(key string) string {
	if f := in.Params.Flag(key); f != "" {
		return f
	}
	return key
}
