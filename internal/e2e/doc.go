//go:build linux

// Package e2e tests perflab from the outside, as its users run it: each
// test starts perflab commands (http, run, search, report, compare, merge,
// worker, target, demo) as processes, against the built-in targets, real
// servers (nginx, VictoriaMetrics, Prometheus, versitygw, Jaeger, LiteLLM;
// see internal/testutil) or fakes on 127.0.0.1, and checks their exit
// codes, output, run directories and reports. Like perflab, they are
// Linux only: every file says //go:build linux.
//
// No separate binary is built: the test binary is perflab. TestMain, when
// PERFLAB_E2E_AS_PERFLAB=1 is in its environment, runs cli.Main on its
// arguments and exits with its code, as cmd/perflab does; otherwise it sets
// that variable and runs the tests, which start os.Executable(). Every
// process perflab starts from its own executable (a component's
// supervisor, local workers, {{perflab}} in a plan) inherits the variable
// and is perflab too.
//
// Tests use free ports and their own temporary directories and run in
// parallel, 8 at a time unless -parallel says otherwise (TestMain); the
// few whose figures other tests' load would move (latency to a millisecond,
// a capacity to 10 %) run alone, before the others. A test waits for what perflab prints or stores (the run
// directory, a progress line, a worker's first interval), never for a
// fixed time, and fails rather than panics on output it did not expect.
// With the build tag k8s (make test-k8s), TestK8s runs perflab k8s run
// and manifest on a real single-node Kubernetes on loopback
// (testutil/k8scluster), one cluster for its tests in turn, with
// perflab's image built by perflab k8s image from a static build.
// The package has no code of its own beyond this comment.
package e2e
