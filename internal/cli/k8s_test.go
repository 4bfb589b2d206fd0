package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/k8s/k8stest"
	"github.com/perflab/perflab/internal/testutil"
)

// lockedBuffer is a buffer goroutines may write to at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// k8sEnv is an env whose cluster is c.
func k8sEnv(c kubernetes.Interface) (*env, *lockedBuffer) {
	var stderr lockedBuffer
	return &env{stdout: io.Discard, stderr: &stderr,
		k8sClient: func(string, string) (k8s.Client, error) { return k8stest.Clientset{Interface: c}, nil }}, &stderr
}

// httpPlan writes a plan of one profile: rate/s of GET url for d.
func httpPlan(t *testing.T, url string, rate int, d time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	text := fmt.Sprintf(`name: k8s
profiles:
  - name: p
    duration: %v
    workloads:
      - {name: get, driver: http, rate: %d/s, params: {url: %q}}
`, d, rate, url)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// workerPod is the pod of worker i of run in phase, its container in
// state (Waiting with reason, when given).
func workerPod(runID string, i int, phase corev1.PodPhase, reason string) *corev1.Pod {
	st := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	if reason != "" {
		st = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("perflab-%s-%d-abcde", runID, i), Namespace: "default",
			Labels:      map[string]string{k8s.LabelName: k8s.AppName, k8s.LabelRunID: runID},
			Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(i)}},
		Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: "perflab", State: st}}},
	}
}

func objectsLeft(t *testing.T, c kubernetes.Interface) int {
	t.Helper()
	ctx := context.Background()
	jobs, err := c.BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cms, _ := c.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	sas, _ := c.CoreV1().ServiceAccounts("default").List(ctx, metav1.ListOptions{})
	return len(jobs.Items) + len(cms.Items) + len(sas.Items)
}

// TestK8sRunCoordinatesTheJob: perflab k8s run creates the Job, tells its
// pods' state changes, coordinates its workers through the store (here
// played by workers in this process, as the pods would run them), merges
// their load into the run and deletes the Job at the end.
func TestK8sRunCoordinatesTheJob(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	planPath := httpPlan(t, srv.URL, 100, 2*time.Second)
	store, runID := t.TempDir(), "rtest-1"
	c := fake.NewClientset(workerPod(runID, 1, corev1.PodRunning, ""))
	e, stderr := k8sEnv(c)
	machine := testutil.Measure(t)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Go(func() {
			we := &env{stdout: io.Discard, stderr: io.Discard}
			codes[i] = we.main(t.Context(), []string{"worker", "--store", store, "--run-id", runID, "--index", fmt.Sprint(i),
				"--workers", "2", "--plan", planPath, "--wait", "1m"})
		})
	}
	code := e.main(t.Context(), []string{"k8s", "run", planPath, "--workers", "2", "--image", "perflab:test", "--store", store,
		"--run-id", runID, "--out", t.TempDir()})
	wg.Wait()
	if code != ExitOK || codes[0] != ExitOK || codes[1] != ExitOK {
		t.Fatalf("exit %d, workers %v:\n%s", code, codes, stderr)
	}
	if hits.Load() > 200 {
		t.Errorf("the target got %d requests, want 2 s × 100/s", hits.Load())
	}
	// fewer are arrivals dropped: beside the suite's other lines and four
	// CPU hogs 2 of 200 were
	machine.Check(t, hits.Load() == 200, testutil.Need{}, "the target got %d requests, want 2 s × 100/s", hits.Load())
	for _, want := range []string{"created Job default/perflab-rtest-1", "worker 1: Running", "deleted Job default/perflab-rtest-1"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if n := objectsLeft(t, c); n != 0 {
		t.Errorf("%d objects left in the cluster", n)
	}
}

