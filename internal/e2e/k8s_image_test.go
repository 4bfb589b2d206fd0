//go:build linux

package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/perflab/perflab/internal/cli"
	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/testutil"
)

var (
	staticOnce   sync.Once
	staticBin    string
	staticErr    error
	staticOutput []byte
)

// staticPerflab is perflab built with CGO_ENABLED=0, as `perflab k8s
// image` wants it, once for the tests of this file.
func staticPerflab(t *testing.T) string {
	t.Helper()
	staticOnce.Do(func() {
		staticBin = filepath.Join(scratch, "perflab-static")
		cmd := exec.Command("go", "build", "-o", staticBin, "github.com/perflab/perflab/cmd/perflab")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		staticOutput, staticErr = cmd.CombinedOutput()
	})
	if staticErr != nil {
		t.Fatalf("cannot build perflab with CGO_ENABLED=0: %v\n%s", staticErr, staticOutput)
	}
	return staticBin
}

// runStatic runs the static perflab with args in dir: exit code, stdout,
// stderr.
func runStatic(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(staticPerflab(t), args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

// readArchive reads the archive at path with a plain tar reader into a
// directory, then as an OCI image layout: its one image and that image's
// descriptor in index.json.
func readArchive(t *testing.T, path string) (v1.Image, v1.Descriptor) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not a tar: %v", path, err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			os.MkdirAll(dst, 0o755)
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("%s is not an OCI image layout: %v", path, err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("index.json: %d manifests (%v), want 1", len(im.Manifests), err)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img, im.Manifests[0]
}

// layerBinary is the file at k8s.ImageBinary in img's one layer.
func layerBinary(t *testing.T, img v1.Image) (*tar.Header, []byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("the layer has no %s: %v", k8s.ImageBinary, err)
		}
		if "/"+h.Name == k8s.ImageBinary {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return h, data
		}
	}
}

// TestK8sImageArchive: `perflab k8s image --out` of a perflab built with
// CGO_ENABLED=0 writes an OCI layout archive whose index names the image
// perflab:VERSION, whose config runs perflab, labelled with its version,
// on linux/GOARCH, and whose one layer holds that very binary, mode 0755.
func TestK8sImageArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, stdout, stderr := runStatic(t, dir, "k8s", "image", "--out", "perflab.tar")
	if code != cli.ExitOK || strings.TrimSpace(stdout) != "perflab:"+cli.Version {
		t.Fatalf("exit %d, stdout %q:\n%s", code, stdout, stderr)
	}
	t.Logf("%s", stderr)
	img, desc := readArchive(t, filepath.Join(dir, "perflab.tar"))
	if got := desc.Annotations[k8s.AnnotationContainerdName]; got != "docker.io/library/perflab:"+cli.Version {
		t.Errorf("%s = %q", k8s.AnnotationContainerdName, got)
	}
	if got := desc.Annotations[k8s.AnnotationRefName]; got != cli.Version {
		t.Errorf("%s = %q", k8s.AnnotationRefName, got)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != k8s.ImageBinary {
		t.Errorf("the entrypoint is %q, want %s", cf.Config.Entrypoint, k8s.ImageBinary)
	}
	if got := cf.Config.Labels[k8s.LabelImageVersion]; got != cli.Version {
		t.Errorf("the version label is %q, want %s", got, cli.Version)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("the platform is %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	h, data := layerBinary(t, img)
	want, err := os.ReadFile(staticPerflab(t))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("the layer's %s (%d bytes) is not the perflab that made it (%d bytes)", k8s.ImageBinary, len(data), len(want))
	}
	if h.FileInfo().Mode().Perm() != 0o755 {
		t.Errorf("the binary's mode is %v, want 0755", h.FileInfo().Mode())
	}
}

// TestK8sImageImportsIntoContainerd: the archive imports with `ctr -n
// k8s.io images import` under the name a pod's image perflab:VERSION
// resolves to, and the image runs perflab.
func TestK8sImageImportsIntoContainerd(t *testing.T) {
	t.Parallel()
	ctd := testutil.StartContainerd(t)
	dir := t.TempDir()
	if code, _, stderr := runStatic(t, dir, "k8s", "image", "--out", "perflab.tar"); code != cli.ExitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // a loaded machine unpacks 100 MB slowly
	defer cancel()
	if out, err := ctd.Ctr(ctx, "-n", "k8s.io", "images", "import", filepath.Join(dir, "perflab.tar")); err != nil {
		t.Fatalf("ctr images import: %v\n%s", err, out)
	}
	ref := "docker.io/library/perflab:" + cli.Version
	out, err := ctd.Ctr(ctx, "-n", "k8s.io", "images", "ls", "-q")
	if err != nil || !strings.Contains(string(out), ref) {
		t.Fatalf("ctr images ls: %v\n%s", err, out)
	}
	out, err = ctd.Ctr(ctx, "-n", "k8s.io", "run", "--rm", ref, "perflab-image-test", "perflab", "version")
	if first, _, _ := strings.Cut(string(out), "\n"); err != nil || strings.TrimSpace(first) != "perflab "+cli.Version {
		t.Errorf("ctr run %s perflab version: %v\n%s", ref, err, out)
	}
}

// TestK8sImagePush: --push to a registry on 127.0.0.1 (plain HTTP, with
// --insecure) stores the image the archive holds: pulled back, it has
// the digest perflab printed and the archive's; without --insecure the
// push is refused, saying so.
func TestK8sImagePush(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	repo := strings.TrimPrefix(srv.URL, "http://") + "/perflab"
	dir := t.TempDir()
	code, _, stderr := runStatic(t, dir, "k8s", "image", "--push", repo)
	if code != cli.ExitFailed || !strings.Contains(stderr, "plain HTTP") || !strings.Contains(stderr, "--insecure") {
		t.Errorf("a push over plain HTTP without --insecure: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := runStatic(t, dir, "k8s", "image", "--push", repo, "--insecure", "--out", "perflab.tar")
	if code != cli.ExitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	lines := strings.Fields(stdout)
	if len(lines) != 2 || !strings.HasPrefix(lines[1], repo+":"+cli.Version+"@sha256:") {
		t.Fatalf("stdout %q, want the archive's name and %s:%s@DIGEST", stdout, repo, cli.Version)
	}
	tag, err := name.NewTag(repo + ":" + cli.Version)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(tag, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pulled.Digest()
	if err != nil {
		t.Fatal(err)
	}
	_, desc := readArchive(t, filepath.Join(dir, "perflab.tar"))
	if printed := strings.SplitN(lines[1], "@", 2)[1]; got.String() != printed || got != desc.Digest {
		t.Errorf("the registry has %v; perflab printed %s; the archive holds %v", got, printed, desc.Digest)
	}
}

// TestK8sImageOutUnwritable: an --out that cannot be written fails with
// exit 1, naming it, and leaves no file, not even a partial one.
func TestK8sImageOutUnwritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{"file/perflab.tar", "missing/perflab.tar", "adir"} {
		code, _, stderr := runStatic(t, dir, "k8s", "image", "--out", out)
		if code != cli.ExitFailed || !strings.Contains(stderr, "cannot write the image archive "+out) {
			t.Errorf("--out %s: exit %d\n%s", out, code, stderr)
		}
	}
	entries, _ := os.ReadDir(dir)
	sub, _ := os.ReadDir(filepath.Join(dir, "adir"))
	if len(entries) != 2 || len(sub) != 0 {
		t.Errorf("left behind: %v, in adir: %v", entries, sub)
	}
}
