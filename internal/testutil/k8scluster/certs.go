//go:build linux

package k8scluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is how long the cluster's certificates are valid: a test
// cluster lives minutes; a day leaves room for a clock that is off.
const certValidity = 24 * time.Hour

// keyPair is a certificate and its private key, in memory and as PEM
// files in the cluster's pki directory.
type keyPair struct {
	cert     *x509.Certificate
	key      crypto.Signer
	certPEM  []byte
	keyPEM   []byte
	certFile string
	keyFile  string
}

// certSpec says what one certificate is for.
type certSpec struct {
	name   string // file name without extension
	cn     string
	orgs   []string
	server bool // serving cert (else a client cert)
	dns    []string
	ips    []net.IP
}

// newCA makes the cluster's self-signed certificate authority and writes
// it to dir as ca.crt and ca.key.
func newCA(dir string) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("cannot generate the CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "perflab-test-cluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("cannot create the CA certificate: %w", err)
	}
	return writePair(dir, "ca", der, key)
}

// issue makes a certificate signed by ca and writes it to dir as
// NAME.crt and NAME.key.
func (ca *keyPair) issue(dir string, s certSpec) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("cannot generate the %s key: %w", s.name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: s.cn, Organization: s.orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:     s.dns,
		IPAddresses:  s.ips,
	}
	if s.server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("cannot create the %s certificate: %w", s.name, err)
	}
	return writePair(dir, s.name, der, key)
}

// writePair encodes a certificate and its key as PEM and writes them.
func writePair(dir, name string, der []byte, key *ecdsa.PrivateKey) (*keyPair, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("cannot parse the %s certificate: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the %s key: %w", name, err)
	}
	p := &keyPair{
		cert:     cert,
		key:      key,
		certPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		certFile: filepath.Join(dir, name+".crt"),
		keyFile:  filepath.Join(dir, name+".key"),
	}
	if err := os.WriteFile(p.certFile, p.certPEM, 0o644); err != nil {
		return nil, fmt.Errorf("cannot write the %s certificate: %w", name, err)
	}
	if err := os.WriteFile(p.keyFile, p.keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("cannot write the %s key: %w", name, err)
	}
	return p, nil
}

// serviceAccountKeys writes the key pair that the API server signs service
// account tokens with (sa.key) and checks them with (sa.pub).
func serviceAccountKeys(dir string) (keyFile, pubFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("cannot generate the service account key: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", fmt.Errorf("cannot encode the service account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return "", "", fmt.Errorf("cannot encode the service account public key: %w", err)
	}
	keyFile, pubFile = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", fmt.Errorf("cannot write the service account key: %w", err)
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		return "", "", fmt.Errorf("cannot write the service account public key: %w", err)
	}
	return keyFile, pubFile, nil
}

// writeKubeconfig writes a kubeconfig that reaches server as the client
// of pair, trusting ca.
func writeKubeconfig(path, server string, ca, client *keyPair) error {
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: perflab-test
  cluster:
    server: %q
    certificate-authority: %q
users:
- name: %q
  user:
    client-certificate: %q
    client-key: %q
contexts:
- name: perflab-test
  context: {cluster: perflab-test, user: %q}
current-context: perflab-test
`, server, ca.certFile, client.cert.Subject.CommonName, client.certFile, client.keyFile, client.cert.Subject.CommonName)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("cannot write kubeconfig %s: %w", path, err)
	}
	return nil
}

// serial is a random certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
