//go:build linux

package k8scluster

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// OCI media types and the annotations that name an image in a layout.
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar"
	annotCtrName  = "io.containerd.image.name"
	annotRefName  = "org.opencontainers.image.ref.name"
)

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// blob is one piece of content of the layout, stored under its digest.
type blob struct {
	desc descriptor
	data []byte
}

func newBlob(mediaType string, data []byte) blob {
	sum := sha256.Sum256(data)
	return blob{desc: descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}, data: data}
}

// WriteImage writes an OCI image layout archive to out, importable with
// `ctr images import` (see Cluster.ImportImage): one uncompressed layer
// holding the program binary as /NAME (its base name), a config whose
// entrypoint is /NAME followed by args, for linux and this GOARCH, named
// ref (for example "perflab.local/job:1"). The same inputs give the same
// bytes. It is written by hand, as OCI layout JSON and a tar: three blobs
// and an index need no library.
func WriteImage(out, ref, binary string, args ...string) error {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("cannot read image binary: %w", err)
	}
	name := filepath.Base(binary)
	layer, err := tarFiles([]tarFile{{name: name, mode: 0o755, data: bin}})
	if err != nil {
		return fmt.Errorf("cannot make image layer: %w", err)
	}
	layerBlob := newBlob(mediaLayer, layer)
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config": map[string]any{
			"Entrypoint": append([]string{"/" + name}, args...),
			"Env":        []string{"PATH=/"},
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerBlob.desc.Digest}},
	})
	if err != nil {
		return fmt.Errorf("cannot encode image config: %w", err)
	}
	configBlob := newBlob(mediaConfig, config)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        configBlob.desc,
		"layers":        []descriptor{layerBlob.desc},
	})
	if err != nil {
		return fmt.Errorf("cannot encode image manifest: %w", err)
	}
	return writeLayout(out, ref, newBlob(mediaManifest, manifest), configBlob, layerBlob)
}

// writeLayout writes the layout archive: oci-layout, index.json naming
// the manifest ref, and the blobs.
func writeLayout(out, ref string, manifest blob, blobs ...blob) error {
	desc := manifest.desc
	desc.Platform = &platform{Architecture: runtime.GOARCH, OS: "linux"}
	desc.Annotations = map[string]string{annotCtrName: ref, annotRefName: refTag(ref)}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": mediaIndex, "manifests": []descriptor{desc}})
	if err != nil {
		return fmt.Errorf("cannot encode image index: %w", err)
	}
	files := []tarFile{
		{name: "oci-layout", mode: 0o644, data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{name: "index.json", mode: 0o644, data: index},
	}
	for _, b := range append([]blob{manifest}, blobs...) {
		files = append(files, tarFile{name: "blobs/sha256/" + strings.TrimPrefix(b.desc.Digest, "sha256:"), mode: 0o644, data: b.data})
	}
	archive, err := tarFiles(files)
	if err != nil {
		return fmt.Errorf("cannot make image archive: %w", err)
	}
	if err := os.WriteFile(out, archive, 0o644); err != nil {
		return fmt.Errorf("cannot write image archive: %w", err)
	}
	return nil
}

// refTag is the tag of ref ("1" of "perflab.local/job:1"), "latest" when
// it has none.
func refTag(ref string) string {
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return ref[i+1:]
	}
	return "latest"
}

type tarFile struct {
	name string
	mode int64
	data []byte
}

// tarFiles makes a tar of regular files (and the directories above them),
// owned by root, with a fixed time, so that its bytes depend only on the
// files.
func tarFiles(files []tarFile) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	for _, f := range files {
		for d := filepath.Dir(f.name); d != "."; d = filepath.Dir(d) {
			if dirs[d] {
				break
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// BuildStatic builds the Go main package pkg (an import path of this
// module) as a static linux binary in dir, for an image, and returns its
// path: CGO_ENABLED=0, -trimpath, no symbols.
func BuildStatic(ctx context.Context, pkg, dir string) (string, error) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("cannot build %s: go is not on PATH", pkg)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, gocmd, "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if text, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cannot build %s: %w: %s", pkg, err, bytes.TrimSpace(text))
	}
	return out, nil
}
