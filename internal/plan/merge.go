package plan

import "go.yaml.in/yaml/v3"

// merge returns mapping n with its merge keys applied as YAML 1.1 says
// (yaml.org/type/merge.html): `<<: *base` adds the pairs of mapping base
// whose keys n does not give itself, wherever in n they are written;
// `<<: [*a, *b]` adds those of a, then those of b that neither n nor a
// gives. Merged mappings may merge in turn. The merged pairs take the
// place of the merge key and keep their own nodes, so that a problem with
// one is reported where it is written: in the anchor. A mapping without
// merge keys is returned as it is; each mapping is merged once.
func (d *decoder) merge(n *yaml.Node) *yaml.Node {
	if m, ok := d.merged[n]; ok {
		return m
	}
	d.merged[n] = n // tooManyNodes has refused a mapping that merges itself
	if !hasMergeKey(n) {
		return n
	}
	taken := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		if k := unalias(n.Content[i]); k.Kind == yaml.ScalarNode && !isMergeKey(k) {
			taken[k.Value] = true
		}
	}
	m := *n
	m.Content = make([]*yaml.Node, 0, len(n.Content))
	var first *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !isMergeKey(unalias(k)):
			m.Content = append(m.Content, k, v)
		case first != nil:
			d.errorf(k, "duplicate merge key << (first on line %d); merge a list instead: <<: [*a, *b]", first.Line)
		default:
			first = k
			for _, src := range d.mergeSources(v) {
				m.Content = appendNew(m.Content, d.merge(src).Content, taken)
			}
		}
	}
	d.merged[n] = &m
	return &m
}

// mergeSources is the mappings a merge key's value v names, in order.
func (d *decoder) mergeSources(v *yaml.Node) []*yaml.Node {
	const want = "merge key <<: want a mapping (<<: *base) or a list of mappings (<<: [*a, *b])"
	switch v = unalias(v); v.Kind {
	case yaml.MappingNode:
		return []*yaml.Node{v}
	case yaml.SequenceNode:
		out := make([]*yaml.Node, 0, len(v.Content))
		for _, item := range v.Content {
			if item = unalias(item); item.Kind != yaml.MappingNode {
				d.errorf(item, "%s, got %s in the list", want, kindName(item))
				continue
			}
			out = append(out, item)
		}
		return out
	}
	d.errorf(v, "%s, got %s", want, kindName(v))
	return nil
}

// appendNew appends to dst the pairs whose keys are not taken, and takes
// them.
func appendNew(dst, pairs []*yaml.Node, taken map[string]bool) []*yaml.Node {
	for i := 0; i+1 < len(pairs); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		if k := unalias(pairs[i]); k.Kind == yaml.ScalarNode {
			if taken[k.Value] {
				continue
			}
			taken[k.Value] = true
		}
		dst = append(dst, pairs[i], pairs[i+1])
	}
	return dst
}

// hasMergeKey reports whether mapping n has a merge key.
func hasMergeKey(n *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		if isMergeKey(unalias(n.Content[i])) {
			return true
		}
	}
	return false
}

// isMergeKey reports whether k is the merge key: a plain (or !!merge
// tagged) <<, not a quoted "<<", which is a string.
func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge" && k.Value == "<<"
}
