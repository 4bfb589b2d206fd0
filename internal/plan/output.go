package plan

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Output is where a run writes the files a CI system reads, besides its
// run directory: a JUnit XML file of its checks and SLO gates, and a CSV
// file of its intervals (perflab run --junit, --csv say the same and take
// precedence). A relative path is relative to the plan's directory, as
// every path of a plan is.
type Output struct {
	JUnit string
	CSV   string
	at    where
}

const outputKeys = "junit, csv"

// output decodes the output mapping.
func (d *decoder) output(n *yaml.Node) (Output, error) {
	o := Output{at: where{}}
	m := d.fields(n, "output", o.at, outputKeys)
	d.field(m, o.at, "junit", func(n *yaml.Node) (err error) { o.JUnit, err = filePath("junit", n); return })
	d.field(m, o.at, "csv", func(n *yaml.Node) (err error) { o.CSV, err = filePath("csv", n); return })
	return o, nil
}

// filePath is the path of a file a run writes: a string, not a
// directory (a trailing slash).
func filePath(key string, n *yaml.Node) (string, error) {
	s, err := scalar(key, n)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" || strings.HasSuffix(s, "/") {
		return "", fmt.Errorf("%s: want the path of a file, e.g. %s, got %q", key, map[string]string{"junit": "perflab-junit.xml", "csv": "perflab.csv"}[key], s)
	}
	return s, nil
}

// OutputPath is path as the plan means it: relative to its directory.
func (p *Plan) OutputPath(path string) string {
	if path == "" || filepath.IsAbs(path) || p.Dir == "" {
		return path
	}
	return filepath.Join(p.Dir, path)
}
