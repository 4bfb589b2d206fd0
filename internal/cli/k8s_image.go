package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/perflab/perflab/internal/k8s"
)

// The environment variables of a registry's credentials for --push, when
// no docker login left them in the docker config.
const (
	registryUserEnv     = "PERFLAB_REGISTRY_USERNAME"
	registryPasswordEnv = "PERFLAB_REGISTRY_PASSWORD"
)

// imageHowTo says how to get perflab's image into a cluster, for a
// command missing --image.
const imageHowTo = `perflab k8s image makes one of this perflab binary:
    perflab k8s image --out perflab.tar, then load it into the cluster's nodes:
      kind load image-archive perflab.tar | k3d image import perflab.tar | ctr -n k8s.io images import perflab.tar (on each node)
      and pass --image perflab:` + Version + ` --pull-policy IfNotPresent
    or push it to a registry the cluster pulls from: perflab k8s image --push REGISTRY/perflab, then --image REGISTRY/perflab:` + Version

// k8sImage is `perflab k8s image --out FILE | --push REF`: the image of
// this perflab binary, written as an OCI archive or pushed to a registry.
func (e *env) k8sImage(ctx context.Context, args []string) error {
	fs := newFlagSet("k8s image", e)
	out := fs.String("out", "", "write the image to `FILE`: an OCI image layout archive, for ctr/kind/k3d image import and skopeo")
	tagFlag := fs.String("tag", "perflab:"+Version, "the image's name in the archive `FILE` (what ctr import names it)")
	push := fs.String("push", "", "push the image to the registry as `REF` (REGISTRY/REPO[:TAG], the tag "+Version+" by default); credentials from $"+registryUserEnv+" and $"+registryPasswordEnv+", else the docker config (docker login)")
	insecure := fs.Bool("insecure", false, "push over plain HTTP: to a registry on loopback only")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab k8s image --out FILE [--tag perflab:"+Version+"] | --push REF [--insecure]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	if len(pos) > 0 {
		return usageErrorf("perflab k8s image takes no arguments, got %q", pos)
	}
	if *out == "" && *push == "" {
		return usageErrorf("perflab k8s image needs --out FILE (an archive to import into the nodes) or --push REF (a registry)")
	}
	tag, pushTag, err := imageRefs(*tagFlag, *push, *insecure)
	if err != nil {
		return err
	}
	exe, err := e.perflabExe()
	if err != nil {
		return err
	}
	img, err := k8s.BuildImage(k8s.ImageOptions{Binary: exe, Arch: runtime.GOARCH, Version: Version})
	if errors.Is(err, k8s.ErrNotStatic) {
		return &runError{err: err, code: ExitFailed, hint: "an image holds this binary alone, without a C library: " +
			"build perflab with CGO_ENABLED=0 (CGO_ENABLED=0 go build ./cmd/perflab) and run that binary's k8s image"}
	}
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	defer img.Close()
	if *out != "" {
		if err := e.writeImage(img, *out, tag); err != nil {
			return err
		}
	}
	if *push != "" {
		return e.pushImage(ctx, img, pushTag, *insecure)
	}
	return nil
}

// imageRefs are the archive's name and the push reference, checked.
func imageRefs(tagFlag, push string, insecure bool) (tag, pushTag name.Tag, err error) {
	if tag, err = k8s.ParseImageRef(tagFlag, Version); err != nil {
		return tag, pushTag, usageErrorf("--tag: %v", err)
	}
	if push == "" {
		if insecure {
			return tag, pushTag, usageErrorf("--insecure is for --push")
		}
		return tag, pushTag, nil
	}
	if pushTag, err = k8s.ParseImageRef(push, Version); err != nil {
		return tag, pushTag, usageErrorf("--push: %v", err)
	}
	if insecure {
		if err := k8s.CheckInsecure(pushTag); err != nil {
			return tag, pushTag, usageErrorf("--insecure: %v", err)
		}
	}
	return tag, pushTag, nil
}

func (e *env) writeImage(img *k8s.Image, out string, tag name.Tag) error {
	if err := k8s.WriteArchive(out, img, tag); err != nil {
		return &runError{err: err, code: ExitFailed, hint: "--out must name a file in a directory that exists and that you can write"}
	}
	digest, err := img.Digest()
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	size := int64(0)
	if fi, err := os.Stat(out); err == nil {
		size = fi.Size()
	}
	fmt.Fprintf(e.stderr, "perflab: wrote %s (%.1f MiB): %s, linux/%s, %s\n", out, float64(size)/(1<<20), k8s.ContainerdName(tag), runtime.GOARCH, digest)
	fmt.Fprintf(e.stderr, "perflab: load it into the nodes: kind load image-archive %[1]s | k3d image import %[1]s | ctr -n k8s.io images import %[1]s; then --image %[2]s\n",
		out, k8s.ImageName(tag))
	fmt.Fprintln(e.stdout, k8s.ImageName(tag))
	return nil
}

func (e *env) pushImage(ctx context.Context, img *k8s.Image, tag name.Tag, insecure bool) error {
	o := k8s.PushOptions{Insecure: insecure, Username: os.Getenv(registryUserEnv), Password: os.Getenv(registryPasswordEnv)}
	digest, err := k8s.Push(ctx, img, tag, o)
	if errors.Is(err, k8s.ErrPlainHTTP) {
		return &runError{err: err, code: ExitFailed, hint: "a registry of yours on loopback that speaks plain HTTP: add --insecure"}
	}
	if err != nil {
		return &runError{err: err, code: ExitFailed, hint: "docker login REGISTRY (or set $" + registryUserEnv + " and $" + registryPasswordEnv + ") if it needs credentials"}
	}
	ref := k8s.ImageName(tag)
	fmt.Fprintf(e.stderr, "perflab: pushed %s@%s; pass --image %s\n", ref, digest, ref)
	fmt.Fprintf(e.stdout, "%s@%s\n", ref, digest)
	return nil
}
