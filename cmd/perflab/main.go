// Command perflab load-tests infrastructure services and tells their
// operators how to size them. See README.md.
package main

import (
	"context"
	"os"

	// Mozilla's roots, for a system that has none: perflab's own image
	// (perflab k8s image) holds the binary alone, without /etc/ssl, and
	// its workers still verify an HTTPS store or target.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/perflab/perflab/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
