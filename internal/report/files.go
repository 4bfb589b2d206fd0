package report

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/perflab/perflab/internal/view"
)

// WriteFiles writes the report files of r into dir, its run directory:
// the charts (charts/), the file of every format that has one (report.md,
// report.html, summary.json) and each suggested size's Kubernetes
// resources (sizes/). It writes as many as it can, so that one that
// cannot be written (a full disk) does not cost the others. It returns the
// names of the formats' files it wrote; the error lists those that failed,
// which are left as they were (none, or an earlier run's).
func WriteFiles(dir string, r *view.Run) ([]string, error) {
	var errs []error
	var written []string
	if err := writeCharts(dir, r); err != nil {
		errs = append(errs, err)
	}
	for _, f := range Formats {
		if f.File == "" {
			continue
		}
		if err := writeFile(inDir(dir, f.File), func(w *os.File) error { return f.Run(w, r) }); err != nil {
			errs = append(errs, err)
			continue
		}
		written = append(written, f.File)
	}
	if err := writeSizeFiles(dir, r); err != nil {
		errs = append(errs, err)
	}
	return written, errors.Join(errs...)
}

// WriteSearchFiles writes a capacity search's own files into its run
// directory dir (search.md, search.json), as WriteFiles writes the run's;
// none for a run that is no search (s is nil).
func WriteSearchFiles(dir string, s *view.Search) ([]string, error) {
	var errs []error
	var written []string
	for _, f := range Formats {
		if f.SearchFile == "" || s == nil {
			continue
		}
		if err := writeFile(inDir(dir, f.SearchFile), func(w *os.File) error { return f.Search(w, s) }); err != nil {
			errs = append(errs, err)
			continue
		}
		written = append(written, f.SearchFile)
	}
	return written, errors.Join(errs...)
}

// ReadSearch gives r, a run read back from its directory, the capacity
// search that its search.json holds (SearchJSON wrote it), with the
// resources of the step at the highest sustainable rate; a run without
// one keeps none.
func ReadSearch(r *view.Run) error {
	js, _ := FormatNamed("json")
	f, err := os.Open(inDir(r.Dir, js.SearchFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", js.SearchFile, err)
	}
	defer f.Close()
	s, err := readSearchJSON(f)
	if err != nil {
		return err
	}
	s.Dir, s.Command = r.Dir, r.Command
	for _, st := range s.Steps {
		if st.Rate == s.Sustained && st.Pass {
			s.Resources = r.PhaseResources(st.Phase)
		}
	}
	r.Search = s
	return nil
}

// writeCharts draws the run's charts, writes each as charts/ID.svg in the
// run directory and keeps them in r, for report.md to link and
// report.html to show inline.
func writeCharts(dir string, r *view.Run) error {
	charts := Charts(r)
	if len(charts) == 0 {
		return nil
	}
	if err := os.MkdirAll(inDir(dir, "charts"), 0o755); err != nil {
		return fmt.Errorf("cannot write charts: %w", err)
	}
	for _, pc := range charts {
		for _, c := range pc.Charts {
			if err := writeBytes(inDir(dir, c.File()), c.SVG); err != nil {
				return fmt.Errorf("cannot write charts: %w", err)
			}
		}
	}
	r.Charts = charts
	return nil
}

// WrittenCharts are the charts of r whose files the run directory dir
// holds: those a Markdown report rendered again may link.
func WrittenCharts(dir string, r *view.Run) []view.PhaseCharts {
	var out []view.PhaseCharts
	for _, pc := range Charts(r) {
		var kept []view.Chart
		for _, c := range pc.Charts {
			if _, err := os.Stat(inDir(dir, c.File())); err == nil {
				kept = append(kept, c)
			}
		}
		if len(kept) > 0 {
			pc.Charts = kept
			out = append(out, pc)
		}
	}
	return out
}

// writeSizeFiles writes each suggested size's Kubernetes resources into
// the run directory's sizes/.
func writeSizeFiles(dir string, r *view.Run) error {
	files, err := SizeFiles(r)
	if err != nil {
		return err
	}
	for _, f := range files {
		path := inDir(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("cannot write %s: %w", f.Name, err)
		}
		if err := writeBytes(path, f.Data); err != nil {
			return fmt.Errorf("cannot write %s: %w", f.Name, err)
		}
	}
	return nil
}

// inDir is the path of the file name inside dir: a name cannot escape it
// ("../x" is dir/x), as results.Run.Path.
func inDir(dir, name string) string {
	return filepath.Join(dir, filepath.Clean(string(filepath.Separator)+name))
}

// writeFile fills path with render, atomically: into a temporary file of
// the same directory, renamed over path once whole. A render or a write
// that fails (a full disk) leaves path as it was, and no partial or empty
// file behind.
func writeFile(path string, render func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", filepath.Base(path), err)
	}
	err = render(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("cannot write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// WriteFile writes what render writes into the file at path, whole or
// not at all (a temporary file beside it, renamed), making its
// directory: a run's reports and the files for CI (--junit, --csv).
func WriteFile(path string, render func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return writeFile(path, func(f *os.File) error { return render(f) })
}

// writeBytes is writeFile of data.
func writeBytes(path string, data []byte) error {
	return writeFile(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}
