// Package shard is the protocol between the workers of a distributed run
// and their coordinator, whole: the store they share (a directory, or a
// bucket of an S3-compatible service), the layout of a run in it — the
// phases the coordinator announces, the intervals and ends each worker
// writes — the wire forms of intervals and of a worker's end (Detail),
// and the merge of the workers' intervals. A worker needs this package
// alone; the coordinator's code (internal/fleet) is not a worker's.
package shard

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/secret"
)

// Store holds a run's shared objects under keys such as
// "RUN/phases/0/shard-1/part-3.json". Keys use '/' and never begin with it.
type Store interface {
	// Put writes an object whole; a reader sees all of it or none.
	Put(ctx context.Context, key string, data []byte) error
	// Get reads an object; a missing one is an error wrapping fs.ErrNotExist.
	Get(ctx context.Context, key string) ([]byte, error)
	// List is the keys that begin with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Where says where the store is, without credentials, for messages.
	Where() string
}

// Open returns the store a URL names: "s3://BUCKET/PREFIX?endpoint=URL"
// (an S3-compatible service; credentials from the environment, see
// NewS3), or "file:///DIR" or a plain path (a directory, such as a volume
// every worker mounts).
func Open(raw string) (Store, error) {
	kind, u, err := parseURL(raw)
	switch {
	case err != nil:
		return nil, err
	case kind == "s3":
		return NewS3(u)
	}
	return NewDir(u.Path)
}

// CheckURL says what is wrong with a store URL without opening the store:
// what Open would refuse before it creates a directory or reads
// credentials, for a store that other processes (a Job's workers) open.
func CheckURL(raw string) error {
	kind, u, err := parseURL(raw)
	if err == nil && kind == "s3" {
		_, err = s3Endpoint(u)
	}
	return err
}

// parseURL tells a store URL's kind, "s3" or "dir", and its URL (for a
// directory, its Path is the directory).
func parseURL(raw string) (string, *url.URL, error) {
	if raw == "" {
		return "", nil, errors.New("cannot open the shared store: no URL given")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 { // "C:" is not a scheme
		return "dir", &url.URL{Path: raw}, nil
	}
	switch u.Scheme {
	case "file":
		if u.User != nil {
			return "", nil, errors.New("cannot open the shared store: a file URL holds no credentials (file:///dir)")
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", nil, fmt.Errorf("cannot open the shared store %q: a file URL names a local path (file:///dir)", secret.URL(raw))
		}
		return "dir", u, nil
	case "s3":
		return "s3", u, nil
	}
	return "", nil, fmt.Errorf("cannot open the shared store %q: scheme %q is not s3:// or file://", secret.URL(raw), u.Scheme)
}

// Dir is a store in a directory.
type Dir struct {
	root string
}

var _ Store = (*Dir)(nil)

// NewDir returns the store in dir, creating it if needed.
func NewDir(dir string) (*Dir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open the shared store %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("cannot open the shared store %q: %w", dir, err)
	}
	return &Dir{root: abs}, nil
}

// Where is the directory.
func (d *Dir) Where() string { return d.root }

func (d *Dir) path(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

// checkKey refuses keys that would leave the store's root.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") {
		return fmt.Errorf("invalid store key %q", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("invalid store key %q", key)
		}
	}
	return nil
}

// Put writes data to a temporary file beside the object and renames it into
// place, so a reader never sees half of it.
func (d *Dir) Put(_ context.Context, key string, data []byte) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("cannot write %s: %w", key, err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", key, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("cannot write %s: %w", key, err)
	}
	return nil
}

// Get reads an object.
func (d *Dir) Get(_ context.Context, key string) ([]byte, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", key, err)
	}
	return b, nil
}

// List walks the directory for keys under prefix.
func (d *Dir) List(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	err := filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() || strings.HasPrefix(e.Name(), ".put-") {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list %s: %w", prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}