// TestK8sRunReportsAWorkerThatCannotStart: a pod that cannot pull its
// image fails the run at once, named with its reason, and the Job is
// deleted.
func TestK8sRunReportsAWorkerThatCannotStart(t *testing.T) {
	t.Parallel()
	runID := "rtest-2"
	c := fake.NewClientset(workerPod(runID, 1, corev1.PodPending, "ImagePullBackOff"))
	e, stderr := k8sEnv(c)
	code := e.main(t.Context(), []string{"k8s", "run", httpPlan(t, "http://127.0.0.1:1/", 10, time.Second), "--workers", "2",
		"--image", "perflab:missing", "--store", t.TempDir(), "--run-id", runID, "--out", t.TempDir()})
	if code != ExitFailed || !strings.Contains(stderr.String(), "worker 1: pod perflab-rtest-2-1-abcde: ImagePullBackOff") {
		t.Fatalf("exit %d, want 1 naming worker 1's ImagePullBackOff:\n%s", code, stderr)
	}
	if n := objectsLeft(t, c); n != 0 {
		t.Errorf("%d objects left in the cluster after a failure", n)
	}
}

// TestK8sRunInterruptedKeepsWhatItWasToldTo: an interrupt while the
// workers start ends the run; with --keep the objects stay, without it
// they are deleted.
func TestK8sRunInterruptedKeepsWhatItWasToldTo(t *testing.T) {
	for _, keep := range []bool{false, true} {
		c := fake.NewClientset()
		e, stderr := k8sEnv(c)
		ctx, cancel := context.WithCancel(t.Context())
		c.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
			cancel() // the interrupt comes as the Job is created
			return false, nil, nil
		})
		args := []string{"k8s", "run", httpPlan(t, "http://127.0.0.1:1/", 10, time.Second), "--workers", "3", "--image", "perflab:test",
			"--store", t.TempDir(), "--run-id", fmt.Sprintf("rtest-keep-%v", keep), "--out", t.TempDir()}
		if keep {
			args = append(args, "--keep")
		}
		code := e.main(ctx, args)
		if code != ExitInterrupted {
			t.Errorf("keep %v: exit %d, want %d:\n%s", keep, code, ExitInterrupted, stderr)
		}
		if n, want := objectsLeft(t, c), map[bool]int{false: 0, true: 3}[keep]; n != want {
			t.Errorf("keep %v: %d objects left, want %d", keep, n, want)
		}
	}
}

