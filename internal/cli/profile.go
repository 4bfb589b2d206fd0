package cli

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"
)

// profileEnv names a file perflab writes a CPU profile of itself to, for
// finding where the generator spends its time (go tool pprof FILE).
const profileEnv = "PERFLAB_CPUPROFILE"

// memProfileEnv names a file perflab writes a heap profile of itself to,
// taken when its live heap peaked (go tool pprof -sample_index=inuse_space
// FILE): where the generator's memory goes at its heaviest, not after the
// run let go of it. FILE.metrics gets the runtime's memory classes
// (runtime/metrics /memory/classes/..., goroutines, heap goal) at the
// moment the memory the runtime holds from the system peaked: the Go part
// of the process's anonymous RSS, part by part.
const memProfileEnv = "PERFLAB_MEMPROFILE"

// traceEnv names a file perflab writes a runtime execution trace of itself
// to (go tool trace FILE): what every goroutine did and when, for finding
// what stalled the generator.
const traceEnv = "PERFLAB_TRACE"

// peakRSSEnv names a file perflab writes its own peak RSS to as it ends
// (VmHWM and RssAnon/RssFile from /proc/self/status), after the report:
// what a sampler outside misses when the peak comes in the last moments,
// and what the rusage of a parent counts wrongly once perflab has started
// components (a child's peak counts as its own).
const peakRSSEnv = "PERFLAB_PEAK_RSS"

// startProfile starts the profiles PERFLAB_CPUPROFILE, PERFLAB_MEMPROFILE
// and PERFLAB_TRACE ask for; the returned function stops them, and writes
// PERFLAB_PEAK_RSS. A profile that cannot start is reported and the run
// goes on without it.
func startProfile(stderr io.Writer) (stop func()) {
	stopCPU := startToFile(stderr, os.Getenv(profileEnv), pprof.StartCPUProfile, pprof.StopCPUProfile)
	stopTrace := startToFile(stderr, os.Getenv(traceEnv), trace.Start, trace.Stop)
	stopMem := startMemProfile(stderr, os.Getenv(memProfileEnv))
	return func() {
		stopMem()
		stopTrace()
		stopCPU()
		writePeakRSS(stderr, os.Getenv(peakRSSEnv))
	}
}

// writePeakRSS copies this process's memory lines of /proc/self/status
// (Vm*, Rss*) to path, unless path is "".
func writePeakRSS(stderr io.Writer, path string) {
	if path == "" {
		return
	}
	status, err := os.ReadFile("/proc/self/status")
	var out strings.Builder
	for line := range strings.Lines(string(status)) {
		if strings.HasPrefix(line, "Vm") || strings.HasPrefix(line, "Rss") {
			out.WriteString(line)
		}
	}
	if err == nil {
		err = os.WriteFile(path, []byte(out.String()), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "perflab: cannot write the peak RSS to %s: %v\n", path, err)
	}
}

// startToFile starts a recording (a CPU profile, a trace) into the file
// at path, unless path is "".
func startToFile(stderr io.Writer, path string, start func(io.Writer) error, end func()) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = start(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "perflab: cannot profile to %s: %v\n", path, err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		end()
		f.Close()
	}
}

// memPeakPoll is how often the live heap is read; memPeakStep is how much
// it must have grown (1/16) since the last profile for a new one.
// memProfileRate samples one allocation every 64 KiB on average, finer
// than the runtime's 512 KiB, so that a few thousand small buffers show.
const (
	memPeakPoll    = 250 * time.Millisecond
	memPeakStep    = 16
	memProfileRate = 64 << 10
)

// startMemProfile writes a heap profile to path when the live heap (as of
// the last garbage collection) reaches a new high, and at the end if it
// never did. A heap profile shows the heap of the collection before the
// last one, so the profile of a new high is written one collection later.
func startMemProfile(stderr io.Writer, path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	runtime.MemProfileRate = memProfileRate
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		w := memPeak{path: path, stderr: stderr}
		t := time.NewTicker(memPeakPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				w.end()
				return
			case <-t.C:
				w.poll()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// memPeak follows the live heap for startMemProfile.
type memPeak struct {
	path    string
	stderr  io.Writer
	peak    uint64 // the highest live heap seen
	due     uint64 // the collection after which to write a profile of it; 0: none
	written bool
	sample  [2]metrics.Sample
	classes memClasses
}

// memClasses keeps the runtime's memory classes at the moment the memory
// it holds from the system (total less released) was highest.
type memClasses struct {
	now, peak []metrics.Sample
	held      uint64 // total less released at the peak
}

// read samples the classes and keeps them if they are a new peak.
func (c *memClasses) read() {
	if c.now == nil {
		for _, d := range metrics.All() {
			if strings.HasPrefix(d.Name, "/memory/classes/") || d.Name == "/gc/heap/goal:bytes" ||
				d.Name == "/gc/heap/live:bytes" || d.Name == "/sched/goroutines:goroutines" {
				c.now = append(c.now, metrics.Sample{Name: d.Name})
			}
		}
		c.peak = make([]metrics.Sample, len(c.now))
	}
	metrics.Read(c.now)
	var total, released uint64
	for _, s := range c.now {
		switch s.Name {
		case "/memory/classes/total:bytes":
			total = s.Value.Uint64()
		case "/memory/classes/heap/released:bytes":
			released = s.Value.Uint64()
		}
	}
	if total-released > c.held {
		c.held = total - released
		copy(c.peak, c.now)
	}
}

// write writes the peak's classes to path, one "name value" a line.
func (c *memClasses) write(path string) error {
	var b strings.Builder
	for _, s := range c.peak {
		if s.Value.Kind() == metrics.KindUint64 {
			fmt.Fprintf(&b, "%s %d\n", s.Name, s.Value.Uint64())
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func (m *memPeak) poll() {
	m.classes.read()
	m.sample[0].Name, m.sample[1].Name = "/gc/heap/live:bytes", "/gc/cycles/total:gc-cycles"
	metrics.Read(m.sample[:])
	live, cycles := m.sample[0].Value.Uint64(), m.sample[1].Value.Uint64()
	if live > m.peak+m.peak/memPeakStep {
		m.peak, m.due = live, cycles+1
	}
	if m.due != 0 && cycles >= m.due {
		m.write()
		m.due = 0
	}
}

func (m *memPeak) end() {
	m.classes.read()
	if m.due != 0 || !m.written {
		m.write()
	}
	if err := m.classes.write(m.path + ".metrics"); err != nil {
		fmt.Fprintf(m.stderr, "perflab: cannot write memory classes: %v\n", err)
	}
}

func (m *memPeak) write() {
	m.written = true
	f, err := os.Create(m.path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(m.stderr, "perflab: cannot write a heap profile to %s: %v\n", m.path, err)
	}
}
