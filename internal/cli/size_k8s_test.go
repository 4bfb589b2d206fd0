package cli

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/perflab/perflab/internal/analysis"
)

// A size row as a container's resources: millicores and bytes, and a
// request above its limit (a limit search's scaled-down CPU) brought down
// to the limit, as the API server requires.
func TestK8sResources(t *testing.T) {
	row := analysis.TShirtRow{CPURequest: analysis.Quantity{Resource: analysis.ResourceCPU, Amount: 400}, CPULimit: analysis.Quantity{Resource: analysis.ResourceCPU, Amount: 250},
		MemoryRequest: analysis.Quantity{Resource: analysis.ResourceMemory, Amount: 64 << 20}, MemoryLimit: analysis.Quantity{Resource: analysis.ResourceMemory, Amount: 96 << 20}}
	res := k8sResources(row)
	cpuReq, cpuLim := res.Requests[corev1.ResourceCPU], res.Limits[corev1.ResourceCPU]
	memReq, memLim := res.Requests[corev1.ResourceMemory], res.Limits[corev1.ResourceMemory]
	if cpuReq.String() != "250m" || cpuLim.String() != "250m" || memReq.String() != "64Mi" || memLim.String() != "96Mi" {
		t.Errorf("resources %s", resourcesText(res))
	}
	row.NoCPULimit, row.MemoryLimit = true, analysis.Quantity{}
	res = k8sResources(row)
	if _, ok := res.Limits[corev1.ResourceCPU]; ok || resourcesText(res) != "requests cpu 400m, memory 64Mi" {
		t.Errorf("no CPU or memory limit: %s", resourcesText(res))
	}
}

// --k8s is checked with the other flags: every problem at once, nothing
// started; and it applies to --verify alone.
func TestK8sFlagsAreChecked(t *testing.T) {
	dir := writeScaledStore(t, t.TempDir(), 1, 1)
	code, _, errs := mainOut("size", dir, "--verify", "--k8s", "api", "--k8s", "db=ns/daemonset/db", "--rollout-timeout", "0s")
	if code != ExitUsage || !strings.Contains(errs, `--k8s "api": want COMPONENT=`) || !strings.Contains(errs, `kind "daemonset"`) ||
		!strings.Contains(errs, "--rollout-timeout 0s") {
		t.Errorf("exit %d: %s", code, errs)
	}
	code, _, errs = mainOut("size", dir, "--k8s", "api=deployment/api")
	if code != ExitUsage || !strings.Contains(errs, "--k8s applies to --verify") {
		t.Errorf("without --verify: exit %d: %s", code, errs)
	}
}
