package k8s

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Annotations of the image's entry in an archive's index.json: the name
// containerd gives the image it imports (ctr, kind, k3d), and the tag
// that skopeo's oci-archive:FILE:TAG and the OCI layout convention go by
// (as docker save and BuildKit write them).
const (
	AnnotationContainerdName = "io.containerd.image.name"
	AnnotationRefName        = "org.opencontainers.image.ref.name"
)

// ParseImageRef is the image reference s, a repository with a tag (the
// tag defaultTag when s has none); a digest is refused: an image's name
// in an archive or a registry is a tag.
func ParseImageRef(s, defaultTag string) (name.Tag, error) {
	if strings.Contains(s, "@") {
		return name.Tag{}, fmt.Errorf("image reference %q: name it by a tag, not a digest", s)
	}
	t, err := name.NewTag(s, name.WithDefaultTag(defaultTag))
	if err != nil {
		return name.Tag{}, fmt.Errorf("image reference %q: %w", s, err)
	}
	return t, nil
}

// ContainerdName is the name containerd (and so the kubelet, resolving a
// pod's image) gives t: docker.io/library/perflab:0.1.0 for perflab:0.1.0.
func ContainerdName(t name.Tag) string {
	reg := t.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	return reg + "/" + t.RepositoryStr() + ":" + t.TagStr()
}

// ImageName is t as a pod's image names it, short for Docker Hub's:
// perflab:0.1.0, you/perflab:0.1.0, ghcr.io/you/perflab:0.1.0.
func ImageName(t name.Tag) string {
	n := ContainerdName(t)
	if s, ok := strings.CutPrefix(n, "docker.io/library/"); ok {
		return s
	}
	return strings.TrimPrefix(n, "docker.io/")
}

// WriteArchive writes img, named t, to path as a tar of an OCI image
// layout (oci-layout, index.json, blobs/sha256/…), which `ctr images
// import`, `kind load image-archive`, `k3d image import` and skopeo's
// oci-archive: read. It is written to a temporary file beside path,
// renamed once whole: path is the whole archive or is left as it was.
func WriteArchive(path string, img v1.Image, t name.Tag) (err error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("cannot read the image's config: %w", err)
	}
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
		Platform:    cf.Platform(),
		Annotations: map[string]string{AnnotationContainerdName: ContainerdName(t), AnnotationRefName: t.TagStr()},
	}})
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write the image archive %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("cannot write the image archive %s: %w", path, err)
		}
	}()
	if err := writeLayout(tmp, idx, img); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeLayout writes the OCI image layout of idx, whose one manifest is
// img's, as a tar.
func writeLayout(w io.Writer, idx v1.ImageIndex, img v1.Image) error {
	tw := tar.NewWriter(w)
	file := func(name string, size int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size,
			ModTime: imageTime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := io.CopyN(tw, r, size)
		return err
	}
	bytesFile := func(name string, b []byte) error { return file(name, int64(len(b)), bytes.NewReader(b)) }
	rawIndex, err := idx.RawManifest()
	if err != nil {
		return err
	}
	if err := bytesFile("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := bytesFile("index.json", rawIndex); err != nil {
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: imageTime,
			Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	blobs, err := imageBlobs(img)
	if err != nil {
		return err
	}
	for _, b := range blobs {
		r, err := b.open()
		if err != nil {
			return err
		}
		err = file("blobs/"+b.digest.Algorithm+"/"+b.digest.Hex, b.size, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	return tw.Close()
}

// blob is one of an image's blobs: its manifest, config or a layer.
type blob struct {
	digest v1.Hash
	size   int64
	open   func() (io.ReadCloser, error)
}

// imageBlobs are img's manifest, config and layers (compressed).
func imageBlobs(img v1.Image) ([]blob, error) {
	raw := func(get func() ([]byte, error)) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) {
			b, err := get()
			return io.NopCloser(bytes.NewReader(b)), err
		}
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	size, err := img.Size()
	if err != nil {
		return nil, err
	}
	blobs := []blob{{digest, size, raw(img.RawManifest)}, {m.Config.Digest, m.Config.Size, raw(img.RawConfigFile)}}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for i, l := range layers {
		blobs = append(blobs, blob{m.Layers[i].Digest, m.Layers[i].Size, l.Compressed})
	}
	return blobs, nil
}

// PushOptions say how to push an image.
type PushOptions struct {
	// Username and Password, when set, are the registry's credentials;
	// else they come from the docker (or podman) config, as docker login
	// left them (authn.DefaultKeychain), else none.
	Username, Password string
	// Insecure allows plain HTTP, to a registry on loopback only.
	Insecure bool
}

// CheckInsecure refuses plain HTTP to a registry not on loopback.
func CheckInsecure(t name.Tag) error {
	host := t.RegistryStr()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("plain HTTP is allowed to a registry on loopback only (localhost, 127.0.0.1, [::1]), not %s", t.RegistryStr())
}

// Push pushes img to the registry as t and returns its digest. Without
// o.Insecure only HTTPS is spoken, whatever the registry's address.
func Push(ctx context.Context, img v1.Image, t name.Tag, o PushOptions) (v1.Hash, error) {
	if o.Insecure {
		if err := CheckInsecure(t); err != nil {
			return v1.Hash{}, err
		}
	}
	var keychain authn.Keychain = authn.DefaultKeychain
	if o.Username != "" || o.Password != "" {
		keychain = staticKeychain{&authn.Basic{Username: o.Username, Password: o.Password}}
	}
	rt := http.RoundTripper(httpsOnly{remote.DefaultTransport})
	if o.Insecure {
		rt = remote.DefaultTransport
	}
	err := remote.Write(t, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain),
		remote.WithTransport(rt), remote.WithUserAgent("perflab"))
	if err != nil {
		return v1.Hash{}, fmt.Errorf("cannot push the image to %s: %w", t, err)
	}
	return img.Digest()
}

// staticKeychain answers every registry with the same credentials.
type staticKeychain struct{ auth authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.auth, nil }

// httpsOnly refuses plain HTTP: go-containerregistry falls back to it
// for a registry on loopback or a private address, which would send
// the credentials in the clear.
type httpsOnly struct{ next http.RoundTripper }

// ErrPlainHTTP is a plain-HTTP request refused.
var ErrPlainHTTP = errors.New("the registry speaks plain HTTP")

func (h httpsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" {
		return nil, fmt.Errorf("%w (%s); perflab speaks HTTPS to registries unless told otherwise (--insecure, for a registry on loopback)",
			ErrPlainHTTP, r.URL.Host)
	}
	return h.next.RoundTrip(r)
}
