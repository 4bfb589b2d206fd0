package plan

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Limits on the size of a plan, checked before anything else so that a
// plan too large is refused with that reason alone.
const (
	// MaxBytes bounds the plan file.
	MaxBytes = 16 << 20
	// MaxNodes bounds the YAML nodes of a plan once its aliases are
	// expanded, so that a few aliases cannot expand into billions.
	MaxNodes = 200_000
)

// countCap is where node counts stop: an alias bomb's expansion is only
// said to be more than this.
const countCap = 1_000_000_000_000

// readPlan reads the plan file at path, at most MaxBytes+1 of it, and says
// how large the file is.
func readPlan(path string) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot read plan: %w", err)
	}
	defer f.Close()
	size := int64(-1) // equivalent mutant: +1; the size only says whether the plan is over MaxBytes
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		size = info.Size()
	}
	if size > MaxBytes {
		return nil, size, nil // refused unread
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("cannot read plan: %w", err)
	}
	return data, max(size, int64(len(data))), nil
}

// tooManyBytes refuses a plan file of size bytes larger than MaxBytes.
func (d *decoder) tooManyBytes(size int64) bool {
	if size <= MaxBytes {
		return false
	}
	d.errorAt(Pos{}, "plan too large: %s bytes, %s over the limit of %s (%d MiB); split it into several plans",
		count(size), count(size-MaxBytes), count(MaxBytes), MaxBytes>>20)
	return true
}

// tooManyNodes refuses a plan whose tree, aliases expanded, holds more
// than MaxNodes nodes, or whose aliases expand forever.
func (d *decoder) tooManyNodes(root *yaml.Node) bool {
	s := sizer{memo: map[*yaml.Node]int64{}, busy: map[*yaml.Node]bool{}}
	expanded, written := s.expanded(root), written(root)
	switch {
	case s.cycle != nil:
		d.errorf(s.cycle, "alias *%s sits inside its own anchor &%s (line %d): it would expand forever",
			s.cycle.Value, s.cycle.Value, s.cycle.Alias.Line)
	case written > MaxNodes:
		what := ""
		if w, pr := workloadCount(root); w > 0 {
			what = fmt.Sprintf(" (%s in %s)", plural(w, "workload"), plural(pr, "profile"))
		}
		d.errorAt(Pos{}, "plan too large: %s YAML nodes%s, %s over the limit of %s; split it into several plans",
			count(written), what, count(written-MaxNodes), count(MaxNodes))
	case expanded >= countCap:
		d.errorAt(Pos{}, "plan too large: its aliases expand its %s YAML nodes to more than %s, over the limit of %s; use fewer aliases",
			count(written), count(countCap), count(MaxNodes))
	case expanded > MaxNodes:
		d.errorAt(Pos{}, "plan too large: its aliases expand its %s YAML nodes to %s, %s over the limit of %s; use fewer aliases or split the plan",
			count(written), count(expanded), count(expanded-MaxNodes), count(MaxNodes))
	default:
		return false
	}
	return true
}

// sizer counts the nodes of a tree with its aliases expanded, each anchor's
// count computed once.
type sizer struct {
	memo  map[*yaml.Node]int64 // expanded count of each anchored node
	busy  map[*yaml.Node]bool  // anchored nodes being counted
	cycle *yaml.Node           // the first alias met inside its own anchor
}

func (s *sizer) expanded(n *yaml.Node) int64 {
	if n.Kind == yaml.AliasNode {
		switch {
		case n.Alias == nil:
			return 1
		case s.busy[n.Alias]:
			if s.cycle == nil {
				s.cycle = n
			}
			return 1
		}
		return s.expanded(n.Alias)
	}
	if total, ok := s.memo[n]; ok {
		return total
	}
	if n.Anchor != "" {
		s.busy[n] = true
		defer delete(s.busy, n)
	}
	total := int64(1)
	for _, c := range n.Content {
		total = min(total+s.expanded(c), countCap)
	}
	if n.Anchor != "" {
		s.memo[n] = total
	}
	return total
}

// written counts the nodes of a tree as written, an alias counting one.
func written(n *yaml.Node) int64 {
	total := int64(1)
	for _, c := range n.Content {
		total += written(c)
	}
	return total
}

// workloadCount counts the workloads and profiles a plan's tree lists,
// following aliases: what makes a plan large, to name in the refusal.
func workloadCount(root *yaml.Node) (workloads, profiles int) {
	for _, pr := range valueOf(root, "profiles").Content {
		profiles++
		workloads += len(valueOf(unalias(pr), "workloads").Content)
	}
	return workloads, profiles
}

// valueOf is the value of key in mapping n, aliases resolved; an empty
// node when there is none.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
			if k := unalias(n.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
				return unalias(n.Content[i+1])
			}
		}
	}
	return &yaml.Node{}
}

// unalias is the node an alias stands for; other nodes are themselves.
func unalias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// count writes n with thousands separators: 20,000.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// plural is "1 workload" or "20,000 workloads".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return count(int64(n)) + " " + noun + "s"
}
