package s3driver

import (
	"crypto/x509"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/dial"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/units"
)

// Defaults for the fields of Config left empty.
const (
	DefaultSize               = "1MiB"
	DefaultTimeout            = 30 * time.Second
	DefaultRegion             = "us-east-1" // when neither region nor AWS_REGION is set
	DefaultPrepareConcurrency = 32
)

// Limits checked by Validate.
const (
	// MaxObjectSize bounds size and sizes: the driver holds one random
	// buffer of the largest size (plus payloadSlack) for every PUT body.
	MaxObjectSize = 1 << 30
	// MaxObjects bounds objects.
	MaxObjects = 100_000_000
)

// The values of Config.PathStyle.
const (
	PathStyleAuto  = "auto"  // virtual-host style for AWS and Google endpoints, path style for the rest (minio-go's rule)
	PathStyleTrue  = "true"  // http://host/bucket/key
	PathStyleFalse = "false" // http://bucket.host/key
)

// Config describes an S3 workload. It decodes from YAML as written in a
// plan's params (unknown fields are the decoder's to reject): sizes,
// durations and the link are strings, parsed by Validate and New with
// internal/units and time.ParseDuration, so every problem is reported at
// once with the text the user wrote. Credentials are never printed: use
// Redacted (String and GoString call it) to describe a Config.
type Config struct {
	Endpoint     string `yaml:"endpoint"`      // http(s)://host[:port]; required
	Bucket       string `yaml:"bucket"`        // required
	CreateBucket bool   `yaml:"create_bucket"` // Prepare creates it when missing; Cleanup removes it if Prepare created it
	Region       string `yaml:"region"`        // default $AWS_REGION, else DefaultRegion
	AccessKey    string `yaml:"access_key"`    // default $AWS_ACCESS_KEY_ID (with $AWS_SECRET_ACCESS_KEY, $AWS_SESSION_TOKEN)
	SecretKey    string `yaml:"secret_key"`
	SessionToken string `yaml:"session_token"`
	PathStyle    string `yaml:"path_style"` // PathStyleAuto (default), PathStyleTrue or PathStyleFalse

	// Ops weighs the operations, each Do picks one: {get: 80, put: 15,
	// delete: 5}. Names: get, put, head, delete, list (any case). Default
	// {get: 1}.
	Ops map[string]int `yaml:"ops"`
	// Size is the size of every object PUT or prepared ("4MiB", "1KiB",
	// "512"); Sizes weighs several ({1KiB: 50, 1MiB: 20}). Give one;
	// default DefaultSize.
	Size  string         `yaml:"size"`
	Sizes map[string]int `yaml:"sizes"`
	// Objects is the number of fixed-name objects (KeyPrefix/obj-000123)
	// Prepare uploads and GET and HEAD read. Required when ops has get or
	// head.
	Objects int `yaml:"objects"`
	// KeyPrefix is prepended to every key perflab writes. Default
	// "perflab-<random>/", unique to the Driver.
	KeyPrefix string `yaml:"key_prefix"`
	// PutOverwrite makes PUT overwrite a random fixed-name object instead
	// of writing a new name, so the data set stays at Objects objects.
	PutOverwrite bool `yaml:"put_overwrite"`

	Timeout  string `yaml:"timeout"`  // one operation, connect to last body byte; default DefaultTimeout
	Insecure bool   `yaml:"insecure"` // skip TLS certificate verification
	CAFile   string `yaml:"ca_file"`  // PEM bundle trusted instead of the system roots

	// Link is the network link's capacity, "10Gbps", "100Mbit/s" or a byte
	// rate like "1.25GB/s": not enforced, reported as a Fact so a report
	// can tell a link-bound result (see LinkBoundFraction).
	Link string `yaml:"link"`

	Seed               uint64 `yaml:"seed"`                // seeds each VU's choices: same seed and VU, same sequence
	SignPayload        bool   `yaml:"sign_payload"`        // plain http: sign PUT bodies chunk by chunk instead of UNSIGNED-PAYLOAD
	PrepareConcurrency int    `yaml:"prepare_concurrency"` // parallel uploads in Prepare, deletes in Cleanup; default DefaultPrepareConcurrency
}

