package testutil

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// What Machine reads of the kernel: CPU time of this process's tree,
// /proc/stat, /proc/pressure/cpu; and its probe of a sleeper's lag.

// clockTicks is USER_HZ, the unit of /proc/stat: 100 on every Linux
// architecture Go builds for.
const clockTicks = 100

// treeCPU is the CPU time of this process, of its children that ended
// and were waited for (theirs holds their own children's), and of every
// descendant still running (with its own ended children).
func treeCPU() time.Duration {
	ticks := 0.0
	for _, p := range descendants(os.Getpid(), processes()) {
		ticks += p.ticks
	}
	return selfAndChildrenCPU() + time.Duration(ticks/clockTicks*float64(time.Second))
}

// proc is what /proc/PID/stat says of a process: its parent and its CPU
// time and its ended children's (utime, stime, cutime, cstime).
type proc struct {
	pid, ppid int
	ticks     float64
}

// processes lists every process /proc shows.
func processes() []proc {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ps []proc
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // ended since the listing
		}
		if p, ok := parseProcStat(string(b)); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// parseProcStat reads /proc/PID/stat: "pid (comm) state ppid ...", the
// times fields 14–17; comm may hold spaces and parentheses.
func parseProcStat(text string) (proc, bool) {
	pid, rest, ok := strings.Cut(text, " (")
	if i := strings.LastIndexByte(rest, ')'); ok && i >= 0 {
		f := strings.Fields(rest[i+1:]) // f[0] is field 3, the state
		if len(f) >= 15 {
			p := proc{}
			p.pid, _ = strconv.Atoi(pid)
			p.ppid, _ = strconv.Atoi(f[1])
			for _, s := range f[11:15] {
				v, _ := strconv.ParseFloat(s, 64)
				p.ticks += v
			}
			return p, true
		}
	}
	return proc{}, false
}

// descendants are the processes below root in ps.
func descendants(root int, ps []proc) []proc {
	children := map[int][]proc{}
	for _, p := range ps {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []proc
	for next := children[root]; len(next) > 0; {
		p := next[0]
		next = append(next[1:], children[p.pid]...)
		out = append(out, p)
	}
	return out
}

// cpuWaiting is the kernel's total time in which some task waited for a
// CPU, or -1 where it keeps none.
func cpuWaiting() time.Duration {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return -1
	}
	return parsePressure(string(b))
}

// parsePressure reads the "some" line's total (µs) of a pressure file.
func parsePressure(text string) time.Duration {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				if us, err := strconv.ParseInt(v, 10, 64); err == nil {
					return time.Duration(us) * time.Microsecond
				}
			}
		}
	}
	return -1
}

// cpuTicks is the first line of /proc/stat: all CPUs' time, busy (user,
// nice, system, irq, softirq; guest time is within user) and stolen.
type cpuTicks struct{ busy, steal float64 }

func (a cpuTicks) sub(b cpuTicks) cpuTicks { return cpuTicks{a.busy - b.busy, a.steal - b.steal} }

func readCPUTicks() cpuTicks {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTicks{}
	}
	return parseCPUTicks(string(b))
}

// parseCPUTicks reads the "cpu" line of /proc/stat: user nice system
// idle iowait irq softirq steal ...
func parseCPUTicks(text string) cpuTicks {
	line, _, _ := strings.Cut(text, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTicks{}
	}
	v := make([]float64, 8)
	for i := range v {
		v[i], _ = strconv.ParseFloat(f[i+1], 64)
	}
	return cpuTicks{busy: v[0] + v[1] + v[2] + v[5] + v[6], steal: v[7]}
}

// lagProbe is a goroutine that sleeps period at a time and counts how
// late it woke, in buckets a quarter of a binary order apart from 1 µs:
// its quantiles are a bucket's upper edge, at most 19 % high.
type lagProbe struct {
	mu     sync.Mutex
	counts [lagBuckets]int64
	n      int64
	done   chan struct{}
	once   sync.Once
}

const lagBuckets = 4 * 28 // up to 2^28 µs, 4.5 minutes

func startLagProbe(period time.Duration) *lagProbe {
	p := &lagProbe{done: make(chan struct{})}
	go func() {
		tick := time.NewTimer(period)
		defer tick.Stop()
		for due := time.Now().Add(period); ; due = time.Now().Add(period) {
			select {
			case <-p.done:
				return
			case <-tick.C:
				p.record(time.Since(due))
				tick.Reset(period)
			}
		}
	}()
	return p
}

func (p *lagProbe) stop() { p.once.Do(func() { close(p.done) }) }

func (p *lagProbe) record(lag time.Duration) {
	i := 0
	if us := float64(lag) / float64(time.Microsecond); us > 1 {
		i = min(lagBuckets-1, int(4*math.Log2(us)))
	}
	p.mu.Lock()
	p.counts[i]++
	p.n++
	p.mu.Unlock()
}

// quantile is the upper edge of the bucket that holds quantile q, or 0
// before the first wake.
func (p *lagProbe) quantile(q float64) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	rank := max(1, int64(math.Ceil(q*float64(p.n))))
	var seen int64
	for i, c := range p.counts {
		if seen += c; seen >= rank {
			return time.Duration(math.Exp2(float64(i+1)/4) * float64(time.Microsecond)).Round(time.Microsecond)
		}
	}
	return 0
}
