package plan

import "time"

// Defaults and limits. Every default the format has is set here, in
// newPlan, newComponent, newReady, newWorkload and VUs.WithDefaults.
const (
	DefaultSampleInterval = time.Second
	DefaultResultInterval = time.Second
	// MinResultInterval and MaxResultInterval bound result_interval:
	// below, an interval of a few operations says nothing and every one
	// is a write to the store; above, a run of minutes has too few for a
	// time series or an interval of a comparison.
	MinResultInterval   = 100 * time.Millisecond
	MaxResultInterval   = time.Minute
	DefaultStopGrace    = 10 * time.Second
	DefaultReadyTimeout = 30 * time.Second
	DefaultGrace        = 5 * time.Second // in-flight operations at the end of a workload
	DefaultVUsMin       = 10              // perflab http's --vus-min too
	DefaultVUsMax       = 1000            // perflab http's --vus-max too

	// MaxCells bounds the matrix: a plan whose matrix has more cells is invalid.
	MaxCells = 10000
	// MaxRepeat bounds repeat: more repetitions than this are a typo, not a plan.
	MaxRepeat = 100
)

// newPlan returns a plan with the plan-level defaults.
func newPlan(file, dir string) *Plan {
	return &Plan{File: file, Dir: dir, SampleInterval: DefaultSampleInterval, ResultInterval: DefaultResultInterval,
		StopGrace: DefaultStopGrace, Repeat: 1, at: where{}}
}

// newRun returns a run section with the plan's stop grace.
func newRun(p *Plan) *Run {
	return &Run{StopGrace: p.StopGrace, at: where{}}
}

// newReady returns a probe with the default timeout.
func newReady() *Ready {
	return &Ready{Timeout: DefaultReadyTimeout, at: where{}}
}

// newWorkload returns a workload with the defaults that do not depend on
// other fields; VUs.WithDefaults does the rest once the model is known.
func newWorkload() Workload {
	return Workload{Grace: DefaultGrace, at: where{}}
}

// WithDefaults fills the VU pool bounds of an open-model workload that
// were not given (a plan's vus, perflab http's --vus-min and --vus-max):
// min is DefaultVUsMin (at most max), max is DefaultVUsMax (at least min).
func (v VUs) WithDefaults(minSet, maxSet bool) VUs {
	switch {
	case !minSet && !maxSet:
		return VUs{Min: DefaultVUsMin, Max: DefaultVUsMax}
	case !minSet:
		v.Min = min(DefaultVUsMin, v.Max)
	case !maxSet:
		v.Max = max(DefaultVUsMax, v.Min)
	}
	return v
}
