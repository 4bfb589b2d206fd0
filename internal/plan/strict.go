package plan

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// decodeStrict fills v from n, reporting unknown keys and type errors with
// their positions in file.
func decodeStrict(file string, n *yaml.Node, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("cannot decode params into %T: want a non-nil pointer", v)
	}
	s := &strict{file: file}
	s.decode(n, rv.Elem(), "params")
	if len(s.errs) > 0 {
		return s.errs.sorted()
	}
	return nil
}

// strict is a decoder that walks mappings itself, so that it can reject
// unknown keys at their position, and leaves scalars to the YAML library.
type strict struct {
	file string
	errs Errors
}

func (s *strict) errorf(n *yaml.Node, format string, a ...any) {
	s.errs = append(s.errs, Error{File: s.file, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, a...)})
}

// decode fills the addressable value v from n; path names v in messages.
func (s *strict) decode(n *yaml.Node, v reflect.Value, path string) {
	if selfDecoding(v) {
		s.leaf(n, v, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		s.decode(n, v.Elem(), path)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			s.leaf(n, v, path)
			return
		}
		s.structure(n, v, path)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s.leaf(n, v, path)
			return
		}
		s.slice(n, v, path)
	case reflect.Map:
		s.mapping(n, v, path)
	default:
		s.leaf(n, v, path)
	}
}

// selfDecoding reports whether v's type decodes itself.
func selfDecoding(v reflect.Value) bool {
	if !v.CanAddr() {
		return false
	}
	t := v.Addr().Type()
	return t.Implements(reflect.TypeFor[yaml.Unmarshaler]()) ||
		t.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// leaf lets the YAML library decode n into v.
func (s *strict) leaf(n *yaml.Node, v reflect.Value, path string) {
	err := n.Decode(v.Addr().Interface())
	if err == nil {
		return
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		s.errorf(n, "%s: want %s, got %s", path, typeHint(v.Type()), kindName(n))
		return
	}
	s.errorf(n, "%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
}

// typeHint says what a value of type t looks like.
func typeHint(t reflect.Type) string {
	if t == reflect.TypeFor[time.Duration]() {
		return "a duration like 30s"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a whole number >= 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return "a " + t.String()
}

func (s *strict) slice(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		v.Set(reflect.Zero(v.Type()))
		return
	}
	if n.Kind != yaml.SequenceNode {
		s.errorf(n, "%s: want a list, got %s", path, kindName(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		s.decode(item, out.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(out)
}

func (s *strict) mapping(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		v.Set(reflect.Zero(v.Type()))
		return
	}
	if n.Kind != yaml.MappingNode {
		s.errorf(n, "%s: want a mapping, got %s", path, kindName(n))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		k, val := n.Content[i], n.Content[i+1]
		if !s.key(k, seen, path) {
			continue
		}
		key := reflect.New(v.Type().Key()).Elem()
		s.leaf(k, key, path)
		elem := reflect.New(v.Type().Elem()).Elem()
		s.decode(val, elem, path+"."+k.Value)
		v.SetMapIndex(key, elem)
	}
}

// key checks a mapping key for type and duplicates. The params hold no
// merge keys: the decoder applied them when it copied the params.
func (s *strict) key(k *yaml.Node, seen map[string]int, path string) bool {
	switch {
	case k.Kind != yaml.ScalarNode:
		s.errorf(k, "%s: a key must be a string, got %s", path, kindName(k))
	case seen[k.Value] > 0:
		s.errorf(k, "%s: duplicate key %q (first on line %d)", path, k.Value, seen[k.Value])
	default:
		seen[k.Value] = max(k.Line, 1)
		return true
	}
	return false
}

func (s *strict) structure(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return
	}
	fields, names := structFields(v.Type())
	if n.Kind != yaml.MappingNode {
		s.errorf(n, "%s: want a mapping, got %s", path, kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 { // equivalent mutant: <=, a mapping's Content has an even length
		k, val := n.Content[i], n.Content[i+1]
		if !s.key(k, seen, path) {
			continue
		}
		index, ok := fields[k.Value]
		if !ok {
			s.errorf(k, "%s: unknown key %q; want one of: %s", path, k.Value, strings.Join(names, ", "))
			continue
		}
		s.decode(val, fieldAlloc(v, index), path+"."+k.Value)
	}
}

// structFields maps the YAML keys of struct type t to field index paths,
// following yaml.v3's rules, and lists the keys in declaration order.
func structFields(t reflect.Type) (map[string][]int, []string) {
	fields := map[string][]int{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if strings.Contains(","+opts+",", ",inline,") && ft.Kind() == reflect.Struct {
			sub, subNames := structFields(ft)
			for _, sn := range subNames {
				fields[sn] = append([]int{i}, sub[sn]...)
				names = append(names, sn)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if _, dup := fields[name]; !dup {
			names = append(names, name)
		}
		fields[name] = []int{i}
	}
	return fields, names
}

// fieldAlloc returns the field at index, allocating nil embedded pointers
// on the way.
func fieldAlloc(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer { // equivalent mutant: i >= 0, index 0 is in the struct itself
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}
