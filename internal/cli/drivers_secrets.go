package cli

import (
	"net/url"
	"strings"
)

// secretKeys are params keys whose values are credentials, in any driver.
var secretKeys = map[string]bool{
	"api_key": true, "access_key": true, "secret_key": true, "session_token": true,
	"password": true, "token": true, "secret": true,
}

// maskSecrets masks, in decoded params, what is written literally (not as
// a ${VAR} reference) and is a credential: the values of secretKeys and of
// sensitive headers, and passwords in URLs. Nested mappings and lists are
// walked.
func maskSecrets(params map[string]any) {
	maskHeaders(params)
	for k, v := range params {
		switch v := v.(type) {
		case string:
			if secretKeys[strings.ToLower(k)] && v != "" && !isEnvRef(v) && !onlyEnvRefs(v) {
				params[k] = "[redacted]"
			} else {
				params[k] = maskURLPassword(v)
			}
		case map[string]any:
			maskSecrets(v)
		case []any:
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					maskSecrets(m)
				}
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
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if p, ok := u.User.Password(); ok && !onlyEnvRefs(p) {
		u.User = url.UserPassword(u.User.Username(), "[redacted]")
		return u.String()
	}
	return s
}