// ParamKeys declares which params say where the objects are (endpoint,
// bucket and its set-up, region, addressing, TLS trust, credentials) and
// which hold credentials, with the environment variables read for them
// when the params give none.
func (Config) ParamKeys() driver.ParamKeys {
	return driver.ParamKeys{
		Place: []string{"endpoint", "bucket", "create_bucket", "key_prefix", "region", "path_style", "ca_file", "insecure",
			"access_key", "secret_key", "session_token"},
		Secret:    []string{"access_key", "secret_key", "session_token"},
		SecretEnv: []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"},
	}
}

// Paths are c's file paths, which a plan writes relative to itself.
func (c *Config) Paths() []*string { return []*string{&c.CAFile} }

// spec is a Config parsed and defaulted: what New builds from.
type spec struct {
	endpoint  *url.URL
	lookup    minio.BucketLookupType
	ops       weights[opKind]
	sizes     weights[int64]
	maxSize   int64
	timeout   time.Duration
	link      float64 // bytes per second; 0 when not given
	prefix    string  // ends with "/" unless empty
	prepConc  int
	caPool    *x509.CertPool
	hasFresh  bool // PUT writes fresh names
	deleteFix bool // DELETE claims fixed-name objects (no PUT in the mix)
}

// Validate reports every problem with c at once; nil means New accepts it.
// Messages never contain a credential.
func (c Config) Validate() []error {
	_, errs := c.parse()
	return errs
}

// addFunc adds a problem with the param key to those parse finds.
type addFunc func(key, format string, a ...any)

// parse checks c and fills in its defaults.
func (c Config) parse() (spec, []error) {
	var s spec
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, format, a...)) }

	s.endpoint = c.parseEndpoint(add)
	if c.Bucket == "" {
		add("bucket", "bucket is required")
	} else if err := s3utils.CheckValidBucketName(c.Bucket); err != nil {
		add("bucket", "bucket %q is not a valid bucket name: %v", c.Bucket, err)
	}
	switch c.PathStyle {
	case "", PathStyleAuto:
		s.lookup = minio.BucketLookupAuto
	case PathStyleTrue:
		s.lookup = minio.BucketLookupPath
	case PathStyleFalse:
		s.lookup = minio.BucketLookupDNS
	default:
		add("path_style", "path_style %q is unknown (want true, false or auto)", c.PathStyle)
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		key := "access_key" // the one given without the other
		if c.AccessKey == "" {
			key = "secret_key"
		}
		add(key, "access_key and secret_key go together: give both or neither (then AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are used)")
	}
	if c.SessionToken != "" && c.AccessKey == "" {
		add("session_token", "session_token needs access_key and secret_key")
	}
	s.ops = c.parseOps(add)
	s.sizes, s.maxSize = c.parseSizes(add)
	c.parseKeys(&s, add)
	errs = append(errs, c.parseTransport(&s)...)
	return s, errs
}

// parseTransport checks the timeout, link, TLS and concurrency fields.
func (c Config) parseTransport(s *spec) []error {
	var errs []error
	add := func(key, format string, a ...any) { errs = append(errs, driver.ParamErrorf(key, format, a...)) }
	s.timeout = DefaultTimeout
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		switch {
		case err != nil:
			add("timeout", "cannot parse timeout %q: want a duration like 30s or 500ms", c.Timeout)
		case d <= 0:
			add("timeout", "timeout %q must be positive", c.Timeout)
		default:
			s.timeout = d
		}
	}
	if c.Link != "" {
		v, err := parseLink(c.Link)
		if err != nil {
			errs = append(errs, driver.WithKey("link", err))
		}
		s.link = v
	}
	if c.CAFile != "" {
		pool, err := dial.LoadCA(c.CAFile)
		if err != nil {
			errs = append(errs, driver.WithKey("ca_file", err))
		}
		s.caPool = pool
	}
	s.prepConc = DefaultPrepareConcurrency
	if c.PrepareConcurrency < 0 {
		add("prepare_concurrency", "prepare_concurrency %d is negative", c.PrepareConcurrency)
	} else if c.PrepareConcurrency > 0 {
		s.prepConc = c.PrepareConcurrency
	}
	return errs
}

