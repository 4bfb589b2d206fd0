package httpdriver

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/perflab/perflab/internal/driver/dial"
)

// A server's close of an idle TLS connection (its close_notify alert, a
// whole record) is seen whole in the socket, so that the look at it may
// take its time to read it: on a busy machine a 1 ms deadline passed
// before the read and the close went uncounted. Part of a record is not
// whole.
func TestWholeRecord(t *testing.T) {
	ln, conf, ca := tlsListener(t)
	defer ln.Close()
	raw := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			raw <- nil
			return
		}
		s := tls.Server(c, conf)
		if s.Handshake() != nil {
			raw <- nil
			return
		}
		_ = s.Close() // close_notify, then the end
		raw <- nil
	}()
	pool, err := dial.LoadCA(ca)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "example.com", NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	<-raw
	p := newPeeker(conn)
	waitReadable(t, p)
	if !p.wholeRecord() {
		t.Error("the server's close_notify is not seen as a whole record")
	}
	if state, _ := p.look(); state != idleClosed {
		t.Errorf("the server's close of an idle connection is %v, want idleClosed", state)
	}

	a, b := tcpPair(t)
	_, _ = b.Write([]byte{23, 3, 3, 0, 100, 1, 2, 3}) // a header of 100 bytes, 3 of them
	q := peeker{}
	q.raw, _ = a.(*net.TCPConn).SyscallConn()
	waitReadable(t, q)
	if q.wholeRecord() {
		t.Error("3 bytes of a 100-byte record are a whole record")
	}
}

// waitReadable waits until p's socket has bytes (or an end) to read.
func waitReadable(t *testing.T, p peeker) {
	t.Helper()
	var buf [1]byte
	if err := p.raw.Read(func(fd uintptr) bool {
		_, again, _ := peekSocket(fd, buf[:])
		return !again
	}); err != nil {
		t.Fatal(err)
	}
}

// tcpPair is two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		done <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-done
	if b == nil {
		t.Fatal("no accepted connection")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}
