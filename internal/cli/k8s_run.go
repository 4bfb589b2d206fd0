package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/shard"
)

// Timings of `perflab k8s run`.
const (
	k8sPoll         = 2 * time.Second  // how often the Job's pods are looked at
	k8sDeleteWithin = 30 * time.Second // how long deleting the run's objects may take
)

// k8sRun is `perflab k8s run PLAN --workers N --image IMG --store URL
// [...]`: the run's objects are created in the cluster, this process is
// the coordinator (components, preparation, phases, merge, report) and the
// Job's pods are the workers; their state changes are shown as they come,
// and the objects are deleted at the end, on Ctrl-C and on failure,
// unless --keep.
func (e *env) k8sRun(ctx context.Context, args []string) error {
	fs := newFlagSet("k8s run", e)
	kf := addK8sFlags(fs)
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	kubeContext := fs.String("context", "", "the kubeconfig context (default: its current one)")
	keep := fs.Bool("keep", false, "leave the Job, ConfigMap and ServiceAccount in the cluster at the end")
	startIn := fs.Duration("start-timeout", 5*time.Minute, "how long the workers get to start and register (image pulls, scheduling)")
	out := fs.String("out", "perflab-runs", "parent directory for the run directory")
	jsonOut := fs.Bool("json", false, "print the JSON summary to stdout instead of the tables")
	var slo listFlag
	fs.Var(&slo, "slo", sloUsage+"; added to the plan's own slo")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: perflab k8s run PLAN.yaml --workers N --image IMG --store s3://BUCKET/PREFIX?endpoint=URL [--kubeconfig PATH] [--context C] [--keep] [flags]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab k8s run needs exactly one plan file, got %d arguments", len(pos))
	}
	if err := checkSLOFlags(slo); err != nil {
		return err
	}
	if *startIn <= 0 {
		return usageErrorf("--start-timeout %v must be > 0", *startIn)
	}
	p, b, err := checkedPlan(fs, pos[0], kf.profiles, kf.repeat, "RUN_DIR", true)
	if err != nil {
		return err
	}
	o, objs, err := kf.objects(p)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(o.Store, "s3://") {
		fmt.Fprintf(e.stderr, "perflab: warning: the store %s is a path: the Job mounts no volume for it, so the workers reach it only if you add one\n", o.Store)
	}
	client, err := e.kubeClient(*kubeconfig, *kubeContext)
	if err != nil {
		return &runError{err: err, hint: "check --kubeconfig and --context (kubectl config get-contexts)", code: ExitFailed}
	}
	dist := newCoordinator(distOptions{workers: o.Workers, store: o.Store, runID: o.RunID, profiles: kf.profiles, helloIn: *startIn,
		launch: &k8sWorkers{e: e, client: client, objs: objs, keep: *keep}})
	command := recordedCommand(append([]string{"perflab", "k8s", "run"}, args...))
	return e.executePlan(ctx, p, b, *out, *jsonOut, command, slo, dist)
}

// kubeClient is the cluster the kubeconfig names: client-go's loading
// rules ($KUBECONFIG, ~/.kube/config, or path), with context.
func (e *env) kubeClient(path, context string) (kubernetes.Interface, error) {
	if e.k8sClient != nil {
		return e.k8sClient(path, context)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cannot load the kubeconfig: %w", err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot make a Kubernetes client: %w", err)
	}
	return c, nil
}

// k8sWorkers are the workers of `perflab k8s run`: the pods of an Indexed
// Job, watched until the run ends.
type k8sWorkers struct {
	e      *env
	client kubernetes.Interface
	objs   k8s.Objects
	keep   bool

	created bool // the objects are this run's: stop deletes them
	mu      sync.Mutex
	bad     map[int]string
	pods    map[int]string
	cancel  context.CancelFunc
	watched chan struct{}
}

var _ launcher = (*k8sWorkers)(nil)

// start creates the run's objects and watches the Job's pods, telling
// every change of a worker's state.
func (k *k8sWorkers) start(ctx context.Context, run shard.Run, _ string, _ int) error {
	k.bad, k.pods = map[int]string{}, map[int]string{}
	if err := k8s.Create(ctx, k.client, k.objs); err != nil {
		return err
	}
	k.created = true
	ns, name := k.objs.Job.Namespace, k.objs.Job.Name
	fmt.Fprintf(k.e.stderr, "perflab: created Job %s/%s (run %s)\n", ns, name, run.ID)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	k.cancel, k.watched = cancel, make(chan struct{})
	go func() {
		defer close(k.watched)
		_, err := k8s.Wait(wctx, k.client, k.objs.Job, k8sPoll, k.changed)
		if err != nil && wctx.Err() == nil {
			fmt.Fprintf(k.e.stderr, "\nperflab: Job %s/%s: %v\n", ns, name, err)
		}
	}()
	return nil
}

// changed tells a worker's new state and remembers the failed ones.
func (k *k8sWorkers) changed(w k8s.WorkerState) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w.Pod != "" {
		k.pods[w.Index] = w.Pod
	}
	if w.Phase == "" {
		return
	}
	fmt.Fprintf(k.e.stderr, "\nperflab: %s\n", w)
	if w.Failed() {
		why := string(w.Phase)
		if w.Reason != "" {
			why = w.Reason
		}
		k.bad[w.Index] = fmt.Sprintf("pod %s: %s", w.Pod, why)
	}
}

func (k *k8sWorkers) failed() map[int]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[int]string, len(k.bad))
	for i, why := range k.bad {
		out[i] = why + "; kubectl -n " + k.objs.Job.Namespace + " logs " + k.pods[i]
	}
	return out
}

// stop stops watching and deletes the run's objects, unless --keep.
func (k *k8sWorkers) stop(bool) {
	if k.cancel != nil {
		k.cancel()
		<-k.watched
	}
	if !k.created {
		return
	}
	ns, name := k.objs.Job.Namespace, k.objs.Job.Name
	if k.keep {
		fmt.Fprintf(k.e.stderr, "perflab: kept Job, ConfigMap and ServiceAccount %s/%s (--keep): kubectl -n %s delete job,configmap,serviceaccount %s\n",
			ns, name, ns, name)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), k8sDeleteWithin)
	defer cancel()
	if err := k8s.Delete(ctx, k.client, k.objs); err != nil {
		fmt.Fprintf(k.e.stderr, "perflab: warning: %v; delete them with: kubectl -n %s delete job,configmap,serviceaccount %s\n", err, ns, name)
		return
	}
	fmt.Fprintf(k.e.stderr, "perflab: deleted Job %s/%s and its ConfigMap and ServiceAccount\n", ns, name)
}

func (k *k8sWorkers) logs(i int) string {
	return fmt.Sprintf("kubectl -n %s logs -l batch.kubernetes.io/job-completion-index=%d,%s=%s", k.objs.Job.Namespace, i,
		k8s.LabelRunID, k.objs.Job.Labels[k8s.LabelRunID])
}
