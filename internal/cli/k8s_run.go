package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/perflab/perflab/internal/fleet"
	"github.com/perflab/perflab/internal/k8s"
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
		fmt.Fprintln(fs.Output(), "Usage: perflab k8s run PLAN.yaml --workers N --image IMG --store s3://BUCKET/PREFIX?endpoint=URL [--kubeconfig PATH] [--context C] [--keep] [flags]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
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
	if !strings.HasPrefix(o.Store, "s3://") && o.HostStore == nil {
		fmt.Fprintf(e.stderr, "perflab: warning: the store %s is a path: the Job mounts no volume for it, so the workers reach it only if you add one (--store-hostpath, on a local cluster whose node is this machine)\n", o.Store)
	}
	client, err := e.kubeClient(*kubeconfig, *kubeContext)
	if err != nil {
		return &runError{err: err, hint: "check --kubeconfig and --context (kubectl config get-contexts)", code: ExitFailed}
	}
	load := fleet.New(fleet.Options{Workers: o.Workers, Store: o.Store, RunID: o.RunID, Profiles: kf.profiles, HelloIn: *startIn,
		Launch: &fleet.K8s{Events: e.events(), Client: client, Objects: objs, Keep: *keep}})
	command := recordedCommand(append([]string{"perflab", "k8s", "run"}, args...))
	return e.executePlan(ctx, p, b, *out, *jsonOut, command, slo, load)
}

// kubeClient is the cluster the kubeconfig names: client-go's loading
// rules ($KUBECONFIG, ~/.kube/config, or path), with context.
func (e *env) kubeClient(path, context string) (k8s.Client, error) {
	if e.k8sClient != nil {
		return e.k8sClient(path, context)
	}
	cfg, err := restConfig(path, context)
	if err != nil {
		return nil, err
	}
	return k8s.NewClient(cfg)
}

// restConfig is the cluster a kubeconfig file (default: $KUBECONFIG, else
// ~/.kube/config) and context (default: its current one) name.
func restConfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cannot load the kubeconfig: %w", err)
	}
	return cfg, nil
}
