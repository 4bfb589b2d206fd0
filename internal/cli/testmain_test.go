package cli_test

import (
	"context"
	"os"
	"testing"

	"github.com/perflab/perflab/internal/cli"
	"github.com/perflab/perflab/internal/sut"
	"github.com/perflab/perflab/internal/testutil"
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
	testutil.Parallel(parallel)
	os.Exit(m.Run())
}

// parallel is how many tests run at once unless -parallel says otherwise
// (its default is GOMAXPROCS): the parallel tests spend most of their time
// waiting for a load that lasts a set time (a worker's share, a store that
// fails after a while), not on the CPU.
const parallel = 8
