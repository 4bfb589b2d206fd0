package readback

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// writeCharts draws the run's charts, writes each as charts/ID.svg in the
// run directory and keeps them in r, for report.md to link and
// report.html to show inline.
func writeCharts(store *results.Run, r *view.Run) error {
	charts := report.Charts(r)
	if len(charts) == 0 {
		return nil
	}
	if err := os.MkdirAll(store.Path("charts"), 0o755); err != nil {
		return fmt.Errorf("cannot write charts: %w", err)
	}
	for _, pc := range charts {
		for _, c := range pc.Charts {
			if err := writeBytes(store.Path(c.File()), c.SVG); err != nil {
				return fmt.Errorf("cannot write charts: %w", err)
			}
		}
	}
	r.Charts = charts
	return nil
}

// WrittenCharts are the charts of r whose files the run directory holds:
// those a Markdown report rendered again may link.
func WrittenCharts(dir string, r *view.Run) []view.PhaseCharts {
	charts := report.Charts(r)
	var out []view.PhaseCharts
	for _, pc := range charts {
		var kept []view.Chart
		for _, c := range pc.Charts {
			if _, err := os.Stat(filepath.Join(dir, c.File())); err == nil {
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
