package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/perflab/perflab/internal/secret"
)

// S3 is a store in a bucket of an S3-compatible service, under a prefix.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string // "" or ending in "/"
	where  string
}

var _ Store = (*S3)(nil)

// NewS3 opens s3://BUCKET/PREFIX. Query parameters: endpoint (the
// service's URL; default https://s3.amazonaws.com), region, and
// path_style=1 for services that want path-style requests (versitygw,
// MinIO without DNS). Credentials come only from the environment:
// PERFLAB_S3_ACCESS_KEY and PERFLAB_S3_SECRET_KEY, else AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; a URL holding credentials
// is refused, so that none is ever written into a manifest or a report.
func NewS3(u *url.URL) (*S3, error) {
	ep, err := s3Endpoint(u)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	access, secret, token, err := s3Credentials()
	if err != nil {
		return nil, fmt.Errorf("cannot open the shared store s3://%s: %w", u.Host, err)
	}
	lookup := minio.BucketLookupAuto
	if q.Get("path_style") == "1" || q.Get("path_style") == "true" {
		lookup = minio.BucketLookupPath
	}
	region := q.Get("region")
	if region == "" {
		region = "us-east-1"
	}
	client, err := minio.New(ep.Host, &minio.Options{
		Creds: credentials.NewStaticV4(access, secret, token), Secure: ep.Scheme == "https",
		Region: region, BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("cannot open the shared store s3://%s: %w", u.Host, err)
	}
	client.SetAppInfo("perflab", "shard")
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &S3{client: client, bucket: u.Host, prefix: prefix,
		where: fmt.Sprintf("s3://%s/%s at %s", u.Host, prefix, ep.Host)}, nil
}

// s3Endpoint checks an s3:// store URL — no credentials in it, a bucket,
// an http(s) endpoint — and returns the endpoint.
func s3Endpoint(u *url.URL) (*url.URL, error) {
	if err := credentialsIn(u); err != nil {
		return nil, err
	}
	if u.Host == "" {
		return nil, fmt.Errorf("cannot open the shared store %q: no bucket (s3://BUCKET/PREFIX)", secret.URL(u.String()))
	}
	q := u.Query()
	ep, err := url.Parse(q.Get("endpoint"))
	if q.Get("endpoint") == "" {
		ep, err = url.Parse("https://s3.amazonaws.com")
	}
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
		return nil, fmt.Errorf("cannot open the shared store s3://%s: endpoint %q must be an http:// or https:// URL", u.Host, secret.URL(q.Get("endpoint")))
	}
	return ep, nil
}

// s3Query are the query parameters an s3:// store URL may have.
var s3Query = map[string]bool{"endpoint": true, "region": true, "path_style": true}

// credentialsIn refuses an s3:// store URL that holds credentials, in its
// user info, in its endpoint's or in its query, or that has a query
// parameter perflab does not know (a misspelt one would be ignored). The
// error names the parameter, never its value: the URL is refused before it
// is stored or shown anywhere.
func credentialsIn(u *url.URL) error {
	const where = "put credentials in PERFLAB_S3_ACCESS_KEY and PERFLAB_S3_SECRET_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), not in the URL"
	if u.User != nil {
		return fmt.Errorf("cannot open the shared store s3://%s: %s", u.Host, where)
	}
	q := u.Query()
	if ep, err := url.Parse(q.Get("endpoint")); err == nil && ep.User != nil {
		return fmt.Errorf("cannot open the shared store s3://%s: its endpoint holds user info; %s", u.Host, where)
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		switch {
		case secret.SensitiveName(k):
			return fmt.Errorf("cannot open the shared store s3://%s: query parameter %q holds a credential; %s", u.Host, k, where)
		case !s3Query[k]:
			return fmt.Errorf("cannot open the shared store s3://%s: unknown query parameter %q (want endpoint, region or path_style)", u.Host, k)
		}
	}
	return nil
}

// s3Credentials is the store's key pair from the environment:
// PERFLAB_S3_ACCESS_KEY and PERFLAB_S3_SECRET_KEY, else AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. A pair with one half
// missing, or none at all, is refused: the requests would go unsigned and
// the service's answer ("Anonymous users cannot…") would not say which
// variable is missing.
func s3Credentials() (access, secret, token string, err error) {
	pairs := [][2]string{{"PERFLAB_S3_ACCESS_KEY", "PERFLAB_S3_SECRET_KEY"}, {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}}
	for i, p := range pairs {
		access, secret = os.Getenv(p[0]), os.Getenv(p[1])
		switch {
		case access != "" && secret != "":
			if i == 1 {
				token = os.Getenv("AWS_SESSION_TOKEN")
			}
			return access, secret, token, nil
		case access != "":
			return "", "", "", fmt.Errorf("%s is set but %s is not", p[0], p[1])
		case secret != "":
			return "", "", "", fmt.Errorf("%s is set but %s is not", p[1], p[0])
		}
	}
	return "", "", "", errors.New("no credentials: set PERFLAB_S3_ACCESS_KEY and PERFLAB_S3_SECRET_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) in the environment")
}

// Where is the bucket, prefix and endpoint.
func (s *S3) Where() string { return s.where }

// Put uploads an object in one request.
func (s *S3) Put(ctx context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	_, err := s.client.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{DisableMultipart: true, ContentType: "application/json"})
	if err != nil {
		return fmt.Errorf("cannot write %s to %s: %w", key, s.where, err)
	}
	return nil
}

// Get downloads an object.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err == nil {
		var b []byte
		if b, err = io.ReadAll(obj); err == nil {
			obj.Close()
			return b, nil
		}
		obj.Close()
	}
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return nil, fmt.Errorf("cannot read %s from %s: %w", key, s.where, fs.ErrNotExist)
	}
	return nil, fmt.Errorf("cannot read %s from %s: %w", key, s.where, err)
}

// List lists the keys under prefix.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("cannot list %s in %s: %w", prefix, s.where, obj.Err)
		}
		keys = append(keys, strings.TrimPrefix(obj.Key, s.prefix))
	}
	sort.Strings(keys)
	return keys, nil
}

// EnsureBucket creates the bucket if it does not exist.
func (s *S3) EnsureBucket(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err == nil && !ok {
		err = s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{})
	}
	if err != nil {
		return fmt.Errorf("cannot create bucket %s at %s: %w", s.bucket, s.where, err)
	}
	return nil
}