func TestK8sManifestHoldsThePlanAndItsFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bodies"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bodies", "req.json"), []byte(`{"q":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(dir, "plan.yaml")
	text := `name: m
profiles:
  - name: p
    duration: 1s
    workloads:
      - {name: post, driver: http, rate: 1/s, params: {url: "http://127.0.0.1:1/", method: POST, body_file: bodies/req.json}}
`
	if err := os.WriteFile(planPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main(t.Context(), []string{"k8s", "manifest", planPath, "--workers", "4", "--image", "ghcr.io/x/perflab:1",
		"--store", "s3://b/p?endpoint=http://minio:9000", "--secret", "perflab-creds", "--run-id", "r1"}, &out, &errOut)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"kind: ConfigMap", "f.bodies__req.json: '{\"q\":1}'", "path: bodies/req.json", "completionMode: Indexed",
		"completions: 4", "name: perflab-creds", "value: s3://b/p?endpoint=http://minio:9000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the manifest lacks %q", want)
		}
	}
	errOut.Reset()
	code = Main(t.Context(), []string{"k8s", "manifest", planPath, "--workers", "0", "--cpu", "lots"}, &out, &errOut)
	for _, want := range []string{"an image is needed", "workers 0 must be >= 1", "a shared store is needed", `cpu "lots"`} {
		if code != ExitUsage || !strings.Contains(errOut.String(), want) {
			t.Errorf("exit %d, stderr lacks %q:\n%s", code, want, errOut.String())
		}
	}
}

// TestK8sRunLeavesAnotherRunsObjectsAlone: a Job of the same name exists
// (a run id used twice): nothing is created, and nothing is deleted.
func TestK8sRunLeavesAnotherRunsObjectsAlone(t *testing.T) {
	runID := "rtest-3"
	c := fake.NewClientset(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "perflab-" + runID, Namespace: "default"}})
	e, stderr := k8sEnv(c)
	code := e.main(t.Context(), []string{"k8s", "run", httpPlan(t, "http://127.0.0.1:1/", 10, time.Second), "--workers", "2",
		"--image", "perflab:test", "--store", t.TempDir(), "--run-id", runID, "--out", t.TempDir()})
	if code != ExitFailed || !strings.Contains(stderr.String(), "exists already") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if _, err := c.BatchV1().Jobs("default").Get(t.Context(), "perflab-"+runID, metav1.GetOptions{}); err != nil {
		t.Errorf("the other run's Job was deleted: %v", err)
	}
}

// TestK8sRunScrubsAsRunDoes: the coordinator of perflab k8s run scrubs
// the plan's credentials from what it stores and prints as perflab run
// does: here a component's literal credential, printed to its log.
func TestK8sRunScrubsAsRunDoes(t *testing.T) {
	t.Parallel()
	const secret = "literal-component-secret"
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	planPath := filepath.Join(t.TempDir(), "plan.yaml")
	text := fmt.Sprintf(`name: k8s-secrets
components:
  - name: printer
    run:
      command: sh
      args: ["-c", "echo key=$ROOT_SECRET_KEY; exec sleep 600"]
      env: {ROOT_SECRET_KEY: %s}
profiles:
  - name: p
    duration: 1s
    workloads:
      - {name: get, driver: http, rate: 10/s, params: {url: %q}}
`, secret, srv.URL)
	if err := os.WriteFile(planPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	store, runID, out := t.TempDir(), "rtest-scrub", t.TempDir()
	e, stderr := k8sEnv(fake.NewClientset())
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			we := &env{stdout: io.Discard, stderr: io.Discard}
			we.main(t.Context(), []string{"worker", "--store", store, "--run-id", runID, "--index", fmt.Sprint(i),
				"--workers", "2", "--plan", planPath, "--wait", "1m"})
		})
	}
	code := e.main(t.Context(), []string{"k8s", "run", planPath, "--workers", "2", "--image", "perflab:test", "--store", store,
		"--run-id", runID, "--out", out})
	wg.Wait()
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(out, "*", "logs", "cell-0", "printer.stdout.log"))
	if len(logs) != 1 {
		t.Fatalf("component logs %v", logs)
	}
	if b, err := os.ReadFile(logs[0]); err != nil || !strings.Contains(string(b), "key=[redacted]") {
		t.Errorf("the component's log is not scrubbed: %v\n%s", err, b)
	}
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the credential", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestK8sManifestForALocalCluster: --host-network and --store-hostpath
// DIR make the pods of a local cluster reach a loopback target and the
// store, a directory of the node mounted at its absolute path; the
// coordinator is told the same path. --store and --store-hostpath
// together are refused.
func TestK8sManifestForALocalCluster(t *testing.T) {
	plan := httpPlan(t, "http://127.0.0.1:1/", 10, time.Second)
	t.Chdir(t.TempDir())
	abs, err := filepath.Abs("store")
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main(t.Context(), []string{"k8s", "manifest", plan, "--workers", "2", "--image", "perflab:1", "--pull-policy", "Never",
		"--host-network", "--store-hostpath", "store", "--run-id", "r1"}, &out, &errOut)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"hostNetwork: true", "hostPath:\n          path: " + abs, "mountPath: " + abs, "value: " + abs,
		fmt.Sprintf("runAsUser: %d", os.Getuid())} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the manifest lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "--store '"+abs+"'") {
		t.Errorf("the coordinator is not told the store's path:\n%s", errOut.String())
	}
	errOut.Reset()
	code = Main(t.Context(), []string{"k8s", "manifest", plan, "--workers", "2", "--image", "perflab:1", "--store-hostpath", "store",
		"--store", "s3://b/p?endpoint=http://minio:9000"}, &out, &errOut)
	if code != ExitUsage || !strings.Contains(errOut.String(), "give --store or --store-hostpath, not both") {
		t.Errorf("exit %d:\n%s", code, errOut.String())
	}
}
