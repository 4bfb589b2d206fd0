package driver

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// ParamError is a problem a driver's Config.Validate finds, with the
// params key it is about, so that whoever decoded the params can report
// it at that key's position in the plan file. Key is a top-level key of
// the params (a problem inside a list or mapping carries the key that
// holds it); "" for a problem of the whole config. Its text is the
// problem's alone.
type ParamError struct {
	Key string
	Err error
}

// ParamErrorf is a problem with the param key, formatted as fmt.Errorf
// does (%w wraps).
func ParamErrorf(key, format string, a ...any) error {
	return &ParamError{Key: key, Err: fmt.Errorf(format, a...)}
}

// WithKey is err as a problem with the param key; nil stays nil.
func WithKey(key string, err error) error {
	if err == nil {
		return nil
	}
	return &ParamError{Key: key, Err: err}
}

// Error is the problem's text, without its key.
func (e *ParamError) Error() string { return e.Err.Error() }

// Unwrap is the problem.
func (e *ParamError) Unwrap() error { return e.Err }

// KeyOf is the params key err is about: the Key of the first ParamError
// in its chain; "" when it has none.
func KeyOf(err error) string {
	var pe *ParamError
	if errors.As(err, &pe) {
		return pe.Key
	}
	return ""
}

// BadPort says what is wrong with the port of u, "" when it has none or
// one from 1 to 65535: url.Parse takes any digits, so 127.0.0.1:99999
// would fail only at the first request.
func BadPort(u *url.URL) string {
	p := u.Port()
	if p == "" {
		return ""
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("port %s is not one from 1 to 65535", p)
	}
	return ""
}
