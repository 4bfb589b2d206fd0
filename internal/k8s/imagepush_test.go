package k8s

import (
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPushAndPullBack: the image pushed to a registry on 127.0.0.1 (over
// plain HTTP, allowed there) is pulled back with the same digest and the
// same layer; without Insecure, plain HTTP is refused.
func TestPushAndPullBack(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	img := buildImage(t, staticBinary(t))
	tag, err := ParseImageRef(strings.TrimPrefix(srv.URL, "http://")+"/perflab", "9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Push(t.Context(), img, tag, PushOptions{}); !errors.Is(err, ErrPlainHTTP) {
		t.Errorf("a push over plain HTTP without Insecure: %v", err)
	}
	digest, err := Push(t.Context(), img, tag, PushOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(tag, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pulled.Digest()
	if err != nil || got != digest {
		t.Errorf("pulled %v (%v), pushed %v", got, err, digest)
	}
	want, _ := img.Digest()
	if digest != want {
		t.Errorf("Push returned %v, the image is %v", digest, want)
	}
	layers, err := pulled.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("pulled layers %v (%v)", layers, err)
	}
	pl, _ := layers[0].Digest()
	ol, _ := img.Layers()
	if od, _ := ol[0].Digest(); pl != od {
		t.Errorf("pulled layer %v, pushed %v", pl, od)
	}
}

// TestPushCredentials: the credentials given are the ones the registry
// gets; without them it refuses, and no error shows the password.
func TestPushCredentials(t *testing.T) {
	const user, password = "ci", "s3cr3t-pa55"
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no docker login of the machine's
	t.Setenv("REGISTRY_AUTH_FILE", t.TempDir()+"/none.json")
	img := buildImage(t, staticBinary(t))
	tag, _ := ParseImageRef(strings.TrimPrefix(srv.URL, "http://")+"/perflab:1", "")
	_, err := Push(t.Context(), img, tag, PushOptions{Insecure: true, Username: user, Password: "wrong"})
	if err == nil || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a wrong password: %v", err)
	}
	if _, err := Push(t.Context(), img, tag, PushOptions{Insecure: true}); err == nil {
		t.Error("a push without credentials was accepted")
	}
	if _, err := Push(t.Context(), img, tag, PushOptions{Insecure: true, Username: user, Password: password}); err != nil {
		t.Errorf("with the credentials: %v", err)
	}
}
