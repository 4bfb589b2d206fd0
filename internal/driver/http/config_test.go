package httpdriver

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestValidateListsEveryProblem(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    Config
		want []string // one substring per expected problem
	}{
		{"valid", Config{URL: "http://127.0.0.1:8080/x"}, nil},
		{"valid h2c", Config{URL: "http://127.0.0.1/", Proto: ProtoH2C, Method: "PURGE"}, nil},
		{"valid h2", Config{URL: "https://127.0.0.1/", Proto: ProtoH2, Timeout: time.Second, MaxConns: 4}, nil},
		{"empty", Config{}, []string{"url is required"}},
		{
			"everything wrong",
			Config{
				URL: "ftp://127.0.0.1/", Proto: "h3", Timeout: -time.Second, MaxConns: -1,
				CAFile: filepath.Join(t.TempDir(), "missing.pem"), Method: "GE T",
				Header: http.Header{"Bad Name": {"v"}, "X-Ok": {"line\nbreak"}},
			},
			[]string{"scheme must be http or https", `proto "h3" is unknown`, "timeout -1s is negative",
				"max_conns -1 is negative", "cannot read ca file", `method "GE T"`,
				`header name "Bad Name"`, `header "X-Ok": value`},
		},
		{"h2c over https", Config{URL: "https://127.0.0.1/", Proto: ProtoH2C}, []string{"h2c needs an http:// url"}},
		{"h2 over http", Config{URL: "http://127.0.0.1/", Proto: ProtoH2}, []string{"h2 needs an https:// url"}},
		{"no host", Config{URL: "http:///path"}, []string{"host is missing"}},
		{"unparsable", Config{URL: "http://[::1"}, []string{"cannot parse url"}},
		{"no scheme", Config{URL: "127.0.0.1:8080/x"}, []string{`url "127.0.0.1:8080/x" has no scheme: write http://127.0.0.1:8080/x`}},
		{"no scheme, a name", Config{URL: "localhost:8080"}, []string{`url "localhost:8080" has no scheme: write http://localhost:8080`}},
		{"CA without certificates", Config{URL: "https://127.0.0.1/", CAFile: notPEM}, []string{"no PEM certificates"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.c.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d problems, want %d: %v", len(errs), len(tc.want), errs)
			}
			all := fmt.Sprint(errs)
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems %q lack %q", all, w)
				}
			}
			d, err := New(tc.c)
			if err == nil {
				_ = d.Close()
			}
			if (err == nil) != (tc.want == nil) {
				t.Errorf("New error %v, want error: %v", err, tc.want != nil)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	for url, want := range map[string]string{
		"http://127.0.0.1":            "GET /",
		"http://127.0.0.1/a/b?q=1":    "GET /a/b",
		"http://127.0.0.1/with%20sp/": "GET /with%20sp/",
	} {
		c := Config{URL: url}.withDefaults()
		if c.Name != want || c.Timeout != DefaultTimeout || c.Proto != ProtoAuto {
			t.Errorf("%s: defaults %+v, want name %q", url, c, want)
		}
	}
}
