package plan

import "go.yaml.in/yaml/v3"

// Cut splits key off the params: rest is the params without it, value its
// value as params of its own (positions, templates and environment kept;
// decode it like any params). found is false, and rest is p, when the
// params have no such key.
func (p Params) Cut(key string) (rest, value Params, found bool) {
	i := p.keyIndex(key)
	if i < 0 {
		return p, Params{}, false
	}
	rest, value = p, p
	c := *p.node
	c.Content = append(append([]*yaml.Node{}, p.node.Content[:i]...), p.node.Content[i+2:]...)
	rest.node, value.node = &c, p.node.Content[i+1]
	return rest, value, true
}

// Has reports whether the params give key.
func (p Params) Has(key string) bool { return p.keyIndex(key) >= 0 }

// Replace returns the params with the value of key taken from the value
// of fromKey in from, position and template text included, so that
// decoding substitutes it as written and reports a problem where it was
// written. ok is false, and the params are returned as they are, when
// either key is missing.
func (p Params) Replace(key string, from Params, fromKey string) (out Params, ok bool) {
	i, j := p.keyIndex(key), from.keyIndex(fromKey)
	if i < 0 || j < 0 {
		return p, false
	}
	c := *p.node
	c.Content = append([]*yaml.Node{}, p.node.Content...)
	c.Content[i+1] = from.node.Content[j+1]
	out = p
	out.node = &c
	return out, true
}

// keyIndex is the index of key's key node in the params mapping, or -1.
func (p Params) keyIndex(key string) int {
	if p.node == nil || p.node.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(p.node.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		if k := p.node.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return i
		}
	}
	return -1
}
