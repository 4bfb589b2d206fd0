package registry

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDriversDeclareKeys: every driver a plan can name declares the params
// that say where the system is, and each key it declares (place, secret,
// headers) is a param of the struct its params decode into, so a renamed
// param fails here rather than quietly falling out of compare's notes or
// of what is scrubbed.
func TestDriversDeclareKeys(t *testing.T) {
	for name, d := range drivers {
		k := d.params.ParamKeys()
		if len(k.Place) == 0 {
			t.Errorf("driver %s declares no place keys", name)
		}
		params := yamlKeys(reflect.TypeOf(d.params))
		for what, keys := range map[string][]string{"place": k.Place, "secret": k.Secret, "headers": k.Headers} {
			for _, key := range keys {
				if _, ok := params[key]; !ok {
					t.Errorf("driver %s declares %s key %q, which is not one of its params (%s)", name, what, key, strings.Join(slices.Sorted(maps.Keys(params)), ", "))
				}
			}
		}
		for _, key := range k.Headers {
			if f := params[key]; f.Kind() != reflect.Map && !(f.Kind() == reflect.Struct && f.Field(0).Type.Kind() == reflect.Map) {
				t.Errorf("driver %s: headers key %q is a %v, not a mapping", name, key, f)
			}
		}
		if got := d.keys(); d.gateway != slices.Contains(got.Place, "gateway") {
			t.Errorf("driver %s: gateway %v, place keys %v", name, d.gateway, got.Place)
		}
	}
	if !IsPlace("remote_write", "query_url") || !IsPlace("s3", "secret_key") || IsPlace("remote_write", "targets") {
		t.Errorf("isPlace does not follow the declarations")
	}
}

// yamlKeys maps the top-level keys a struct decodes from to their types.
func yamlKeys(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "":
			out[strings.ToLower(f.Name)] = f.Type
		default:
			out[name] = f.Type
		}
	}
	return out
}
