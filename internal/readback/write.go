package readback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
)

// WriteReports writes the run's report files into its directory: as many
// as it can, so that one that cannot be written (a full disk) does not cost
// the others; the error lists those that failed.
func WriteReports(store *results.Run, r *report.Run) error {
	var errs []error
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
		}
	}
	if err := writeSizeFiles(store, r); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// WriteFile creates path and fills it with render.
func WriteFile(path string, render func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", filepath.Base(path), err)
	}
	err = render(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", filepath.Base(path), err)
	}
	return nil
}
