package driver_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/perflab/perflab/internal/driver"
)

// TestParamErrorIsItsMessage: a ParamError reads as its message alone,
// keeps what it wraps, and its key survives further wrapping.
func TestParamErrorIsItsMessage(t *testing.T) {
	err := driver.ParamErrorf("ca_file", "cannot read ca file: %w", fs.ErrNotExist)
	if err.Error() != "cannot read ca file: file does not exist" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%q, wraps fs.ErrNotExist: %v", err, errors.Is(err, fs.ErrNotExist))
	}
	if k := driver.KeyOf(fmt.Errorf("queries[0]: %w", err)); k != "ca_file" {
		t.Errorf("key %q through a wrap, want ca_file", k)
	}
	if k := driver.KeyOf(errors.New("no key")); k != "" {
		t.Errorf("key %q of a plain error", k)
	}
	if driver.WithKey("url", nil) != nil {
		t.Error("WithKey(nil) is not nil")
	}
	if err := driver.WithKey("url", errors.New("url is required")); err.Error() != "url is required" || driver.KeyOf(err) != "url" {
		t.Errorf("WithKey: %q, key %q", err, driver.KeyOf(err))
	}
}
