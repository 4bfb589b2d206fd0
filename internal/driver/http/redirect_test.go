package httpdriver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perflab/perflab/internal/stats"
)

// TestRedirectsFollowed (rule 9): with FollowRedirects 0 a redirect is
// the answer; with N, up to N are followed and timed as one request, the
// final answer decides the class; as net/http's client, a 301, 302 or 303
// goes on as a GET without a body, a 307 or 308 as it was; credentials go
// to no other host.
func TestRedirectsFollowed(t *testing.T) {
	forEachClient(t, func(t *testing.T, c client) {
		var other atomic.Value // the Authorization the other host saw; "" when none
		elsewhere := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			other.Store(r.Header.Get("Authorization"))
			_, _ = io.WriteString(w, "far")
		}))
		var seen atomic.Value // method and body at /end
		ts := startServer(t, c.mode, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/one":
				http.Redirect(w, r, "/two", http.StatusFound)
			case "/two":
				http.Redirect(w, r, "/end", http.StatusTemporaryRedirect)
			case "/keep":
				http.Redirect(w, r, "/two", http.StatusPermanentRedirect)
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
		run := func(path, method string, follow int, body string) resultOf {
			cfg := c.config(ts, path)
			cfg.FollowRedirects, cfg.Method, cfg.Body = follow, method, []byte(body)
			cfg.Header = http.Header{"Authorization": {"Bearer s3cret"}}
			res, _ := do(context.Background(), newDriver(t, cfg), 0)
			return resultOf{res.Class, res.Counters[stats.BodyBytes], res.BytesSent}
		}
		if got := run("/one", http.MethodGet, 0, ""); got.class != stats.OK || got.body == 4 {
			t.Errorf("not followed: %+v, want the 302 as the answer", got)
		}
		if got := run("/one", http.MethodGet, 1, ""); got.class != stats.OK || got.body == 4 {
			t.Errorf("one of two followed: %+v, want the second redirect as the answer", got)
		}
		if got := run("/keep", http.MethodPut, 2, "data"); got.class != stats.OK || seen.Load() != "PUT data" || got.bytesSent != 12 {
			t.Errorf("308 then 307 of a PUT: %+v, the end saw %v; want PUT data, sent 3 times", got, seen.Load())
		}
		if got := run("/one", http.MethodPut, 2, "data"); got.class != stats.OK || seen.Load() != "GET " {
			t.Errorf("302 then 307 of a PUT: %+v, the end saw %v; want a GET without body", got, seen.Load())
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

// TestRedirectChainKeepsCredentialsHome: A sends the request to B, and B
// to B again: neither of B's requests carries the credentials or the
// Host the plan gave for A (each hop is judged against A, not against the
// hop before).
func TestRedirectChainKeepsCredentialsHome(t *testing.T) {
	for _, maxConns := range []int{0, 8} {
		var (
			mu   sync.Mutex
			seen []string
		)
		b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.URL.Path+" auth="+r.Header.Get("Authorization")+" host="+r.Host)
			mu.Unlock()
			if r.URL.Path == "/x" {
				http.Redirect(w, r, "/y", http.StatusFound)
			}
		}))
		a := httptest.NewServer(http.RedirectHandler(b.URL+"/x", http.StatusFound))
		d := newDriver(t, Config{URL: a.URL + "/", MaxConns: maxConns, FollowRedirects: 3,
			Header: http.Header{"Authorization": {"Bearer s3cret"}, "Host": {"a.example"}}})
		r, _ := do(context.Background(), d, 0)
		host := b.Listener.Addr().String()
		want := []string{"/x auth= host=" + host, "/y auth= host=" + host}
		if r.Class != stats.OK || !slices.Equal(seen, want) {
			t.Errorf("max_conns %d: %v; B saw %q, want %q", maxConns, r.Class, seen, want)
		}
		a.Close()
		b.Close()
	}
}

// TestRedirectToHTTPSOfAnH2Server: perflab's client follows a redirect
// from http:// to https:// offering HTTP/1.1 alone, so a server that
// prefers h2 answers it in HTTP/1.1.
func TestRedirectToHTTPSOfAnH2Server(t *testing.T) {
	secure := startServer(t, modeTLSH2, okHandler(2))
	plain := httptest.NewServer(http.RedirectHandler(secure.URL+"/", http.StatusMovedPermanently))
	t.Cleanup(plain.Close)
	d := newDriver(t, Config{URL: plain.URL + "/", FollowRedirects: 1, CAFile: secure.CAFile})
	if r, _ := do(context.Background(), d, 0); r.Class != stats.OK {
		t.Errorf("%v %q, want the https answer", r.Class, r.Message)
	}
}
