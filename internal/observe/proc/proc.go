// Package proc samples a process tree from /proc: a component's root process
// and all its descendants, found anew at every sample by walking /proc and
// each process's parent pid, because children come and go. It sums CPU
// cores, resident memory, threads, open file descriptors, storage reads and
// writes per second, and counts the processes.
//
// # Processes that exit between samples
//
// CPU is counted per process as utime+stime (its own time) plus
// cutime+cstime (the time of the children it has reaped), and storage I/O
// from /proc/pid/io, which the kernel likewise folds into the reaping parent.
// Between two samples the tree's CPU time is then:
//
//   - for a process seen both times: the growth of its own time, plus the
//     growth of its reaped-children time less what was already counted for
//     its children that disappeared since the previous sample;
//   - for a process seen only now: all of it (it started after the previous
//     sample, and so did the children it has reaped).
//
// So a child that exits and is reaped by a tree member loses nothing, not
// even a child that lived and died between two samples (a short-lived helper
// process), and nothing is counted twice. Counting only the root's
// cutime/cstime instead would count a long-lived child's whole life at the
// moment it exits, and nothing before; counting only utime+stime would lose
// the last moments of every exiting child and all of a short-lived one.
//
// What is still lost: the time of a process that leaves the tree without
// being reaped by a member (it daemonised, or its parent died first and it
// was reparented to init) from its last sample on, and the time of children
// reaped by a parent that ignores SIGCHLD. A process that joins the tree
// with a history (reparented to a subreaper inside the tree) is counted as
// if all its time were new. Storage I/O follows the same rules.
//
// Processes that vanish while a sample reads them are skipped. When
// /proc/pid/io or /proc/pid/fd of a member cannot be read (another user's
// process), the storage rates or the descriptor count are left out of that
// sample rather than reported as a partial sum.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/perflab/perflab/internal/observe"
)

// ErrGone is wrapped by the errors of New and Sample when the root process
// no longer exists: it exited (also when it is a zombie waiting to be
// reaped) or its pid now belongs to another process. It is observe.ErrGone.
var ErrGone = observe.ErrGone

// Tree is a Source for a process and its descendants.
type Tree struct {
	fs       procfs.FS
	pid      int
	rootOnly bool
	start    uint64 // the root's start time in clock ticks after boot
	prev     *snapshot
}

// Option changes what a Tree counts.
type Option func(*Tree)

// RootOnly makes a Tree count its root process alone: no descendants, and
// not the CPU time of the children it reaped. It is for a process whose
// children are not part of it: perflab itself, whose children are the
// components it started, and whose reaped-children time would otherwise
// jump by a component's whole CPU time when that component stops. The
// storage rates are left out: /proc/pid/io folds reaped children in too.
func RootOnly() Option { return func(t *Tree) { t.rootOnly = true } }

var _ observe.Source = (*Tree)(nil)

// key names a process across samples; the start time tells a reused pid.
type key struct {
	pid   int
	start uint64
}

// member is what one sample knows of one process of the tree.
type member struct {
	parent      key // zero for the root
	stat        procfs.ProcStat
	own, reaped float64 // CPU seconds: utime+stime, cutime+cstime
	read, write float64 // /proc/pid/io read_bytes, write_bytes
	fds         int
}

type snapshot struct {
	at      time.Time
	members map[key]member
	ioOK    bool // /proc/pid/io was readable for every member
	fdsOK   bool // /proc/pid/fd was readable for every member
}

// New returns a Tree rooted at pid, reading the proc file system mounted at
// root ("" means /proc). The error wraps ErrGone when there is no such
// process.
func New(root string, pid int, opts ...Option) (*Tree, error) {
	if root == "" {
		root = procfs.DefaultMountPoint
	}
	pfs, err := procfs.NewFS(root)
	if err != nil {
		return nil, fmt.Errorf("cannot open proc file system %s: %w", root, err)
	}
	t := &Tree{fs: pfs, pid: pid}
	for _, o := range opts {
		o(t)
	}
	st, err := t.rootStat()
	if err != nil {
		return nil, err
	}
	t.start = st.Starttime
	return t, nil
}

