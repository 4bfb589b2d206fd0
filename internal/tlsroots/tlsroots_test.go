package tlsroots

import (
	"io/fs"
	"testing"
	"testing/fstest"
)

func TestNeedsFallback(t *testing.T) {
	files := fstest.MapFS{
		"etc/ssl/certs/ca-certificates.crt": {Data: []byte("-----BEGIN CERTIFICATE-----")},
		"etc/ssl/cert.pem":                  {Data: nil},
		"etc/pki/tls/certs/x.pem":           {Data: []byte("x")},
	}
	sys := func(goos string, env map[string]string, paths ...string) system {
		only := fstest.MapFS{}
		for _, p := range paths {
			only[p] = files[p]
		}
		return system{
			goos:    goos,
			getenv:  func(k string) string { return env[k] },
			stat:    func(name string) (fs.FileInfo, error) { return fs.Stat(only, name[1:]) },
			readDir: func(name string) ([]fs.DirEntry, error) { return fs.ReadDir(only, name[1:]) },
		}
	}
	for _, tc := range []struct {
		name string
		s    system
		want bool
	}{
		{"no roots at all (perflab's image)", sys("linux", nil), true},
		{"Debian's bundle", sys("linux", nil, "etc/ssl/certs/ca-certificates.crt"), false},
		{"an empty bundle only", sys("linux", nil, "etc/ssl/cert.pem"), true},
		{"a directory of certificates", sys("linux", nil, "etc/pki/tls/certs/x.pem"), false},
		{"SSL_CERT_FILE", sys("linux", map[string]string{"SSL_CERT_FILE": "/roots.pem"}), false},
		{"GODEBUG forces the fallback", sys("linux", map[string]string{"GODEBUG": "x509usefallbackroots=1"},
			"etc/ssl/certs/ca-certificates.crt"), true},
		{"not Linux", sys("darwin", nil, "etc/ssl/certs/ca-certificates.crt"), true},
	} {
		if got := tc.s.needsFallback(); got != tc.want {
			t.Errorf("%s: needsFallback = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPoolParsesTheBundle(t *testing.T) {
	//lint:ignore SA1019 Subjects is deprecated for system pools only; this one is the bundle's
	if n := len(Pool().Subjects()); n < 100 {
		t.Fatalf("the bundle's pool holds %d roots", n)
	}
}
