// Command perflab load-tests infrastructure services and tells their
// operators how to size them. See README.md.
package main

import (
	"context"
	"os"

	"github.com/perflab/perflab/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