// Name implements observe.Source.
func (t *Tree) Name() string { return fmt.Sprintf("proc %d", t.pid) }

// PID returns the root process's pid.
func (t *Tree) PID() int { return t.pid }

// Sample implements observe.Source: Processes, RSSBytes, Threads, OpenFDs,
// and from the second sample on CPUCores, ReadBytesPerS and WriteBytesPerS.
func (t *Tree) Sample(ctx context.Context, now time.Time) ([]observe.Point, error) {
	root, err := t.rootStat()
	if err != nil {
		return nil, err
	}
	if root.Starttime != t.start {
		return nil, fmt.Errorf("cannot sample process %d: its pid was reused: %w", t.pid, ErrGone)
	}
	nodes := []node{{stat: root}}
	if !t.rootOnly {
		byParent, err := t.children(ctx)
		if err != nil {
			return nil, err
		}
		nodes = descendants(root, byParent)
	}
	snap, err := t.read(nodes, now)
	if err != nil {
		return nil, err
	}
	points := gauges(snap)
	if t.prev != nil {
		points = append(points, rates(t.prev, snap)...)
	}
	t.prev = snap
	return points, nil
}

// rootStat reads the root's stat, failing with ErrGone when it has exited.
func (t *Tree) rootStat() (procfs.ProcStat, error) {
	st, err := t.stat(t.pid)
	switch {
	case err != nil && vanished(err):
		return st, fmt.Errorf("cannot find process %d: %w", t.pid, ErrGone)
	case err != nil:
		return st, fmt.Errorf("cannot read process %d: %w", t.pid, err)
	case st.State == "Z" || st.State == "X":
		return st, fmt.Errorf("cannot sample process %d: it exited: %w", t.pid, ErrGone)
	}
	return st, nil
}

func (t *Tree) stat(pid int) (procfs.ProcStat, error) {
	p, err := t.fs.Proc(pid)
	if err != nil {
		return procfs.ProcStat{}, err
	}
	return p.Stat()
}

// children reads the stat of every process, grouped by parent pid. A process
// whose stat cannot be read has vanished (or is not ours to see) and is
// left out.
func (t *Tree) children(ctx context.Context) (map[int][]procfs.ProcStat, error) {
	procs, err := t.fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("cannot list processes: %w", err)
	}
	byParent := make(map[int][]procfs.ProcStat)
	for _, p := range procs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cannot list processes: %w", err)
		}
		if st, err := p.Stat(); err == nil {
			byParent[st.PPID] = append(byParent[st.PPID], st)
		}
	}
	return byParent, nil
}

// node is a process of the tree with its parent's key.
type node struct {
	stat   procfs.ProcStat
	parent key
}

// descendants returns root and everything below it, root first.
func descendants(root procfs.ProcStat, byParent map[int][]procfs.ProcStat) []node {
	nodes := []node{{stat: root}}
	seen := map[int]bool{root.PID: true}
	for i := 0; i < len(nodes); i++ {
		parent := nodes[i].stat
		for _, st := range byParent[parent.PID] {
			if !seen[st.PID] {
				seen[st.PID] = true
				nodes = append(nodes, node{stat: st, parent: key{parent.PID, parent.Starttime}})
			}
		}
	}
	return nodes
}

// read completes the nodes with their descriptors and I/O into a snapshot.
func (t *Tree) read(nodes []node, now time.Time) (*snapshot, error) {
	snap := &snapshot{at: now, members: make(map[key]member, len(nodes)), ioOK: true, fdsOK: true}
	for i, n := range nodes {
		m := member{parent: n.parent, stat: n.stat, own: n.stat.CPUTime()}
		if !t.rootOnly {
			// The library converts clock ticks; cutime and cstime are ticks too.
			m.reaped = procfs.ProcStat{UTime: uint(n.stat.CUTime), STime: uint(n.stat.CSTime)}.CPUTime()
		}
		gone, err := t.readFiles(&m, snap)
		switch {
		case gone && i == 0:
			return nil, fmt.Errorf("cannot read process %d: %w", t.pid, ErrGone)
		case gone:
			continue
		case err != nil:
			return nil, err
		}
		snap.members[key{n.stat.PID, n.stat.Starttime}] = m
	}
	return snap, nil
}

