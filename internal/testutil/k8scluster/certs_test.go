//go:build linux

package k8scluster

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCertificatesChainToTheCA(t *testing.T) {
	dir := t.TempDir()
	ca, err := newCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.issue(dir, certSpec{name: "srv", cn: "kube-apiserver", server: true,
		ips: []net.IP{net.IPv4(127, 0, 0, 1)}, dns: []string{"vm"}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.issue(dir, certSpec{name: "node", cn: "system:node:vm", orgs: []string{"system:nodes"}})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	if _, err := srv.cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("serving cert for 127.0.0.1: %v", err)
	}
	if _, err := srv.cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "vm"}); err != nil {
		t.Errorf("serving cert for the host name: %v", err)
	}
	if _, err := client.cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client cert: %v", err)
	}
	if got := client.cert.Subject.Organization; len(got) != 1 || got[0] != "system:nodes" {
		t.Errorf("client cert organisation = %v, want the group system:nodes", got)
	}
	if fi, err := os.Stat(filepath.Join(dir, "node.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("node.key: %v, %v; want mode 0600", fi, err)
	}
	kc := filepath.Join(dir, "node.kubeconfig")
	if err := writeKubeconfig(kc, "https://127.0.0.1:6443", ca, client); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(kc)
	for _, want := range []string{`server: "https://127.0.0.1:6443"`, `name: "system:node:vm"`, `client-key: "` + client.keyFile + `"`} {
		if !strings.Contains(string(text), want) {
			t.Errorf("kubeconfig lacks %s:\n%s", want, text)
		}
	}
}
