package promql

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// rulesFile is the part of a Prometheus rules file the driver reads;
// everything else (for, labels, annotations, intervals) is ignored.
type rulesFile struct {
	Groups []struct {
		Name  string      `yaml:"name"`
		Rules []yaml.Node `yaml:"rules"` // decoded one by one, each knowing its line
	} `yaml:"groups"`
}

type rule struct {
	Alert  string    `yaml:"alert"`
	Record string    `yaml:"record"`
	Expr   yaml.Node `yaml:"expr"`
}

// loadRules reads a Prometheus alerting or recording rules file and
// returns one instant query per rule, named after the alert or record.
// A name used by several rules (node-exporter's mixin has several
// NodeFilesystemSpaceFillingUp alerts) gets " #2", " #3", … after the
// first. Every problem in the file is reported, with its line.
func loadRules(path string) ([]Query, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read rules_file: %w", err)
	}
	var f rulesFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("cannot parse rules_file %s: %w", path, err)
	}
	var qs []Query
	var errs []error
	seen := map[string]int{}
	for gi, g := range f.Groups {
		for ri, n := range g.Rules {
			at := fmt.Sprintf("%s:%d: group %q, rule %d", path, n.Line, g.Name, ri+1)
			var r rule
			if err := n.Decode(&r); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", at, err))
				continue
			}
			name := r.Alert
			if r.Alert != "" && r.Record != "" || r.Alert == "" && r.Record == "" {
				errs = append(errs, fmt.Errorf("%s: want alert or record, one of them", at))
			} else if name == "" {
				name = r.Record
			}
			expr := strings.TrimSpace(r.Expr.Value)
			if r.Expr.Kind != yaml.ScalarNode || expr == "" {
				errs = append(errs, fmt.Errorf("%s: expr is required, a string", at))
			}
			if seen[name]++; seen[name] > 1 {
				name += " #" + strconv.Itoa(seen[name])
			}
			qs = append(qs, Query{Name: name, Expr: expr, Type: Instant})
		}
		if len(g.Rules) == 0 {
			errs = append(errs, fmt.Errorf("%s: group %d (%q) has no rules", path, gi+1, g.Name))
		}
	}
	if len(qs) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no rules (want groups: - name: …, rules: - alert: …, expr: …)", path))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return qs, nil
}
