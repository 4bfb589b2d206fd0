package main

import (
	"crypto/x509"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/tlsroots"
)

// TestRootsWithoutTheSystems: on a system without CA certificates (as in
// perflab's image) perflab still has roots to verify a server with, once
// main has done what it does first. Nothing in this test binary loaded the
// system's roots before. This machine has roots of its own, so GODEBUG
// asks crypto/x509 to take the fallback ones, as it does on a system
// without (which internal/tlsroots' tests tell apart).
func TestRootsWithoutTheSystems(t *testing.T) {
	t.Setenv("SSL_CERT_FILE", filepath.Join(t.TempDir(), "none.pem"))
	t.Setenv("SSL_CERT_DIR", t.TempDir())
	t.Setenv("GODEBUG", "x509usefallbackroots=1")
	tlsroots.Fallback()
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil || pool.Equal(x509.NewCertPool()) {
		t.Fatalf("no roots without the system's: %v", err)
	}
}
