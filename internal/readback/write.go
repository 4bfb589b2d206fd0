package readback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// WriteReports writes the run's report files into its directory: as many
// as it can, so that one that cannot be written (a full disk) does not cost
// the others. It returns the names of the report files it wrote
// (report.md, report.html, summary.json); the error lists those that
// failed, which are left as they were (none, or an earlier run's).
func WriteReports(store *results.Run, r *view.Run) ([]string, error) {
	var errs []error
	var written []string
	if err := writeCharts(store, r); err != nil {
		errs = append(errs, err)
	}
	for _, f := range []struct {
		name   string
		render func(*os.File) error
	}{
		{"report.md", func(f *os.File) error { return report.Markdown(f, r) }},
		{"report.html", func(f *os.File) error { return report.HTML(f, r) }},
		{"summary.json", func(f *os.File) error { return report.JSON(f, r) }},
	} {
		if err := WriteFile(store.Path(f.name), f.render); err != nil {
			errs = append(errs, err)
			continue
		}
		written = append(written, f.name)
	}
	if err := writeSizeFiles(store, r); err != nil {
		errs = append(errs, err)
	}
	return written, errors.Join(errs...)
}

// WriteFile fills path with render, atomically: into a temporary file of
// the same directory, renamed over path once whole. A render or a write
// that fails (a full disk) leaves path as it was, and no partial or empty
// file behind.
func WriteFile(path string, render func(*os.File) error) error {
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

// writeBytes is WriteFile of data.
func writeBytes(path string, data []byte) error {
	return WriteFile(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}
