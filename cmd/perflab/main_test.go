package main

import (
	"crypto/x509"
	"path/filepath"
	"testing"
)

// TestRootsWithoutTheSystems: on a system without CA certificates (as in
// perflab's image) perflab still has roots to verify a server with. Nothing
// in this test binary loaded the system's roots before.
func TestRootsWithoutTheSystems(t *testing.T) {
	t.Setenv("SSL_CERT_FILE", filepath.Join(t.TempDir(), "none.pem"))
	t.Setenv("SSL_CERT_DIR", t.TempDir())
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil || pool.Equal(x509.NewCertPool()) {
		t.Fatalf("no roots without the system's: %v", err)
	}
}
