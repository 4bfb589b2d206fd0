# perflab — build and test. `make test` is the command CI runs (.ci/run).
GO ?= go

.PHONY: build test test-e2e test-shared test-race test-alone test-k8s vet lint bench demo deps mutate

# The developer tools, pinned in a module of their own (tools/go.mod), so
# that their requirements stay out of perflab's go.mod: `go tool` builds
# each from its pinned version once, then from the build cache.
TOOL = $(GO) tool -modfile=tools/go.mod

# The release build: no file paths of this machine (-trimpath), no symbol
# table or DWARF (-s -w); the Go runtime's own tables (pclntab) stay, so
# stack traces and pprof profiles still name functions and lines.
build:
	$(GO) build -trimpath -ldflags '-s -w' -o bin/perflab ./cmd/perflab

# The whole suite: vet, staticcheck, and every package's tests in lines
# (CONTRIBUTING.md, "The suite's lines"). First three at once, the shared
# lines: internal/e2e (its tests 8 at a time, see its TestMain); the other
# packages, two at a time; and the race detector on the packages that
# share state between goroutines (the engine, drivers, the run and its
# sources of load and samples, the components' supervisor, the
# exporters), -short: the real servers (testutil) ran in the shared line,
# timing figures under the detector would measure the detector
# (testutil.Timing), and code on one goroutine gives it nothing to find
# (testutil.OneGoroutine); sut's tests, which mostly wait for processes,
# go first. Then the alone line: the tests whose figures other tests
# beside them would move (testutil.Alone: latencies to a millisecond, CPU
# ratios, the rates the machine must give), one at a time, with nothing
# else of the suite running; the shared lines skip them.
# scripts/alone-tests.sh finds them in their files.
ALONE_PATTERN = $(shell scripts/alone-tests.sh pattern)
ALONE_PKGS = $(shell scripts/alone-tests.sh packages)
test: vet lint
	$(MAKE) --no-print-directory -j3 test-e2e test-shared test-race
	$(MAKE) --no-print-directory test-alone

test-e2e:
	$(LINE)=shared $(GO) test -count=1 -skip '$(ALONE_PATTERN)' ./internal/e2e/

test-shared:
	$(LINE)=shared $(GO) test -p 2 -count=1 -skip '$(ALONE_PATTERN)' $$($(GO) list ./... | grep -v '/internal/e2e$$')

test-race:
	$(LINE)=shared $(GO) test -count=1 -race -short -skip '$(ALONE_PATTERN)' ./internal/sut/... ./internal/driver/... ./internal/engine/... \
		./internal/stats/... ./internal/results/... ./internal/builtin/... ./internal/run/... ./internal/fleet/... ./internal/observe/... ./internal/export/...

test-alone:
	$(LINE)=alone $(GO) test -p 1 -count=1 -run '$(ALONE_PATTERN)' $(ALONE_PKGS)

LINE = PERFLAB_TEST_LINE

vet:
	$(GO) vet ./...

# staticcheck (honnef.co/go/tools, tools/go.mod) with its default checks,
# on every file: -tags k8s adds the tests of make test-k8s, and no file
# is left out by it.
lint:
	$(TOOL) staticcheck -tags k8s ./...

# Mutation testing of the core packages (go-gremlins, a tool in
# tools/go.mod): each package's own tests against small changes to its code, one
# worker at a time; a table of each package's test efficacy at the end.
# Not part of `make test`: it takes far longer than the suite.
mutate:
	GO=$(GO) scripts/mutate.sh

# The tests on a real single-node Kubernetes (internal/testutil/k8scluster;
# build tag k8s): builds Kubernetes v1.34.4 and kube-state-metrics first if
# they are not in the cache (~10 min and ~4 min once, scripts/k8s-build.sh
# and scripts/ksm-build.sh), then starts and stops a cluster on loopback
# per test (needs root, containerd, runc, etcd: make deps). Of those
# packages only the tests of their *_k8s_test.go files run (K8S_TESTS,
# read from the files, so a new one runs too): the others ran in make
# test. internal/e2e's TestK8s runs perflab k8s run and manifest on one
# cluster (its other tests ran in make test).
K8S_TEST_PKGS = ./internal/testutil/k8scluster/... ./internal/observe/promapi/...
K8S_TESTS = $(shell sed -n 's/^func \(Test[A-Za-z0-9_]*\).*/\1/p' internal/testutil/k8scluster/*_k8s_test.go internal/observe/promapi/*_k8s_test.go | paste -sd'|')
test-k8s:
	scripts/k8s-build.sh
	scripts/ksm-build.sh
	$(GO) vet -tags k8s $(K8S_TEST_PKGS) ./internal/e2e/
	$(GO) test -tags k8s -p 1 -count=1 -timeout 20m -run '^($(K8S_TESTS))$$' $(K8S_TEST_PKGS)
	$(GO) test -tags k8s -count=1 -timeout 30m -run '^TestK8s' ./internal/e2e/

demo:
	$(GO) run ./cmd/perflab demo

# Installs the real servers the tests talk to (Debian packages; needs root).
deps:
	scripts/install-deps.sh

bench:
	bench/http-vs-peers.sh
