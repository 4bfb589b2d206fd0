package registry

import (
	"net/url"
	"os"
	"strings"

	"github.com/perflab/perflab/internal/driver"
	httpdriver "github.com/perflab/perflab/internal/driver/http"
)

// maskSecrets masks, in a workload's decoded params as written, what is a
// credential written literally (not as a ${VAR} reference): the values of
// the driver's declared secret keys and of credential-named headers in its
// header keys, and passwords in URLs anywhere.
func maskSecrets(params map[string]any, keys driver.ParamKeys) {
	for _, k := range keys.Secret {
		if v, ok := params[k].(string); ok && v != "" && !IsEnvRef(v) {
			params[k] = "[redacted]"
		}
	}
	for _, k := range keys.Headers {
		if hs, ok := params[k].(map[string]any); ok {
			for name, v := range hs {
				if s, _ := v.(string); httpdriver.SensitiveHeader(name) && !IsEnvRef(s) {
					hs[name] = "[redacted]"
				}
			}
		}
	}
	EachString(params, func(s string) string { return maskURLPassword(s) })
}

// EachString replaces every string in decoded YAML or JSON (mappings and
// lists walked) with f of it.
func EachString(v any, f func(string) string) {
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			if s, ok := item.(string); ok {
				v[k] = f(s)
			} else {
				EachString(item, f)
			}
		}
	case []any:
		for i, item := range v {
			if s, ok := item.(string); ok {
				v[i] = f(s)
			} else {
				EachString(item, f)
			}
		}
	}
}

// onlyEnvRefs reports whether s is made of ${VAR} references alone.
func onlyEnvRefs(s string) bool {
	return strings.Contains(s, "${") && strings.TrimSpace(expandNothing(s)) == ""
}

func expandNothing(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return b.String() + s
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i])
		s = s[i+j+1:]
	}
}

// maskURLPassword masks the password of a URL's user info, unless it is
// a ${VAR} reference.
func maskURLPassword(s string) string {
	if p := URLPassword(s); p != "" && !onlyEnvRefs(p) {
		u, _ := url.Parse(s)
		u.User = url.UserPassword(u.User.Username(), "[redacted]")
		return u.String()
	}
	return s
}

// URLPassword is the password in s's user info when s is a URL with one.
func URLPassword(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// RedactURL is raw with its user info hidden.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = url.User("[redacted]")
	return u.String()
}

// IsEnvRef reports whether a header value holds no literal secret: only
// ${VAR} references, perhaps after an auth scheme word such as "Bearer".
func IsEnvRef(v string) bool {
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
