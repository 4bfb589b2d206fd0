package run

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/observe/promapi"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/secret"
)

// promSampling reads a cell's Prometheus-observed components after each of
// its phases: one worker, so that phases are read and stored in the order
// they ran, each once Prometheus has scraped the end of its window.
type promSampling struct {
	r       *runner
	cell    int
	sources []promSource
	taken   map[string]string    // component names in the cell's store → the plan component that owns them
	last    map[string]time.Time // the last sample time stored per component

	mu      sync.Mutex
	queue   []promPhase
	closed  bool
	wake    chan struct{} // a phase was queued or the queue closed
	stopped chan struct{} // closed when the worker has returned
}

// promSource is one plan component read from Prometheus.
type promSource struct {
	pc   plan.Component
	kind string
	src  *promapi.Source
}

// promPhase is the window of one phase to read.
type promPhase struct {
	profile    string
	start, end time.Time
}

// startPromSampling builds the sources of the cell's components with
// observe: prometheus, settles each one's step (recorded as a note),
// checks that each can be queried and starts the worker; nil when the
// cell has none. A source that cannot be built is a warning: its
// component has no figures. A source whose API cannot be reached, refuses
// the credentials or refuses a query is an error, before any load: the
// run would measure nothing of that component. A query without series yet
// is said on stderr; the phases' warnings record it if it stays so.
func (r *runner) startPromSampling(cell int, comps []*running) (*promSampling, error) {
	ps := &promSampling{r: r, cell: cell, taken: map[string]string{GeneratorName: ""}, last: map[string]time.Time{},
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	for _, rc := range comps {
		ps.taken[rc.comp.Name] = rc.comp.Name
		if rc.comp.Observe != plan.ObservePrometheus || rc.comp.Prometheus == nil {
			continue
		}
		src, err := promapi.New(promConfig(rc.comp))
		if err != nil {
			r.rec.warn(fmt.Sprintf("component %s: %v", rc.comp.Name, err))
			continue
		}
		note := src.Resolve(r.stop)
		r.rec.note(fmt.Sprintf("component %s is read from Prometheus at %s: %s", rc.comp.Name, secret.URL(rc.comp.Prometheus.URL), note))
		warns, err := src.Check(r.stop, time.Now())
		for _, w := range warns {
			r.events.Warn(fmt.Sprintf("component %s: %s", rc.comp.Name, w))
		}
		if err != nil {
			return nil, fmt.Errorf("component %s (observe: prometheus): %w; no load was sent: check its prometheus url, credentials and queries", rc.comp.Name, err)
		}
		ps.sources = append(ps.sources, promSource{pc: rc.comp, kind: componentKind(rc), src: src})
	}
	if len(ps.sources) == 0 {
		return nil, nil
	}
	go ps.work()
	return ps, nil
}

// promConfig is the promapi configuration of a plan component.
func promConfig(pc plan.Component) promapi.Config {
	p := pc.Prometheus
	cfg := promapi.Config{Name: pc.Name, URL: p.URL, BearerToken: p.BearerToken, Username: p.Username, Password: p.Password,
		Preset: p.Preset, Step: p.Step, RateWindow: p.RateWindow,
		Selector: promapi.Selector{Namespace: p.Namespace, Pod: p.Pod, Container: p.Container, GroupName: p.GroupName,
			Instance: p.Instance, Job: p.Job},
		Split: promapi.Split{Label: p.SplitLabel, Regex: p.SplitRegex}}
	if len(p.Queries) > 0 {
		cfg.Queries = map[string]string{}
		for _, q := range p.Queries {
			cfg.Queries[q.Metric] = q.Expr
		}
	}
	return cfg
}

// splits reports whether the plan component named name becomes components
// named after a capture group, known only once Prometheus answers.
func (ps *promSampling) splits(name string) bool {
	if ps == nil {
		return false
	}
	for _, s := range ps.sources {
		if s.pc.Name == name {
			return s.src.Splits()
		}
	}
	return false
}

// phaseEnded queues the window of a phase for reading.
func (ps *promSampling) phaseEnded(profile string, start, end time.Time) {
	if ps == nil {
		return
	}
	ps.mu.Lock()
	ps.queue = append(ps.queue, promPhase{profile: profile, start: start, end: end})
	ps.mu.Unlock()
	select {
	case ps.wake <- struct{}{}:
	default:
	}
}

// finish reads what is queued and returns when it is stored.
func (ps *promSampling) finish() {
	if ps == nil {
		return
	}
	ps.mu.Lock()
	ps.closed = true
	ps.mu.Unlock()
	select {
	case ps.wake <- struct{}{}:
	default:
	}
	<-ps.stopped
}

func (ps *promSampling) work() {
	defer close(ps.stopped)
	for {
		ps.mu.Lock()
		if len(ps.queue) == 0 {
			closed := ps.closed
			ps.mu.Unlock()
			if closed {
				return
			}
			<-ps.wake
			continue
		}
		ph := ps.queue[0]
		ps.queue = ps.queue[1:]
		ps.mu.Unlock()
		ps.read(ph)
	}
}

// read waits until Prometheus has scraped the phase's window (not after a
// Ctrl-C: then at once, and the phase is warned of), then queries every
// source and stores what it answered.
func (ps *promSampling) read(ph promPhase) {
	var by time.Time
	for _, s := range ps.sources {
		if t := s.src.DataBy(ph.end); t.After(by) {
			by = t
		}
	}
	early := ""
	timer := time.NewTimer(time.Until(by))
	select {
	case <-timer.C:
	case <-ps.r.stop.Done():
		timer.Stop()
		if time.Now().Before(by) {
			early = fmt.Sprintf("queried at %s UTC, before Prometheus had scraped the window's end (the run was stopped): the last steps may be missing",
				time.Now().UTC().Format("15:04:05"))
		}
	}
	for _, s := range ps.sources {
		res, err := s.src.Query(ps.r.kill, ph.start, ph.end)
		var warns []string
		if early != "" {
			warns = append(warns, early)
		}
		if err != nil {
			warns = append(warns, err.Error())
		} else {
			warns = append(append(warns, res.Warnings...), ps.store(s, res)...)
		}
		ps.warnPhase(s.pc.Name, ph.profile, warns)
	}
}

// store writes a source's series as samples, one tick per step, leaving
// out times already stored (the margins of two phases may overlap). It
// returns warnings about components it could not record.
func (ps *promSampling) store(s promSource, res *promapi.Result) []string {
	var warns []string
	ticks := map[time.Time]map[string][]results.Sample{}
	for name, metrics := range res.Series {
		if owner, ok := ps.taken[name]; ok && owner != s.pc.Name {
			warns = append(warns, fmt.Sprintf("component %s from Prometheus has the name of another component: left out", name))
			continue
		}
		if _, ok := ps.taken[name]; !ok {
			if err := ps.r.rec.Store.AddComponent(ps.component(s, name)); err != nil {
				ps.r.rec.Fail(err)
				continue
			}
			ps.taken[name] = s.pc.Name
		}
		for metric, pts := range metrics {
			for _, p := range pts {
				if !p.T.After(ps.last[name]) {
					continue
				}
				if ticks[p.T] == nil {
					ticks[p.T] = map[string][]results.Sample{}
				}
				ticks[p.T][name] = append(ticks[p.T][name], results.Sample{Metric: metric, Value: p.V})
			}
		}
	}
	times := make([]time.Time, 0, len(ticks))
	for t := range ticks {
		times = append(times, t)
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for _, t := range times {
		if err := ps.r.rec.Store.WriteSamples(ps.cell, t, ticks[t]); err != nil {
			ps.r.rec.Fail(err)
			return warns
		}
		ps.r.exportSamples(ps.cell, t, ticks[t])
		for name := range ticks[t] {
			ps.last[name] = t
		}
	}
	return warns
}

// component is the store's row of a component split off plan component s.
func (ps *promSampling) component(s promSource, name string) results.Component {
	group := s.pc.Group
	if group == "" && name != s.pc.Name {
		group = s.pc.Name
	}
	return results.Component{Cell: ps.cell, Name: name, Group: group, Kind: s.kind}
}

// warnPhase stores and shows a source's warnings about a phase.
func (ps *promSampling) warnPhase(component, profile string, warns []string) {
	if len(warns) == 0 {
		return
	}
	rows := make([]results.PhaseWarning, len(warns))
	for i, w := range warns {
		rows[i] = results.PhaseWarning{Cell: ps.cell, Profile: profile, Component: component, Message: w}
		ps.r.events.Warn(fmt.Sprintf("%s, profile %s: %s", component, profile, w))
	}
	if err := ps.r.rec.Store.AddPhaseWarnings(rows); err != nil {
		ps.r.rec.Fail(err)
	}
}

// componentKind is how a component is recorded: started, attached to, or
// only read from Prometheus.
func componentKind(rc *running) string {
	switch {
	case rc.proc != nil:
		return results.KindRun
	case rc.comp.Attach != nil:
		return results.KindAttach
	case rc.comp.Observe == plan.ObservePrometheus:
		return results.KindPrometheus
	}
	return results.KindAttach
}
