package testutil

import (
	"fmt"
	"net/url"
	"testing"
)

// NginxProxy is nginx configured as a reverse proxy (a gateway) in front
// of an upstream, in a temporary prefix directory: one worker,
// HTTP/1.1 keep-alive connections to the upstream (up to 64 idle),
// answers streamed as they come (proxy_buffering off). StartNginxProxy
// starts one for a test; a plan can start it as a component by running
// Bin with Args.
type NginxProxy struct {
	Bin  string   // the nginx binary
	Dir  string   // prefix directory: nginx.conf, pid, logs, temporary files
	Port int      // it listens on 127.0.0.1:Port
	Args []string // nginx's arguments to run in the foreground
}

// NewNginxProxy writes the configuration of an nginx reverse proxy to
// upstream ("http://127.0.0.1:PORT") on a free port, without starting it.
// It skips the test (see Unavailable) when nginx is not installed.
func NewNginxProxy(t testing.TB, upstream string) NginxProxy {
	t.Helper()
	bin := RequireBinary(t, "nginx")
	httpExtra, locations := nginxProxyConfig(t, upstream)
	p := NginxProxy{Bin: bin, Dir: t.TempDir(), Port: FreePort(t)}
	args, err := writeNginxConfig(p.Dir, p.Port, httpExtra, locations)
	if err != nil {
		t.Fatal(err)
	}
	p.Args = args
	return p
}

// StartNginxProxy starts nginx as a reverse proxy to upstream, waits until
// it answers and stops it when the test ends. It returns its base URL.
func StartNginxProxy(t testing.TB, upstream string) (baseURL string) {
	t.Helper()
	httpExtra, locations := nginxProxyConfig(t, upstream)
	return startNginxTest(t, httpExtra, locations)
}

// nginxProxyConfig is the http-level upstream block and the location of a
// reverse proxy to upstream.
func nginxProxyConfig(t testing.TB, upstream string) (httpExtra, locations string) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		t.Fatalf("upstream %q: want http://HOST:PORT", upstream)
	}
	httpExtra = fmt.Sprintf(`upstream perflab_upstream {
        server %s;
        keepalive 64;
    }`, u.Host)
	locations = `location / {
            proxy_pass http://perflab_upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }`
	return httpExtra, locations
}
