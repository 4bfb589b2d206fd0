package dial

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestConnectTimeIsClaimedOnce(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	c, err := New(time.Second, nil).Dial(context.Background(), "tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if first := ClaimConnect(c); first <= 0 {
		t.Errorf("first claim = %v, want the connect time", first)
	}
	if again := ClaimConnect(c); again != 0 {
		t.Errorf("second claim = %v, want 0", again)
	}
	raw, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if d := ClaimConnect(raw); d != 0 {
		t.Errorf("a connection not dialed here claimed %v", d)
	}
}

func TestDialTLSFailuresAreTyped(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	// Untrusted certificate: a *HandshakeError.
	_, err := New(time.Second, &tls.Config{}).DialTLS(context.Background(), "tcp", addr)
	var hs *HandshakeError
	if !errors.As(err, &hs) {
		t.Errorf("untrusted certificate: %v, want a *HandshakeError", err)
	}
	// Trusted, but the required protocol is not negotiated: ErrALPN.
	errNoH2 := errors.New("no h2")
	d := New(time.Second, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	d.NeedALPN, d.ErrALPN = "h2", errNoH2
	if _, err := d.DialTLS(context.Background(), "tcp", addr); !errors.Is(err, errNoH2) {
		t.Errorf("without h2: %v, want %v", err, errNoH2)
	}
	// Trusted and no protocol required: a timed connection.
	d.NeedALPN = ""
	c, err := d.DialTLS(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ClaimConnect(c) <= 0 {
		t.Error("a TLS connection's open time was not claimed through *tls.Conn")
	}
}
