// Package tlsroots gives perflab Mozilla's root certificates
// (golang.org/x/crypto/x509roots/fallback/bundle) where the system has none
// of its own, and only there. perflab's own image (perflab k8s image) holds
// the binary alone, without /etc/ssl, and its workers still verify an HTTPS
// store or target; every other process would parse the whole bundle at
// start for nothing (0.6 MB allocated in 8,900 allocations, the pool kept
// for the process's life), since crypto/x509 uses fallback roots only when
// the system pool is empty.
package tlsroots

import (
	"crypto/x509"
	"io/fs"
	"os"
	"runtime"
	"strings"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// certFiles and certDirs are where crypto/x509 looks for the system's roots
// on Linux (crypto/x509/root_linux.go).
var (
	certFiles = []string{
		"/etc/ssl/certs/ca-certificates.crt",
		"/etc/pki/tls/certs/ca-bundle.crt",
		"/etc/ssl/ca-bundle.pem",
		"/etc/pki/tls/cacert.pem",
		"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
		"/etc/ssl/cert.pem",
	}
	certDirs = []string{"/etc/ssl/certs", "/etc/pki/tls/certs"}
)

// system is what Fallback reads of the process's environment and files.
type system struct {
	goos    string
	getenv  func(string) string
	stat    func(string) (fs.FileInfo, error)
	readDir func(string) ([]fs.DirEntry, error)
}

// Fallback makes the bundle crypto/x509's fallback roots unless the system
// has roots of its own. It is to be called once, before any TLS
// connection verifies a certificate.
func Fallback() {
	s := system{goos: runtime.GOOS, getenv: os.Getenv, stat: os.Stat, readDir: os.ReadDir}
	if s.needsFallback() {
		x509.SetFallbackRoots(Pool())
	}
}

// needsFallback reports whether crypto/x509 may find no system roots: on
// Linux, none of its files is a non-empty file, none of its directories
// has an entry, and neither SSL_CERT_FILE nor SSL_CERT_DIR names others.
// Elsewhere, and when GODEBUG asks for the fallback roots
// (x509usefallbackroots=1), the bundle is always registered, as
// x509roots/fallback did.
func (s system) needsFallback() bool {
	if s.goos != "linux" || strings.Contains(s.getenv("GODEBUG"), "x509usefallbackroots=1") {
		return true
	}
	if s.getenv("SSL_CERT_FILE") != "" || s.getenv("SSL_CERT_DIR") != "" {
		return false
	}
	for _, f := range certFiles {
		if fi, err := s.stat(f); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return false
		}
	}
	for _, d := range certDirs {
		if entries, err := s.readDir(d); err == nil && len(entries) > 0 {
			return false
		}
	}
	return true
}

// Pool parses the bundle into a certificate pool, with each root's
// constraint where it has one.
func Pool() *x509.CertPool {
	p := x509.NewCertPool()
	for c := range bundle.Roots() {
		cert, err := x509.ParseCertificate(c.Certificate)
		if err != nil {
			panic("tlsroots: the bundle holds an unparsable certificate: " + err.Error())
		}
		if c.Constraint == nil {
			p.AddCert(cert)
		} else {
			p.AddCertWithConstraint(cert, c.Constraint)
		}
	}
	return p
}