// readFiles reads /proc/pid/fd and /proc/pid/io into m. It reports a process
// that has vanished; a file it may not read clears the snapshot's flag.
func (t *Tree) readFiles(m *member, snap *snapshot) (gone bool, err error) {
	pid := m.stat.PID
	p, err := t.fs.Proc(pid)
	if err != nil {
		return true, nil
	}
	if fds, err := p.FileDescriptorsLen(); err == nil {
		m.fds = fds
	} else if gone, err := t.unreadable(pid, "fd", err); gone || err != nil {
		return gone, err
	} else {
		snap.fdsOK = false
	}
	if t.rootOnly {
		snap.ioOK = false
	} else if pio, err := p.IO(); err == nil {
		m.read, m.write = float64(pio.ReadBytes), float64(pio.WriteBytes)
	} else if gone, err := t.unreadable(pid, "io", err); gone || err != nil {
		return gone, err
	} else {
		snap.ioOK = false
	}
	return false, nil
}

// unreadable sorts an error reading /proc/pid/<file>: the process is gone,
// or the file is not readable (permission, or no such file in this kernel),
// or else the error is returned.
func (t *Tree) unreadable(pid int, file string, err error) (gone bool, _ error) {
	if _, statErr := t.fs.Proc(pid); statErr != nil {
		return true, nil
	}
	if vanished(err) || errors.Is(err, fs.ErrPermission) {
		return false, nil
	}
	return false, fmt.Errorf("cannot read /proc/%d/%s: %w", pid, file, err)
}

// vanished says whether err means the process (or its file) no longer exists.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

func gauges(s *snapshot) []observe.Point {
	var rss, threads, fds float64
	for _, m := range s.members {
		rss += float64(m.stat.ResidentMemory())
		threads += float64(m.stat.NumThreads)
		fds += float64(m.fds)
	}
	points := []observe.Point{
		{Metric: observe.Processes, Value: float64(len(s.members))},
		{Metric: observe.RSSBytes, Value: rss},
		{Metric: observe.Threads, Value: threads},
	}
	if s.fdsOK {
		points = append(points, observe.Point{Metric: observe.OpenFDs, Value: fds})
	}
	return points
}

// rates turns two snapshots into CPU cores and storage bytes per second,
// following the rules in the package comment.
func rates(prev, cur *snapshot) []observe.Point {
	dt := cur.at.Sub(prev.at).Seconds()
	if dt <= 0 {
		return nil
	}
	// Totals already counted for the processes that disappeared, charged to
	// the nearest ancestor still present: its reaped counters may hold them
	// again.
	counted := map[key]member{}
	for k, m := range prev.members {
		if _, ok := cur.members[k]; !ok {
			a := survivingAncestor(prev, cur, k)
			c := counted[a]
			c.reaped += m.own + m.reaped
			c.read, c.write = c.read+m.read, c.write+m.write
			counted[a] = c
		}
	}
	var cpu, read, write float64
	for k, m := range cur.members {
		p, ok := prev.members[k]
		if !ok {
			cpu, read, write = cpu+m.own+m.reaped, read+m.read, write+m.write
			continue
		}
		c := counted[k]
		cpu += max(0, m.own-p.own) + max(0, m.reaped-p.reaped-c.reaped)
		read += max(0, m.read-p.read-c.read)
		write += max(0, m.write-p.write-c.write)
	}
	points := []observe.Point{{Metric: observe.CPUCores, Value: cpu / dt}}
	if prev.ioOK && cur.ioOK {
		points = append(points,
			observe.Point{Metric: observe.ReadBytesPerS, Value: read / dt},
			observe.Point{Metric: observe.WriteBytesPerS, Value: write / dt})
	}
	return points
}

// survivingAncestor returns the nearest ancestor of k (as prev knew it) that
// is still in cur, or the zero key.
func survivingAncestor(prev, cur *snapshot, k key) key {
	for a := prev.members[k].parent; a != (key{}); a = prev.members[a].parent {
		if _, ok := cur.members[a]; ok {
			return a
		}
	}
	return key{}
}
