//go:build linux

package k8scluster

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readArchive returns the files of a tar archive by name.
func readArchive(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			files[hdr.Name] = b
		}
	}
}

func TestWriteImageIsAnOCILayoutOfTheBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, []byte("#!not really a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "image.tar")
	if err := WriteImage(out, "perflab.local/prog:7", bin, "serve"); err != nil {
		t.Fatal(err)
	}
	files := readArchive(t, out)
	blob := func(d descriptor) []byte {
		t.Helper()
		b, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		sum := sha256.Sum256(b)
		if !ok || "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || int64(len(b)) != d.Size {
			t.Fatalf("blob %s: missing or not matching its digest and size", d.Digest)
		}
		return b
	}
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %q", files["oci-layout"])
	}
	var index struct{ Manifests []descriptor }
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v %s", err, files["index.json"])
	}
	m := index.Manifests[0]
	if m.Annotations[annotCtrName] != "perflab.local/prog:7" || m.Annotations[annotRefName] != "7" || m.MediaType != mediaManifest {
		t.Errorf("index entry = %+v", m)
	}
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	if err := json.Unmarshal(blob(m), &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v", err)
	}
	var config struct {
		OS, Architecture string
		Config           struct{ Entrypoint []string }
		RootFS           struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	layer := blob(manifest.Layers[0])
	if err := json.Unmarshal(blob(manifest.Config), &config); err != nil {
		t.Fatal(err)
	}
	if strings.Join(config.Config.Entrypoint, " ") != "/prog serve" || config.OS != "linux" {
		t.Errorf("config = %+v", config)
	}
	if len(config.RootFS.DiffIDs) != 1 || config.RootFS.DiffIDs[0] != manifest.Layers[0].Digest {
		t.Errorf("diff_ids %v, want the uncompressed layer's digest %s", config.RootFS.DiffIDs, manifest.Layers[0].Digest)
	}
	hdr, err := tar.NewReader(bytes.NewReader(layer)).Next()
	if err != nil || hdr.Name != "prog" || hdr.Mode != 0o755 {
		t.Errorf("layer's first file = %+v, %v; want prog, mode 0755", hdr, err)
	}
}

func TestWriteImageIsReproducible(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	var archives [2][]byte
	for i := range archives {
		out := filepath.Join(dir, "image.tar")
		if err := WriteImage(out, "perflab.local/prog", bin); err != nil {
			t.Fatal(err)
		}
		archives[i], _ = os.ReadFile(out)
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Error("two archives of the same binary differ")
	}
}

func TestRefTag(t *testing.T) {
	for ref, want := range map[string]string{
		"perflab.local/job:1":      "1",
		"perflab.local/job":        "latest",
		"localhost:5000/job":       "latest",
		"localhost:5000/job:v1.34": "v1.34",
	} {
		if got := refTag(ref); got != want {
			t.Errorf("refTag(%q) = %q, want %q", ref, got, want)
		}
	}
}
