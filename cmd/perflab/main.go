// Command perflab load-tests infrastructure services and tells their
// operators how to size them. See README.md.
package main

import (
	"context"
	"os"

	"github.com/perflab/perflab/internal/cli"
	"github.com/perflab/perflab/internal/tlsroots"
)

func main() {
	// Mozilla's roots, for a system that has none: perflab's own image
	// (perflab k8s image) holds the binary alone, without /etc/ssl.
	tlsroots.Fallback()
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
