package dial

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"syscall"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// maxMessage bounds Result.Message: one sample message per class is kept,
// and a message is for a person to read.
const maxMessage = driver.MaxMessage

// Classify maps the error of a failed request to its class and a short
// message (the error without net/http's `Get "url":` prefix), for every
// driver that speaks HTTP. In order:
//
//   - parentCtx done, or context.Canceled: Interrupted. The engine cut the
//     request short; cancellation surfaces as many errors (context
//     canceled, closed connection, stream reset), so the parent decides.
//   - context.DeadlineExceeded: Timeout (the driver's own deadline).
//   - *net.DNSError: DNS.
//   - TLS handshake, certificate and alert errors: TLS.
//   - any other error with a Timeout method saying so: Timeout.
//   - a failed dial, or the connection refused, reset, aborted or
//     unreachable: Connect. (Do reports a reset after the response began
//     as Protocol.)
//   - anything else: Protocol.
func Classify(err error, parentCtx context.Context) (stats.Class, string) {
	if err == nil {
		return stats.OK, ""
	}
	msg := message(err)
	var (
		dnsErr  *net.DNSError
		timeout interface{ Timeout() bool } // net.Error and the like
	)
	switch {
	case parentCtx != nil && parentCtx.Err() != nil, errors.Is(err, context.Canceled):
		return stats.Interrupted, msg
	case errors.Is(err, context.DeadlineExceeded):
		return stats.Timeout, msg
	case errors.As(err, &dnsErr):
		return stats.DNS, msg
	case isTLS(err):
		return stats.TLS, msg
	case errors.As(err, &timeout) && timeout.Timeout():
		return stats.Timeout, msg
	case isConnect(err):
		return stats.Connect, msg
	default:
		return stats.Protocol, msg
	}
}

func message(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	s := err.Error()
	if len(s) > maxMessage {
		s = s[:maxMessage-3] + "..."
	}
	return s
}

func isTLS(err error) bool {
	var (
		hs      *HandshakeError
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
		ech     *tls.ECHRejectionError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		roots   x509.SystemRootsError
		op      *net.OpError
	)
	return errors.As(err, &hs) || errors.As(err, &verify) ||
		errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &ech) || errors.As(err, &unknown) ||
		errors.As(err, &host) || errors.As(err, &invalid) ||
		errors.As(err, &roots) ||
		(errors.As(err, &op) && op.Op == "remote error") // a TLS alert from the peer
}

func isConnect(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	for _, e := range []error{
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.EPIPE,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// BodyClass is the class of an error met while reading a response body,
// given what Classify made of it: a connection that broke after the
// response began is a protocol failure, not a failure to connect.
func BodyClass(class stats.Class) stats.Class {
	if class == stats.Connect {
		return stats.Protocol
	}
	return class
}
