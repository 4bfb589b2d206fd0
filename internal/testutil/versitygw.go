package testutil

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// VersityGW credentials: the gateway's root account, in single-account mode.
const (
	VersityGWAccess = "perflabtestaccess"
	VersityGWSecret = "perflab-test-secret-key-0123456789"
)

const versityInstall = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// StartVersityGW starts versitygw, a real S3 gateway (SigV4, the S3 error
// codes), with its posix backend in a temporary directory, on 127.0.0.1 at
// a free port, with keep-alive on (versitygw closes every connection after
// one answer unless --keep-alive is given). It waits until GET /health answers and stops the gateway
// when the test ends. It returns the endpoint URL ("http://127.0.0.1:PORT")
// and the root account's keys. The gateway starts with no bucket.
//
// versitygw is looked up in PATH, $GOBIN and $(go env GOPATH)/bin, where
// scripts/install-deps.sh puts it; when missing the test is skipped (or
// fails, see Unavailable).
func StartVersityGW(t testing.TB) (endpoint, access, secret string) {
	t.Helper()
	s := StartVersityGWProcess(t)
	return s.URL, VersityGWAccess, VersityGWSecret
}

// StartVersityGWProcess is StartVersityGW, also telling its process: a
// test may kill it, a store that dies. Its credentials are
// VersityGWAccess and VersityGWSecret.
func StartVersityGWProcess(t testing.TB) Started {
	t.Helper()
	return startServerProcess(t, server{
		name:  "versitygw",
		bin:   goBinary(t, "versitygw", versityInstall),
		args:  versityArgs,
		path:  "/health",
		ready: func(status int, _ string) bool { return status == http.StatusOK },
	})
}

// versityArgs is the gateway's command line: the posix backend under dir,
// keep-alive on (off by default: every answer would close its connection).
func versityArgs(dir string, port int) ([]string, error) {
	root, meta := filepath.Join(dir, "root"), filepath.Join(dir, "meta")
	for _, d := range []string{root, meta} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create versitygw directory: %w", err)
		}
	}
	return []string{"--port", "127.0.0.1:" + strconv.Itoa(port),
		"--access", VersityGWAccess, "--secret", VersityGWSecret,
		"--health", "/health", "--quiet", "--keep-alive",
		"posix", "--sidecar", meta, root}, nil
}
