package s3driver

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/secret"
)

// Redacted describes c in one line, for logs and reports, without any
// credential: the endpoint as secret.URL shows it, the bucket, the mix, the
// sizes, the objects and where credentials come from. It works on an
// invalid Config too, showing what it can.
func (c Config) Redacted() string {
	s, _ := c.parse()
	var b strings.Builder
	b.WriteString("s3 ")
	if len(s.ops.values) > 0 {
		b.WriteString(s.ops.describe(opKind.String))
	}
	if s.endpoint != nil {
		b.WriteString(" " + secret.URL(s.endpoint.String()))
	} else if _, err := url.Parse(c.Endpoint); err == nil {
		b.WriteString(" " + secret.URL(c.Endpoint))
	}
	b.WriteString(" bucket " + strconv.Quote(c.Bucket))
	if len(s.sizes.values) > 0 {
		b.WriteString(", objects of " + s.sizes.describe(sizeText))
	}
	if c.Objects > 0 {
		b.WriteString(", " + strconv.Itoa(c.Objects) + " prepared")
	}
	if c.KeyPrefix != "" {
		b.WriteString(" under " + strconv.Quote(c.KeyPrefix))
	}
	switch {
	case c.AccessKey != "":
		b.WriteString(", credentials from config")
	case c.SecretKey != "":
		b.WriteString(", secret_key without access_key")
	default:
		b.WriteString(", credentials from AWS_ACCESS_KEY_ID or none")
	}
	return b.String()
}

// String is Redacted, so that printing a Config never shows a secret.
func (c Config) String() string { return c.Redacted() }

// GoString is Redacted too, for %#v.
func (c Config) GoString() string { return "s3driver.Config{" + c.Redacted() + "}" }

// Facts describes the workload for reports. Nothing secret: no key, no
// token, not even the access key ID. With Link set it gives
// link_bytes_per_second and link_bound_bytes_per_second (LinkBoundFraction
// of it): a measured GET + PUT throughput at or above the latter means the
// network link, not the server, set the limit.
func (d *Driver) Facts() []driver.Fact {
	s := &d.spec
	payload := "UNSIGNED-PAYLOAD"
	if d.cfg.SignPayload && s.endpoint.Scheme == "http" {
		payload = "signed in chunks (STREAMING-AWS4-HMAC-SHA256-PAYLOAD)"
	}
	addressing := map[string]string{"": "auto", PathStyleAuto: "auto", PathStyleTrue: "path style", PathStyleFalse: "virtual-host style"}[d.cfg.PathStyle]
	facts := []driver.Fact{
		{Name: "endpoint", Value: secret.URL(s.endpoint.String())},
		{Name: "bucket", Value: d.bucket},
		{Name: "addressing", Value: addressing},
		{Name: "region", Value: d.cfg.Region},
		{Name: "credentials", Value: d.creds},
		{Name: "ops", Value: s.ops.describe(opKind.String)},
		{Name: "object_size", Value: s.sizes.describe(sizeText)},
		{Name: "mean_object_size_bytes", Value: strconv.FormatFloat(s.sizes.mean(func(n int64) float64 { return float64(n) }), 'f', 0, 64)},
		{Name: "objects", Value: strconv.Itoa(d.objects)},
		{Name: "key_prefix", Value: d.prefix},
		{Name: "put_payload", Value: payload},
		{Name: "client", Value: "minio-go v7, HTTP/1.1 keep-alive, compression off, no retries, single-request PUT"},
	}
	if s.link > 0 {
		facts = append(facts,
			driver.Fact{Name: "link", Value: formatBits(s.link)},
			driver.Fact{Name: "link_bytes_per_second", Value: strconv.FormatFloat(s.link, 'f', 0, 64)},
			driver.Fact{Name: "link_bound_bytes_per_second", Value: strconv.FormatFloat(LinkBoundFraction*s.link, 'f', 0, 64)},
			driver.Fact{Name: "link_bound_rule", Value: "link-bound when GET+PUT throughput >= " +
				strconv.FormatFloat(100*LinkBoundFraction, 'f', 0, 64) + " % of the link"},
		)
	}
	return facts
}