func (c Config) parseEndpoint(add addFunc) *url.URL {
	if c.Endpoint == "" {
		add("endpoint", "endpoint is required (the S3 server's URL, like http://127.0.0.1:9000 or https://s3.us-east-1.amazonaws.com)")
		return nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		add("endpoint", "cannot parse endpoint: want a URL like http://127.0.0.1:9000")
		return nil
	}
	shown := secret.URL(c.Endpoint)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		add("endpoint", "endpoint %q: scheme must be http or https", shown)
	case u.Host == "":
		add("endpoint", "endpoint %q: host is missing", shown)
	case driver.BadPort(u) != "":
		add("endpoint", "endpoint %q: %s", shown, driver.BadPort(u))
	case u.User != nil:
		add("endpoint", "endpoint %q: credentials go in access_key and secret_key, not in the URL", shown)
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		add("endpoint", "endpoint %q: give the server's URL only, without a path or query (the bucket goes in bucket)", shown)
	default:
		if c.CAFile != "" && u.Scheme != "https" {
			add("ca_file", "ca_file is set but endpoint %q is not https", shown)
		}
		return u
	}
	return nil
}

func (c Config) parseOps(add addFunc) weights[opKind] {
	if len(c.Ops) == 0 {
		return newWeights([]opKind{opGet}, []int{1})
	}
	names := slices.Sorted(maps.Keys(c.Ops))
	var kinds []opKind
	var ws []int
	for _, name := range names {
		k, ok := parseOp(name)
		w := c.Ops[name]
		switch {
		case !ok:
			add("ops", "ops: unknown operation %q (want get, put, head, delete or list)", name)
		case w < 0:
			add("ops", "ops: weight %d of %s is negative", w, name)
		case w > 0:
			kinds = append(kinds, k)
			ws = append(ws, w)
		}
	}
	if len(kinds) == 0 {
		add("ops", "ops: no operation has a positive weight")
	}
	return newWeights(kinds, ws)
}

func (c Config) parseSizes(add addFunc) (weights[int64], int64) {
	if c.Size != "" && len(c.Sizes) > 0 {
		add("size", "give size or sizes, not both")
	}
	raw, key := c.Sizes, "sizes"
	if len(raw) == 0 {
		key = "size"
		size := c.Size
		if size == "" {
			size = DefaultSize
		}
		raw = map[string]int{size: 1}
	}
	var sizes []int64
	var ws []int
	var maxSize int64
	bad := false
	for _, text := range slices.Sorted(maps.Keys(raw)) {
		n, err := units.ParseBytes(text)
		w := raw[text]
		switch {
		case err != nil:
			add(key, "%v", err)
		case n > MaxObjectSize:
			add(key, "object size %s is above the driver's limit of 1 GiB", text)
		case w < 0:
			add(key, "sizes: weight %d of %s is negative", w, text)
		case w > 0:
			sizes = append(sizes, n)
			ws = append(ws, w)
			maxSize = max(maxSize, n)
			continue
		default:
			continue
		}
		bad = true
	}
	if len(sizes) == 0 && len(c.Sizes) > 0 && !bad {
		add("sizes", "sizes: no size has a positive weight")
	}
	return newWeights(sizes, ws), maxSize
}

// parseKeys checks the fields that decide which keys each operation uses.
func (c Config) parseKeys(s *spec, add addFunc) {
	if c.Objects < 0 || c.Objects > MaxObjects {
		add("objects", "objects %d must be between 0 and %d", c.Objects, MaxObjects)
	}
	has := func(k opKind) bool { return s.ops.has(k) }
	if (has(opGet) || has(opHead)) && c.Objects <= 0 {
		add("ops", "ops get and head read the objects Prepare uploads: set objects (for example objects: 1000)")
	}
	if c.PutOverwrite && c.Objects <= 0 {
		add("put_overwrite", "put_overwrite overwrites the prepared objects: set objects")
	}
	if c.PutOverwrite && has(opDelete) {
		add("put_overwrite", "delete removes objects PUT under new names, and put_overwrite writes none: drop one of them")
	}
	s.hasFresh = has(opPut) && !c.PutOverwrite
	s.deleteFix = has(opDelete) && !has(opPut)
	if s.deleteFix && c.Objects <= 0 {
		add("ops", "delete without put removes the prepared objects: set objects")
	}
	s.prefix = c.KeyPrefix
	if s.prefix != "" && !strings.HasSuffix(s.prefix, "/") {
		s.prefix += "/"
	}
	if c.KeyPrefix != "" {
		if err := s3utils.CheckValidObjectNamePrefix(c.KeyPrefix); err != nil || strings.HasPrefix(c.KeyPrefix, "/") || len(c.KeyPrefix) > 512 {
			add("key_prefix", "key_prefix %q is not a valid key prefix (no leading /, at most 512 bytes of UTF-8)", c.KeyPrefix)
		}
	}
}
