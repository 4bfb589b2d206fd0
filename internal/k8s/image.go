package k8s

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image of perflab holds and how it runs. The binary sits in
// /usr/local/bin, on the PATH, so that the Job's `command: [perflab]`
// finds it as it found it in a hand-made image; the user is numeric, so
// that Kubernetes can check runAsNonRoot without an /etc/passwd, and not
// root, so that a worker cannot write where it should not; its home is
// the working directory, writable by it (a `perflab run` in the image
// writes its run directory there).
const (
	ImageBinary = "/usr/local/bin/perflab"
	ImageHome   = "/home/perflab"
	ImageUID    = 65532 // distroless' "nonroot"
	ImagePath   = "/usr/local/bin:/usr/bin:/bin"
	ImageSource = "https://github.com/perflab/perflab"
)

// Labels of the image's config.
const (
	LabelImageVersion = "org.opencontainers.image.version"
	LabelImageSource  = "org.opencontainers.image.source"
	LabelImageTitle   = "org.opencontainers.image.title"
)

// imageTime is every timestamp of the image (the config's, the history's,
// the layer's files'): the same binary always makes the same image, byte
// for byte, so importing or pushing it again changes nothing.
var imageTime = time.Unix(0, 0).UTC()

// ErrNotStatic is the binary needing a dynamic loader or shared
// libraries, which an image of one binary has not.
var ErrNotStatic = errors.New("not a static binary")

// ImageOptions say what image to build.
type ImageOptions struct {
	Binary  string // the perflab binary: a static Linux executable
	Arch    string // its GOARCH, the image's architecture
	Version string // perflab's version, the image's version label
}

// Image is perflab's image: one layer holding the binary, a config that
// runs it. It reads the binary from the file opened when it was built
// (a binary replaced meanwhile does not change it); Close releases it.
type Image struct {
	v1.Image
	bin *os.File
}

// Close releases the binary's file.
func (im *Image) Close() error { return im.bin.Close() }

// BuildImage builds the image of o.Binary, once it is known to be a
// static Linux executable of o.Arch.
func BuildImage(o ImageOptions) (*Image, error) {
	f, err := os.Open(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("cannot read the perflab binary: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err == nil {
		err = CheckStatic(f, o.Arch)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot use %s as the image's binary: %w", o.Binary, err)
	}
	img, err := imageOf(f, fi.Size(), o)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot build the image: %w", err)
	}
	return &Image{Image: img, bin: f}, nil
}

func imageOf(f *os.File, size int64, o ImageOptions) (v1.Image, error) {
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeLayer(pw, io.NewSectionReader(f, 0, size), size)) }()
		return pr, nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: o.Arch,
		OS:           "linux",
		Created:      v1.Time{Time: imageTime},
		Config: v1.Config{
			Entrypoint: []string{ImageBinary},
			Env:        []string{"PATH=" + ImagePath, "HOME=" + ImageHome},
			User:       fmt.Sprintf("%d:%d", ImageUID, ImageUID),
			WorkingDir: ImageHome,
			Labels: map[string]string{LabelImageVersion: o.Version, LabelImageSource: ImageSource,
				LabelImageTitle: AppName},
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: imageTime}, CreatedBy: "perflab k8s image", Comment: "perflab " + o.Version}})
}

// writeLayer writes the layer's tar: the binary at ImageBinary (mode
// 0755, root's), the directories above it, /tmp, and the user's home.
func writeLayer(w io.Writer, bin io.Reader, size int64) error {
	tw := tar.NewWriter(w)
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: uid, Gid: uid,
			ModTime: imageTime, Format: tar.FormatPAX})
	}
	for _, d := range []struct {
		name string
		mode int64
		uid  int
	}{{"home/", 0o755, 0}, {"home/perflab/", 0o755, ImageUID}, {"tmp/", 0o1777, 0},
		{"usr/", 0o755, 0}, {"usr/local/", 0o755, 0}, {"usr/local/bin/", 0o755, 0}} {
		if err := dir(d.name, d.mode, d.uid); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ImageBinary[1:], Mode: 0o755, Size: size,
		ModTime: imageTime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, bin, size); err != nil {
		return fmt.Errorf("cannot read the perflab binary: %w", err)
	}
	return tw.Close()
}

// elfMachines are the ELF machines of the GOARCHes Kubernetes nodes run.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM, "386": elf.EM_386,
	"ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV, "loong64": elf.EM_LOONGARCH,
}

// CheckStatic says whether r is an ELF executable of arch that runs
// without a dynamic loader or shared libraries: no PT_INTERP, no
// DT_NEEDED (a static PIE has a dynamic section, but needs nothing).
// A Go binary built with cgo (the default where a C compiler is) is not.
func CheckStatic(r io.ReaderAt, arch string) error {
	f, err := elf.NewFile(r)
	if err != nil {
		return fmt.Errorf("not a Linux executable (%v)", err)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("an ELF file of type %v, not an executable", f.Type)
	}
	if m, ok := elfMachines[arch]; ok && f.Machine != m {
		return fmt.Errorf("an executable for %v, not %s", f.Machine, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(io.LimitReader(p.Open(), 4096))
			return fmt.Errorf("%w: it needs the dynamic loader %s (built with cgo)", ErrNotStatic, trimNUL(interp))
		}
	}
	libs, err := f.ImportedLibraries()
	if err == nil && len(libs) > 0 {
		return fmt.Errorf("%w: it needs the shared libraries %v", ErrNotStatic, libs)
	}
	return nil
}

func trimNUL(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
