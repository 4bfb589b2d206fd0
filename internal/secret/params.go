package secret

import (
	"net/http"
	"os"
	"strings"
)

// Keys name the params of a driver that hold credentials: Secret, whose
// values are credentials, and Headers, mappings of request headers whose
// credential-named entries are (driver.ParamKeys says which).
type Keys struct {
	Secret, Headers []string
}

// MaskParams masks, in a workload's decoded params as written, what is a
// credential written literally (not as a ${VAR} reference): the values of
// the driver's declared secret keys and of credential-named headers in its
// header keys, and URLs anywhere as URL shows them.
func MaskParams(params map[string]any, keys Keys) {
	for _, k := range keys.Secret {
		if v, ok := params[k].(string); ok && v != "" && !isEnvRef(v) {
			params[k] = Redacted
		}
	}
	for _, k := range keys.Headers {
		if hs, ok := params[k].(map[string]any); ok {
			for name, v := range hs {
				if s, _ := v.(string); SensitiveName(name) && !isEnvRef(s) {
					hs[name] = Redacted
				}
			}
		}
	}
	eachString(params, maskURL)
}

// Params adds the credentials a workload's decoded params hold literally:
// the values of the driver's declared secret keys, of credential-named
// headers in its header keys, and those of URLs anywhere (Set.URL).
func (set Set) Params(params map[string]any, keys Keys) {
	for _, k := range keys.Secret {
		if v, ok := params[k].(string); ok {
			set.Literal(v)
		}
	}
	for _, k := range keys.Headers {
		hs, _ := params[k].(map[string]any)
		for name, v := range hs {
			if s, ok := v.(string); ok && SensitiveName(name) {
				set.Literal(s)
			}
		}
	}
	eachString(params, func(s string) string { set.URL(s); return s })
}

// eachString replaces every string in decoded YAML or JSON (mappings and
// lists walked) with f of it.
func eachString(v any, f func(string) string) {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			if s, ok := item.(string); ok {
				v[k] = f(s)
			} else {
				eachString(item, f)
			}
		}
	case []any:
		for i, item := range v {
			if s, ok := item.(string); ok {
				v[i] = f(s)
			} else {
				eachString(item, f)
			}
		}
	}
}

// Headers is h for a description: one value per name, credential-named
// headers' values masked.
func Headers(h http.Header) map[string]string {
	out := map[string]string{}
	for k, vs := range h {
		v := strings.Join(vs, ", ")
		if SensitiveName(k) {
			v = Redacted
		}
		out[k] = v
	}
	return out
}

// Args is a command line as perflab records it: the values of
// credential-named headers (-H or --export-header "Name: value") masked
// unless they are ${VAR} references, and URLs (an argument with "://" in
// it, a flag's value after "=", or the URL of KIND=URL) as URL shows
// them.
func Args(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		switch {
		case i > 0 && headerFlags[args[i-1]]:
			out[i] = a
			if k, v, ok := strings.Cut(a, ":"); ok && SensitiveName(k) && !isEnvRef(strings.TrimSpace(v)) {
				out[i] = k + ": " + Redacted
			}
		case headerFlags[strings.SplitN(a, "=", 2)[0]]:
			out[i] = a
			if k, _, ok := strings.Cut(a, ":"); ok && SensitiveName(k) {
				out[i] = k + ": " + Redacted
			}
		default:
			out[i] = argURL(a)
		}
	}
	return out
}

// headerFlags are the flags whose value is a header, 'Name: value'.
var headerFlags = map[string]bool{"-H": true, "--H": true, "-export-header": true, "--export-header": true}

// argURL is a command-line argument with its URL, if any, as URL shows it.
func argURL(a string) string {
	if !strings.Contains(a, "://") {
		return a
	}
	name, v, ok := strings.Cut(a, "=")
	if strings.HasPrefix(a, "-") {
		if ok && strings.Contains(v, "://") {
			return name + "=" + argURL(v)
		}
		return a
	}
	if ok && !strings.Contains(name, "://") && strings.Contains(v, "://") { // KIND=URL, as --export takes
		return name + "=" + URL(v)
	}
	return URL(a)
}

// isEnvRef reports whether a value holds no literal secret: only ${VAR}
// references, perhaps after an auth scheme word such as "Bearer".
func isEnvRef(v string) bool {
	if !strings.Contains(v, "${") {
		return false
	}
	rest := strings.TrimSpace(os.Expand(v, func(string) string { return "" }))
	switch strings.ToLower(rest) {
	case "", "bearer", "basic", "token":
		return true
	}
	return false
}
