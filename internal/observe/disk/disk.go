// Package disk samples the space a component uses under its data
// directories, the way du(1) counts it: allocated blocks (st_blocks × 512,
// so a sparse file counts what it occupies, not its length), each inode once
// however many hard links it has, symbolic links not followed (the listed
// directories themselves are resolved, nothing below them).
//
// Files that vanish during the walk (a TSDB compacting its blocks) are
// skipped. A listed directory that does not exist counts 0: components
// create their data directories after they start.
package disk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

// Observer makes a Usage of each component with data directories.
type Observer struct{}

var _ observe.Observer = Observer{}

// Metric is what a Usage samples. The reports have always shown it as the
// space used at the end of the window and at most, and compared it as
// "disk"; the name is in package observe because the Prometheus presets
// give it too, for a host's root filesystem.
var Metric = observe.Metric{Name: observe.DiskBytes, Kind: observe.Level, Unit: observe.Bytes,
	Title: "Disk", Label: "Used", Compare: "disk"}

// Metrics implements observe.Observer.
func (Observer) Metrics() []observe.Metric { return []observe.Metric{Metric} }

// Source implements observe.Observer: nil without data directories.
func (Observer) Source(c observe.Component) observe.Source {
	if len(c.DataDirs) == 0 {
		return nil
	}
	return New(c.DataDirs...)
}

// Usage is a Source for the space used under a set of directories.
type Usage struct {
	dirs []string
}

var _ observe.Source = (*Usage)(nil)

// New returns a Usage of dirs; directories listed twice, or inside another
// listed one, are counted once.
func New(dirs ...string) *Usage { return &Usage{dirs: dirs} }

// Name implements observe.Source.
func (u *Usage) Name() string { return "disk " + strings.Join(u.dirs, ", ") }

// Sample implements observe.Source: DiskBytes, always. Entries that cannot
// be read for another reason than vanishing (permission) are left out; the
// sample then comes with an error naming the first of them, besides the sum
// of the rest.
func (u *Usage) Sample(ctx context.Context, _ time.Time) ([]observe.Point, error) {
	w := walker{ctx: ctx, seen: map[inode]bool{}}
	for _, dir := range u.dirs {
		root, err := filepath.EvalSymlinks(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			w.fail(dir, err)
			continue
		}
		if err := filepath.WalkDir(root, w.visit); err != nil {
			return nil, fmt.Errorf("cannot walk %s: %w", dir, err)
		}
	}
	points := []observe.Point{{Metric: observe.DiskBytes, Value: float64(w.bytes)}}
	if w.failed > 0 {
		return points, fmt.Errorf("cannot read %d entries under %s, first %w", w.failed, strings.Join(u.dirs, ", "), w.first)
	}
	return points, nil
}

type inode struct {
	dev, ino uint64
}

// stat is what a walk reads of an entry's stat_t (stat_unix.go).
type stat struct {
	dev, ino, nlink uint64
	blocks          int64
}

// walker adds up one sample's walk.
type walker struct {
	ctx    context.Context
	seen   map[inode]bool // directories and multiply linked files
	bytes  int64
	n      int
	failed int
	first  error
}

func (w *walker) fail(path string, err error) {
	if w.failed == 0 {
		w.first = fmt.Errorf("%s: %w", path, err)
	}
	w.failed++
}

// visit is the WalkDir function: it counts an entry's blocks once.
func (w *walker) visit(path string, d fs.DirEntry, err error) error {
	if w.n++; w.n%1024 == 0 && w.ctx.Err() != nil {
		return w.ctx.Err()
	}
	if err != nil { // the entry, or reading a directory, failed
		if !errors.Is(err, fs.ErrNotExist) {
			w.fail(path, err)
		}
		return nil
	}
	info, err := d.Info() // lstat: a symbolic link counts its own blocks
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.fail(path, err)
		}
		return nil
	}
	st, ok := statOf(info)
	if !ok {
		return fmt.Errorf("cannot read the blocks of %s: no stat_t", path)
	}
	if d.IsDir() || st.nlink > 1 {
		k := inode{dev: st.dev, ino: st.ino}
		if w.seen[k] {
			if d.IsDir() {
				return fs.SkipDir // a listed directory inside another
			}
			return nil
		}
		w.seen[k] = true
	}
	w.bytes += st.blocks * 512
	return nil
}
