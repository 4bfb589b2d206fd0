package k8s

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/perflab/perflab/internal/testutil"
)

// staticBinary builds a small static Go program into a temporary
// directory: a stand-in for perflab, quicker to build.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module standin\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"perflab stand-in\") }\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "perflab")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cannot build a static binary: %v\n%s", err, out)
	}
	return bin
}

// dynamicBinary is a dynamically linked executable of the system (one
// with a PT_INTERP), or the test is skipped.
func dynamicBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/bin/sh", "/usr/bin/env", "/bin/true"} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				f.Close()
				return p
			}
		}
		f.Close()
	}
	t.Skip("no dynamically linked executable found on this system")
	return ""
}

func buildImage(t *testing.T, bin string) *Image {
	t.Helper()
	img, err := BuildImage(ImageOptions{Binary: bin, Arch: runtime.GOARCH, Version: "9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}

// writeTestArchive writes img's archive, named perflab:9.9.9, and returns
// its path.
func writeTestArchive(t *testing.T, img v1.Image) string {
	t.Helper()
	tag, err := ParseImageRef("perflab", "9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "perflab.tar")
	if err := WriteArchive(path, img, tag); err != nil {
		t.Fatal(err)
	}
	return path
}

// untar extracts the archive at path into a new directory, checking
// that every blob's name is its content's sha256, and returns the
// directory.
func untar(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	tr := tar.NewReader(f)
	names := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the archive is not a tar: %v", err)
		}
		names[h.Name] = true
		dst := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hexDigest, ok := strings.CutPrefix(h.Name, "blobs/sha256/"); ok {
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hexDigest {
				t.Errorf("blob %s holds content of sha256 %x", h.Name, sum)
			}
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"oci-layout", "index.json"} {
		if !names[want] {
			t.Errorf("the archive lacks %s: %v", want, names)
		}
	}
	return dir
}

// layerFile is the file name in img's one layer: its header and content.
func layerFile(t *testing.T, img v1.Image, file string) (*tar.Header, []byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("the image has layers %v (%v), want one", layers, err)
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
			t.Fatalf("the layer has no %s: %v", file, err)
		}
		if h.Name == file {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return h, data
		}
	}
}

// TestImageArchive: the archive is a tar of an OCI image layout that
// go-containerregistry's layout reader reads; its index names the image
// for containerd and skopeo; the manifest's config runs perflab as a
// numeric non-root user, with the version label, on linux/GOARCH; its
// one layer holds the binary, byte for byte, mode 0755.
func TestImageArchive(t *testing.T) {
	bin := staticBinary(t)
	dir := untar(t, writeTestArchive(t, buildImage(t, bin)))
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("the layout does not read: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("index.json has %d manifests (%v), want 1", len(im.Manifests), err)
	}
	desc := im.Manifests[0]
	if got := desc.Annotations[AnnotationContainerdName]; got != "docker.io/library/perflab:9.9.9" {
		t.Errorf("%s = %q", AnnotationContainerdName, got)
	}
	if got := desc.Annotations[AnnotationRefName]; got != "9.9.9" {
		t.Errorf("%s = %q", AnnotationRefName, got)
	}
	if desc.Platform == nil || desc.Platform.OS != "linux" || desc.Platform.Architecture != runtime.GOARCH {
		t.Errorf("the manifest's platform is %+v, want linux/%s", desc.Platform, runtime.GOARCH)
	}
	img, err := idx.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Errorf("the image is inconsistent: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if strings.Join(c.Entrypoint, " ") != ImageBinary || c.User != "65532:65532" || c.WorkingDir != ImageHome ||
		!contains(c.Env, "PATH="+ImagePath) || c.Labels[LabelImageVersion] != "9.9.9" || c.Labels[LabelImageTitle] != "perflab" {
		t.Errorf("the config is %+v", c)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("the config's platform is %s/%s", cf.OS, cf.Architecture)
	}
	h, data := layerFile(t, img, strings.TrimPrefix(ImageBinary, "/"))
	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want) || h.Mode != 0o755 || h.Uid != 0 {
		t.Errorf("the layer's %s: %d bytes (the binary has %d; equal %v), mode %o, uid %d",
			ImageBinary, len(data), len(want), bytes.Equal(data, want), h.Mode, h.Uid)
	}
	if h, _ := layerFile(t, img, "home/perflab/"); h.Uid != ImageUID || h.Typeflag != tar.TypeDir {
		t.Errorf("the home directory is %+v, want one the user owns", h)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestImageIsReproducible: no time of the build goes into the image
// (the config's, the history's and the layer's files' times are the
// epoch), so two images of one binary are one.
func TestImageIsReproducible(t *testing.T) {
	bin := staticBinary(t)
	img := buildImage(t, bin)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	epoch := time.Unix(0, 0)
	if !cf.Created.Equal(epoch) || len(cf.History) != 1 || !cf.History[0].Created.Equal(epoch) {
		t.Errorf("the config was created %v, its history %+v", cf.Created, cf.History)
	}
	for _, f := range []string{"usr/local/bin/perflab", "home/perflab/", "tmp/"} {
		if h, _ := layerFile(t, img, f); !h.ModTime.Equal(epoch) {
			t.Errorf("the layer's %s has the time %v", f, h.ModTime)
		}
	}
	a, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	b, err := buildImage(t, bin).Digest()
	if err != nil || a != b {
		t.Errorf("two images of one binary: %v and %v (%v)", a, b, err)
	}
}

// TestImageArchiveSkopeo: skopeo reads the archive as oci-archive:, by
// its one image and by its tag.
func TestImageArchiveSkopeo(t *testing.T) {
	skopeo := testutil.RequireBinary(t, "skopeo")
	path := writeTestArchive(t, buildImage(t, staticBinary(t)))
	for _, ref := range []string{"oci-archive:" + path, "oci-archive:" + path + ":9.9.9"} {
		out, err := exec.Command(skopeo, "inspect", "--config", ref).CombinedOutput()
		if err != nil {
			t.Fatalf("skopeo inspect %s: %v\n%s", ref, err, out)
		}
		if !strings.Contains(string(out), `"org.opencontainers.image.version": "9.9.9"`) ||
			!strings.Contains(string(out), `"`+ImageBinary+`"`) {
			t.Errorf("skopeo inspect %s:\n%s", ref, out)
		}
	}
}

// TestWriteArchiveLeavesNoPartialFile: an archive that cannot be written
// is an error naming it, and leaves no file behind.
func TestWriteArchiveLeavesNoPartialFile(t *testing.T) {
	img := buildImage(t, staticBinary(t))
	tag, _ := ParseImageRef("perflab:1", "")
	parent := t.TempDir()
	notDir := filepath.Join(parent, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	aDir := filepath.Join(parent, "dir")
	if err := os.Mkdir(aDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// under a file: no temporary file can be made; onto a directory: the
	// whole archive is written, and the rename fails.
	for _, path := range []string{filepath.Join(notDir, "perflab.tar"), aDir} {
		err := WriteArchive(path, img, tag)
		if err == nil || !strings.Contains(err.Error(), "cannot write the image archive "+path) {
			t.Errorf("WriteArchive(%s) = %v", path, err)
		}
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
	if sub, _ := os.ReadDir(aDir); len(sub) != 0 {
		t.Errorf("left in the directory: %v", sub)
	}
}

// TestBuildImageRefusesDynamicBinaries: a binary that needs a dynamic
// loader, one for another architecture, and a file that is no
// executable are refused, saying why.
func TestBuildImageRefusesDynamicBinaries(t *testing.T) {
	_, err := BuildImage(ImageOptions{Binary: dynamicBinary(t), Arch: runtime.GOARCH, Version: "1"})
	if !errors.Is(err, ErrNotStatic) || !strings.Contains(err.Error(), "dynamic loader") {
		t.Errorf("a dynamic binary: %v", err)
	}
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	bin := staticBinary(t)
	if _, err := BuildImage(ImageOptions{Binary: bin, Arch: other, Version: "1"}); err == nil || !strings.Contains(err.Error(), "not "+other) {
		t.Errorf("a binary of another architecture: %v", err)
	}
	text := filepath.Join(t.TempDir(), "perflab")
	os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755)
	if _, err := BuildImage(ImageOptions{Binary: text, Arch: runtime.GOARCH, Version: "1"}); err == nil || !strings.Contains(err.Error(), "not a Linux executable") {
		t.Errorf("a script: %v", err)
	}
	if _, err := BuildImage(ImageOptions{Binary: filepath.Join(t.TempDir(), "none"), Arch: runtime.GOARCH}); err == nil ||
		!strings.Contains(err.Error(), "cannot read the perflab binary") {
		t.Errorf("no binary: %v", err)
	}
}

func TestParseImageRef(t *testing.T) {
	for _, c := range []struct{ in, containerd, err string }{
		{"perflab", "docker.io/library/perflab:0.1.0", ""},
		{"perflab:dev", "docker.io/library/perflab:dev", ""},
		{"ghcr.io/you/perflab", "ghcr.io/you/perflab:0.1.0", ""},
		{"127.0.0.1:5000/perflab:x", "127.0.0.1:5000/perflab:x", ""},
		{"perflab@sha256:" + strings.Repeat("a", 64), "", "not a digest"},
		{"Perflab:UPPER", "", "image reference"},
	} {
		tag, err := ParseImageRef(c.in, "0.1.0")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || ContainerdName(tag) != c.containerd {
			t.Errorf("%s: %s (%v), want %s", c.in, ContainerdName(tag), err, c.containerd)
		}
	}
	for ref, ok := range map[string]bool{"localhost:5000/p:1": true, "127.0.0.1:5000/p:1": true, "[::1]:5000/p:1": true,
		"registry.example:5000/p:1": false, "10.0.0.1:5000/p:1": false} {
		tag, err := name.NewTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckInsecure(tag); (err == nil) != ok {
			t.Errorf("CheckInsecure(%s) = %v", ref, err)
		}
	}
}
