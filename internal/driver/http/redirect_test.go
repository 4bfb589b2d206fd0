package httpdriver

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/perflab/perflab/internal/stats"
)

// TestRedirectsFollowed (rule 9): with FollowRedirects 0 a redirect is
// the answer; with N, up to N are followed and timed as one request, the
// final answer decides the class, a 303 (and a 302 of a POST) goes on as
// a GET without a body, and credentials go to no other host.
func TestRedirectsFollowed(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		var other atomic.Value // the Authorization the other host saw; "" when none
		elsewhere := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			other.Store(r.Header.Get("Authorization"))
			_, _ = io.WriteString(w, "far")
		}))
		var seen atomic.Value // method and body length at /end
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/one":
				http.Redirect(w, r, "/two", http.StatusFound)
			case "/two":
				http.Redirect(w, r, "/end", http.StatusTemporaryRedirect)
			case "/see":
				http.Redirect(w, r, "/end", http.StatusSeeOther)
			case "/away":
				http.Redirect(w, r, elsewhere.URL+"/", http.StatusFound)
			case "/end":
				b, _ := io.ReadAll(r.Body)
				seen.Store(r.Method + " " + string(b))
				_, _ = io.WriteString(w, "done")
			}
		}))
		run := func(path, method string, follow int, body string) (r resultOf) {
			cfg := c.config(ts, path)
			cfg.FollowRedirects, cfg.Method, cfg.Body = follow, method, []byte(body)
			cfg.Header = http.Header{"Authorization": {"Bearer s3cret"}}
			if elsewhere.CAFile != "" && ts.CAFile != "" {
				cfg.CAFile = ts.CAFile
			}
			res, _ := do(context.Background(), newDriver(t, cfg), 0)
			return resultOf{res.Class, res.Counters[stats.BodyBytes], res.BytesSent}
		}
		if got := run("/one", http.MethodGet, 0, ""); got.class != stats.OK || got.body == 4 {
			t.Errorf("not followed: %+v, want the 302 as the answer", got)
		}
		if got := run("/one", http.MethodGet, 1, ""); got.class != stats.OK || got.body == 4 {
			t.Errorf("one of two followed: %+v, want the second redirect as the answer", got)
		}
		if got := run("/one", http.MethodPut, 2, "data"); got.class != stats.OK || seen.Load() != "PUT data" {
			t.Errorf("302 then 307 of a PUT: %+v, the end saw %v; want PUT data", got, seen.Load())
		}
		if got := run("/see", http.MethodPost, 1, "data"); got.class != stats.OK || seen.Load() != "GET " {
			t.Errorf("303 of a POST: %+v, the end saw %v; want a GET without body", got, seen.Load())
		}
		if elsewhere.CAFile != "" {
			return // the other host's certificate is another CA's
		}
		if got := run("/away", http.MethodGet, 1, ""); got.class != stats.OK || got.body <= 3 || other.Load() != "" {
			t.Errorf("to another host: %+v, Authorization there %q; want its answer, no credentials", got, other.Load())
		}
	})
}

type resultOf struct {
	class     stats.Class
	body      int64
	bytesSent int64
}
