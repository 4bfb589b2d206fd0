package cli_test

import (
	"context"
	"os"
	"testing"

	"github.com/perflab/perflab/internal/cli"
	"github.com/perflab/perflab/internal/sut"
)

// TestMain lets the test binary be perflab's supervisor: a component that
// a test starts through an in-process Main (a worker's plan, say) runs
// under it, as sut.Start runs /proc/self/exe with sut.SupervisorArg.
// Without it, the supervisor would run every test again, and so on. The
// tests that run perflab's commands as processes are in internal/e2e.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sut.SupervisorArg {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
