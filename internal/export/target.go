package export

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/secret"
)

// Kind is the protocol a target speaks.
type Kind string

// The kinds of target.
const (
	RemoteWrite Kind = "remote-write" // Prometheus remote write 1.0
	OTLP        Kind = "otlp"         // OTLP metrics: http(s):// over HTTP/protobuf, grpc(s):// over gRPC
)

// Kinds are the kinds a target may have, as flags and plans write them.
var Kinds = []Kind{RemoteWrite, OTLP}

// DefaultInterval is how often a target is sent what is queued, unless
// it says otherwise.
const DefaultInterval = time.Second

// Target is where measurements go. Header holds credentials: use it,
// never show or store it.
type Target struct {
	Kind     Kind
	URL      string
	Header   http.Header
	Interval time.Duration // 0: DefaultInterval
	// NativeHistograms sends the latency as a native histogram too
	// (remote write only; Prometheus needs
	// --enable-feature=native-histograms before 3.x).
	NativeHistograms bool
}

// ParseFlag reads a target as --export gives it: KIND=URL.
func ParseFlag(v string) (Target, error) {
	kind, u, ok := strings.Cut(v, "=")
	if !ok || u == "" {
		return Target{}, fmt.Errorf("--export %q: want KIND=URL, KIND one of %s", v, kindList())
	}
	t := Target{Kind: Kind(strings.TrimSpace(kind)), URL: strings.TrimSpace(u)}
	if errs := t.Validate(); len(errs) > 0 {
		return Target{}, fmt.Errorf("--export %s=%s: %w", t.Kind, secret.URL(t.URL), errors.Join(errs...))
	}
	return t, nil
}

// kindMeant is the kind a user who named a system rather than a protocol
// meant: Prometheus, VictoriaMetrics, Mimir and Thanos take remote
// write; an OpenTelemetry collector takes OTLP.
func kindMeant(k Kind) Kind {
	switch strings.ToLower(string(k)) {
	case "prometheus", "prom", "victoriametrics", "victoria-metrics", "vm", "mimir", "thanos", "cortex", "remote_write", "remotewrite", "rw":
		return RemoteWrite
	case "otel", "opentelemetry", "otlp-grpc", "otlp-http", "otelcol":
		return OTLP
	}
	return ""
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// Validate lists every problem with t.
func (t Target) Validate() []error {
	var errs []error
	switch t.Kind {
	case RemoteWrite, OTLP:
	default:
		err := fmt.Errorf("unknown kind %q: want one of %s", t.Kind, kindList())
		if k := kindMeant(t.Kind); k != "" {
			err = fmt.Errorf("%w (%s takes %s: %s=URL)", err, t.Kind, k, k)
		}
		errs = append(errs, err)
	}
	if err := CheckURL(t.Kind, t.URL); err != nil {
		errs = append(errs, err)
	}
	if t.NativeHistograms && t.Kind != RemoteWrite {
		errs = append(errs, fmt.Errorf("native histograms are sent over remote-write only, not %s", t.Kind))
	}
	if t.Interval < 0 {
		errs = append(errs, fmt.Errorf("interval %v must be > 0", t.Interval))
	}
	return errs
}

// CheckURL says what is wrong with raw as the URL of a target of kind k:
// http or https, or for OTLP also grpc or grpcs (plaintext or TLS gRPC),
// with a host.
func CheckURL(k Kind, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("url %q: want an absolute URL like http://host:port/path", secret.URL(raw))
	}
	switch u.Scheme {
	case "http", "https":
		return nil
	case "grpc", "grpcs":
		if k == OTLP {
			return nil
		}
	}
	want := "http or https"
	if k == OTLP {
		want = "http, https (OTLP/HTTP), grpc or grpcs (OTLP/gRPC)"
	}
	return fmt.Errorf("url %s: scheme %q: want %s", secret.URL(raw), u.Scheme, want)
}

// ParseHeader reads a header as -H gives it: 'Name: value'.
func ParseHeader(line string) (name, value string, err error) {
	k, v, ok := strings.Cut(line, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return "", "", fmt.Errorf("header %q: want 'Name: value'", line)
	}
	return strings.TrimSpace(k), strings.TrimSpace(v), nil
}

// Shown is t's URL as perflab shows and stores it (secret.URL).
func (t Target) Shown() string { return secret.URL(t.URL) }

func (t Target) interval() time.Duration {
	if t.Interval > 0 {
		return t.Interval
	}
	return DefaultInterval
}
