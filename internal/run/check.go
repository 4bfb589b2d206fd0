package run

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/plan"
)

// LoadPlan reads the plan at path and keeps the profiles list names
// (all when empty). Its errors are usage errors: nothing was started.
func LoadPlan(path, profiles string) (*plan.Plan, error) {
	p, err := plan.LoadPartial(path)
	if err != nil {
		var pe plan.Errors
		if !errors.As(err, &pe) {
			return nil, &Failure{Err: err, Hint: "give the path of a plan file (docs/format/plan.md)", Code: ExitUsage}
		}
		problems := plan.Problems(err)
		if p != nil {
			problems = append(problems, paramProblems(p)...)
		}
		return nil, InvalidPlan(sortedProblems(problems))
	}
	if p, err = p.Select(profiles); err != nil {
		return nil, Invalid("--profile: %v", err)
	}
	return p, nil
}

// paramProblems decodes the params of the workloads of a plan that has
// other problems, so that they are reported too. The plan is not expanded:
// problems with values still holding a {{variable}} are left for the check
// of the expanded plan.
func paramProblems(p *plan.Plan) []error {
	var out []error
	for _, pr := range p.Profiles {
		for _, w := range pr.Workloads {
			err := checkDriver(p, w)
			if err != nil && w.Driver != "" { // a missing driver is the plan's problem, reported already
				out = append(out, err)
			}
			if err != nil || w.Params.IsZero() {
				continue
			}
			_, errs := registry.Decode(w.Driver, registry.Input{Params: w.Params, File: p.File, Dir: p.Dir})
			for _, err := range errs {
				if !strings.Contains(err.Error(), "{{") {
					out = append(out, err)
				}
			}
		}
	}
	return out
}

// sortedProblems orders problems by position in the plan file and drops
// repeats.
func sortedProblems(errs []error) []error {
	sort.SliceStable(errs, func(i, j int) bool { return posOf(errs[i]).less(posOf(errs[j])) })
	var out []error
	seen := map[string]bool{}
	for _, err := range errs {
		if msg := err.Error(); !seen[msg] {
			seen[msg] = true
			out = append(out, err)
		}
	}
	return out
}

// InvalidPlan is the error for a plan with problems: each on its own
// line, the first plan.MaxListed of them and how many more there are,
// exit status 2.
func InvalidPlan(problems []error) error {
	return &Failure{Err: fmt.Errorf("invalid plan (%s):\n%s", Plural(len(problems), "problem"), plan.List(problems)),
		Hint: "fix every line above; `perflab plan check PLAN` checks a plan without running it", Code: ExitUsage}
}

// Check expands every cell of p and decodes what the plan format leaves
// opaque: every workload's driver params and every started component's
// spec. runDir stands in for {{run_dir}}. A problem found in some cells
// only says in which.
func Check(p *plan.Plan, b plan.Builtins) []error {
	cells := p.RunCells(p.Repeat)
	var order []string
	var reserved []error
	for _, c := range p.Components {
		if c.Name == GeneratorName {
			reserved = append(reserved, plan.ErrorAt(p.File, c.Pos("name"), "component name %q is perflab's own in reports; choose another", c.Name))
		}
	}
	byMsg := map[string][]string{}
	first := map[string]error{}
	add := func(cell string, err error) {
		msg := err.Error()
		if byMsg[msg] == nil {
			order = append(order, msg)
			first[msg] = err
		}
		byMsg[msg] = append(byMsg[msg], cell)
	}
	for _, c := range cells {
		inst, err := p.Expand(c, b)
		if err != nil {
			for _, e := range plan.Problems(err) {
				add(c.Name, e)
			}
			continue
		}
		_, errs := Compile(p, inst, len(cells) > 1)
		for _, e := range errs {
			add(c.Name, e)
		}
		for _, comp := range inst.Components {
			if comp.Run == nil {
				continue
			}
			for _, e := range ComponentSpec(comp, "", nil).Validate() {
				add(c.Name, plan.ErrorAt(p.File, comp.Pos("run"), "component %s: %v", comp.Name, e))
			}

		}
	}
	sort.SliceStable(order, func(i, j int) bool { return posOf(first[order[i]]).less(posOf(first[order[j]])) })
	out := append(reserved, registry.GatewayProblems(p)...)
	for _, msg := range order {
		if in := byMsg[msg]; len(in) < len(cells) {
			msg += fmt.Sprintf(" (in cell %s)", strings.Join(in, "; "))
		}
		out = append(out, errors.New(msg))
	}
	return out
}

// CheckBuilt checks a plan built in Go (perflab http's, from its flags)
// as LoadPlan and Check check a plan file: Validate and every workload's
// params first; when they find nothing, every cell compiled.
func CheckBuilt(p *plan.Plan, b plan.Builtins) []error {
	if errs := p.Validate(); len(errs) > 0 {
		return sortedProblems(append(errs, paramProblems(p)...))
	}
	return Check(p, b)
}

// CommandProblems lists the components of p whose command cannot be
// started on this machine, each at its position: perflab run refuses
// them before it starts anything, plan check warns (the plan may be meant
// for another machine).
func CommandProblems(p *plan.Plan, b plan.Builtins) []error {
	var out []error
	seen := map[string]bool{}
	for _, c := range p.RunCells(p.Repeat) {
		inst, err := p.Expand(c, b)
		if err != nil {
			continue // checkPlan reports it
		}
		for _, comp := range inst.Components {
			if comp.Run == nil {
				continue
			}
			if e := commandProblem(comp.Run.Command); e != nil {
				err := plan.ErrorAt(p.File, comp.Run.Pos("command"), "component %s: %v", comp.Name, e)
				if !seen[err.Error()] {
					seen[err.Error()] = true
					out = append(out, err)
				}
			}
		}
	}
	return out
}

// commandProblem says why a component's command could not be started: a
// bare name not found in PATH, or a path (made absolute by Expand) that is
// no executable file; nil when it can be, or when it is empty (Validate
// says so).
func commandProblem(command string) error {
	if command == "" {
		return nil
	}
	if !strings.Contains(command, "/") {
		if _, err := exec.LookPath(command); err != nil {
			return fmt.Errorf("command %q is not found in PATH: install it, or give its path", command)
		}
		return nil
	}
	info, err := os.Stat(command)
	switch {
	case err != nil:
		return fmt.Errorf("command %q: no such file", command)
	case info.IsDir() || info.Mode()&0o111 == 0:
		return fmt.Errorf("command %q is not an executable file", command)
	}
	return nil
}

// checkDriver says when w names a driver perflab does not have, at its
// position.
func checkDriver(p *plan.Plan, w plan.Workload) error {
	if registry.Has(w.Driver) {
		return nil
	}
	return plan.ErrorAt(p.File, w.Pos("driver"), "unknown driver %q; perflab has %s", w.Driver, registry.Names())
}

// position is where an error is in the plan file; errors without one
// come last.
type position struct{ line, col int }

func posOf(err error) position {
	var pe plan.Error
	if errors.As(err, &pe) && pe.Line > 0 {
		return position{pe.Line, pe.Col}
	}
	return position{1 << 30, 0}
}

func (a position) less(b position) bool { return a.line < b.line || a.line == b.line && a.col < b.col }
