package driver

import (
	"net/url"
	"testing"
)

// TestBadPort (issue 16, item 11): a URL's port out of 1–65535 is told
// before any request; none, or one in range, is not.
func TestBadPort(t *testing.T) {
	for raw, bad := range map[string]bool{
		"http://127.0.0.1:99999/": true, "http://127.0.0.1:0/": true, "http://127.0.0.1:65536": true,
		"http://127.0.0.1:65535/": false, "http://127.0.0.1/": false, "https://[::1]:443/": false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := BadPort(u) != ""; got != bad {
			t.Errorf("BadPort(%s) = %q, want bad %v", raw, BadPort(u), bad)
		}
	}
}
