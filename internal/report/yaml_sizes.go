package report

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// SizeFile is one size's Kubernetes resources as a file of the run
// directory.
type SizeFile struct {
	Name string // e.g. "sizes/default-small.yaml"
	Data []byte
}

// SizeFiles is a file per suggested size of every cell (of every
// combination, in a repeated run: InsightCells): the resources
// blocks of its components under a comment that says where they come from.
func SizeFiles(r *view.Run) ([]SizeFile, error) {
	var out []SizeFile
	for _, c := range r.InsightCells() {
		if c.Insights == nil {
			continue
		}
		for _, t := range c.Insights.Sizes {
			y, err := t.YAML()
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "# perflab: suggested size %q of run %s, cell %s", t.Size, r.Name, cellFileLabel(c))
			if c.Repetitions > 0 {
				fmt.Fprintf(&b, " (the samples of its %d repetitions, pooled)", c.Repetitions)
			}
			b.WriteString("\n")
			fmt.Fprintf(&b, "# load: %s\n", t.Load)
			for _, n := range heldNotes(t) {
				fmt.Fprintf(&b, "# %s: %s\n", n.verdict, strings.ReplaceAll(n.why, "\n", " "))
			}
			if t.Verified != nil {
				fmt.Fprintf(&b, "# verified (perflab size --verify): %s\n", strings.ReplaceAll(t.Verified.Annotation(), "\n", " "))
			}
			fmt.Fprintf(&b, "# strategy %s: %s\n", c.Insights.Strategy.Name, settingsText(c.Insights))
			fmt.Fprintf(&b, "# total: %s\n", totalText(t.Total))
			for _, r := range t.Components {
				if r.HasBounds() {
					fmt.Fprintf(&b, "# vpa bounds of %s: memory %s to %s, cpu %s to %s (reported, not applied)\n", r.Component,
						qty(r.MemoryLower), qty(r.MemoryUpper), qty(r.CPULower), qty(r.CPUUpper))
				}
			}
			for _, w := range append(append([]string{}, c.Insights.Warnings...), t.Warnings...) {
				fmt.Fprintf(&b, "# warning: %s\n", strings.ReplaceAll(w, "\n", " "))
			}
			b.Write(y)
			out = append(out, SizeFile{Name: SizeFileName(c, t.Size), Data: []byte(b.String())})
		}
	}
	return out, nil
}

// settingsText is the strategy's rule and its settings.
func settingsText(in *analysis.Insights) string {
	s := in.Strategy.Doc
	if set := in.Settings(); set != "" {
		s += "; here " + set
	}
	return s
}

// SizeFileName is the run-directory path of a cell's size: sizes/<cell>-<size>.yaml,
// with every character a file name should not hold replaced by '_'.
func SizeFileName(c *view.Cell, size string) string {
	return "sizes/" + fileSafe(cellFileLabel(c)+"-"+size) + ".yaml"
}

func cellFileLabel(c *view.Cell) string {
	if c.Name != "" {
		return c.Name
	}
	if c.Implicit {
		return "run"
	}
	return fmt.Sprintf("cell%d", c.Index)
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._=,+-", r):
			return r
		}
		return '_'
	}, s)
}
