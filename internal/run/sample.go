package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/cgroup"
	"github.com/perflab/perflab/internal/observe/observers"
	"github.com/perflab/perflab/internal/observe/proc"
	"github.com/perflab/perflab/internal/observe/scrape"
	"github.com/perflab/perflab/internal/observe/self"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
)

// GeneratorName is the component that is perflab itself.
const GeneratorName = "perflab"

// observed is a component with the sources that sample it.
type observed struct {
	comp    results.Component
	sources []observe.Source
}

// sampling samples a cell's components into the run store until stopped.
type sampling struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// startSampling records comps as the components of cell and samples them
// every interval. Sample write errors go to sink; sampling errors are
// warnings, shown and kept as events.
func (r *runner) startSampling(cell int, interval time.Duration, comps []observed) (*sampling, error) {
	store := r.rec.Store
	sources := map[string][]observe.Source{}
	for _, o := range comps {
		if err := store.AddComponent(o.comp); err != nil {
			return nil, err
		}
		if len(o.sources) > 0 {
			sources[o.comp.Name] = o.sources
		}
	}
	s := &observe.Sampler{Interval: interval, Components: sources,
		Sink: func(t time.Time, points map[string][]observe.Point) {
			out := make(map[string][]results.Sample, len(points))
			for name, ps := range points {
				for _, p := range ps {
					out[name] = append(out[name], results.Sample{Metric: p.Metric, Value: p.Value})
				}
			}
			if err := store.WriteSamples(cell, t, out); err != nil {
				r.rec.Fail(err)
			}
			r.exportSamples(cell, t, out)
		},
		OnError: func(name string, err error) {
			msg := fmt.Sprintf("cannot sample %s: %v", name, err)
			r.events.Warn(msg)
			_ = store.AddEvent(results.Event{Kind: "error", Message: msg})
		},
		OnGone: func(string, error) {}, // the crash watch reports exits, with their status
	}
	ctx, cancel := context.WithCancel(context.Background())
	sm := &sampling{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(sm.done)
		if err := s.Run(ctx); err != nil {
			r.rec.Fail(fmt.Errorf("cannot sample: %w", err))
		}
	}()
	return sm, nil
}

// stop takes the last sample and returns once it is stored.
func (s *sampling) stop() {
	s.cancel()
	<-s.done
}

// generator is perflab itself as a component of cell: its CPU, memory,
// available cores and scheduler latency tell when a run was client-bound.
func generator(cell int) observed {
	o := observed{comp: results.Component{Cell: cell, Name: GeneratorName, Kind: results.KindGenerator, PID: os.Getpid()}}
	if s, err := self.New(""); err == nil {
		o.sources = append(o.sources, s)
	}
	return o
}

// processSources samples process pid with its descendants, and its cgroup:
// cgroupDir when given (an attached component named it), else the
// process's own cgroup when it has one that holds nothing of perflab.
func processSources(pid int, cgroupDir string) []observe.Source {
	var out []observe.Source
	if t, err := proc.New("", pid); err == nil {
		out = append(out, t)
	}
	if cgroupDir == "" {
		if root := cgroupRoot(); root != "" {
			if dir, own, err := cgroup.Own("/proc", root, pid, os.Getpid()); err == nil && own {
				cgroupDir = dir
			}
		}
	}
	if cgroupDir != "" {
		if !filepath.IsAbs(cgroupDir) {
			cgroupDir = filepath.Join(cgroupRoot(), cgroupDir)
		}
		out = append(out, cgroup.New(cgroupDir))
	}
	return out
}

// endpointSources samples a component's /metrics, then what the
// observers (package observers) find of it to sample, such as the space
// under its data directories.
func endpointSources(pc plan.Component, pid int, interval time.Duration) []observe.Source {
	var out []observe.Source
	if pc.Metrics != "" {
		names := pc.MetricNames
		if pc.MetricsPreset != "" {
			names = append(slices.Clone(names), observe.ServingEngines[pc.MetricsPreset].Names()...)
		}
		out = append(out, scrape.New(pc.Metrics, interval, names))
	}
	return append(out, observers.Sources(observe.Component{Name: pc.Name, PID: pid, DataDirs: pc.DataDirs})...)
}

// cgroupRoot is where the cgroup v2 hierarchy is mounted (cgroup.Root).
func cgroupRoot() string { return cgroup.Root() }
