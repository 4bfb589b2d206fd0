package secret

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Unparsable is what URL shows of a string that does not parse as a URL.
const Unparsable = "<unparsable url>"

// hidden replaces a URL's password, as url.URL.Redacted does, and the
// value of a credential query parameter.
const hidden = "xxxxx"

// URL is raw as perflab shows and stores it. The one policy:
//
//   - the user name is kept and the password replaced by xxxxx, as
//     url.URL.Redacted does: https://user:xxxxx@host/;
//   - the value of each query parameter whose name denotes a credential
//     (SensitiveName: key, api-key, access_token, secret_key, password,
//     X-Amz-Signature, X-Amz-Credential, sig, …) is replaced by xxxxx,
//     and a URL given as a query value is shown by this same policy;
//   - a password or value made of ${VAR} references alone is kept: it
//     names a secret, it does not hold one;
//   - nothing else changes: a URL with nothing to hide is returned as
//     written;
//   - a string without "://" is read as an address (host:port,
//     user:password@host:port);
//   - a string that does not parse is Unparsable, never shown.
func URL(raw string) string {
	s, err := redact(raw, nil)
	if err != nil {
		return Unparsable
	}
	return s
}

// urlSecrets are the credentials URL hides in raw, as written and decoded:
// what a Scrubber must replace wherever raw's credentials show. Only a
// string with "://" that parses is read.
func urlSecrets(raw string) []string {
	var found []string
	if strings.Contains(raw, "://") {
		text, held := holdRefs(raw)
		_, _, _ = redactHeld(text, func(v string) { found = append(found, held.restore(v)) })
	}
	return found
}

// maskURL is s as URL shows it when s is a URL (it has "://" and parses),
// else s: the strings of a workload's params need not be URLs.
func maskURL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	if r, err := redact(s, nil); err == nil {
		return r
	}
	return s
}

// redact is raw with its credentials hidden, each given to found (when
// not nil) before it is hidden.
func redact(raw string, found func(string)) (string, error) {
	text, held := holdRefs(raw)
	out, changed, err := redactHeld(text, found)
	if err != nil || !changed {
		return raw, err
	}
	return held.restore(out), nil
}

// redactHeld hides the credentials of s, whose ${VAR} references are held
// (holdRefs); changed is false when it holds none.
func redactHeld(s string, found func(string)) (out string, changed bool, err error) {
	if found == nil {
		found = func(string) {}
	}
	bare := !strings.Contains(s, "://")
	if bare {
		s = "//" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", false, err
	}
	if p, ok := u.User.Password(); ok && !onlyHeldRefs(p) {
		found(p)
		u.User, changed = url.UserPassword(u.User.Username(), hidden), true
	}
	if q, ok := redactQuery(u.RawQuery, found); ok {
		u.RawQuery, changed = q, true
	}
	if !changed {
		return s, false, nil
	}
	out = u.String()
	if bare {
		out = strings.TrimPrefix(out, "//")
	}
	return out, true, nil
}

// redactQuery hides the values of a raw query's credential parameters,
// and the credentials of URLs given as values; the rest is kept as
// written, in its order.
func redactQuery(q string, found func(string)) (string, bool) {
	if q == "" {
		return q, false
	}
	params := strings.Split(q, "&")
	changed := false
	for i, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || v == "" {
			continue
		}
		value := unescape(v)
		switch {
		case SensitiveName(unescape(k)):
			if onlyHeldRefs(value) {
				continue
			}
			found(v)
			if value != v {
				found(value)
			}
			params[i], changed = k+"="+hidden, true
		case strings.Contains(value, "://"):
			r, ok, err := redactHeld(value, found)
			if err != nil {
				found(value)
				r, ok = hidden, true
			}
			if ok {
				params[i], changed = k+"="+url.QueryEscape(r), true
			}
		}
	}
	return strings.Join(params, "&"), changed
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// SensitiveName reports whether a name — of a request header, an
// environment variable or a URL query parameter — says that its value is
// a credential: it contains, in any case, auth, token, key, secret,
// password, passwd, cookie, session, credential or signature, or it is
// sig. Such a value is never printed or stored.
func SensitiveName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"auth", "token", "key", "secret", "password", "passwd", "cookie", "session", "credential", "signature"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return n == "sig"
}

// heldRefs are the ${VAR} references of a string while it is parsed:
// url.Parse refuses braces in user info and hosts, so each reference is
// replaced by an alphanumeric stand-in, perflabref<i>z, and put back in
// the result.
type heldRefs []string

var standIn = regexp.MustCompile(`perflabref[0-9]+z`)

// holdRefs is s with its ${VAR} references replaced by stand-ins.
func holdRefs(s string) (string, heldRefs) {
	var held heldRefs
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			break
		}
		b.WriteString(s[:i] + "perflabref" + strconv.Itoa(len(held)) + "z")
		held = append(held, s[i:i+j+1])
		s = s[i+j+1:]
	}
	if held == nil {
		return s, nil
	}
	return b.String() + s, held
}

// restore puts the references back in place of their stand-ins.
func (h heldRefs) restore(s string) string {
	if len(h) == 0 {
		return s
	}
	return standIn.ReplaceAllStringFunc(s, func(m string) string {
		i, err := strconv.Atoi(m[len("perflabref") : len(m)-1])
		if err != nil || i >= len(h) {
			return m
		}
		return h[i]
	})
}

// onlyHeldRefs reports whether s is made of held references alone.
func onlyHeldRefs(s string) bool {
	return standIn.MatchString(s) && strings.TrimSpace(standIn.ReplaceAllString(s, "")) == ""
}
