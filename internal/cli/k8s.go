package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/perflab/perflab/internal/fleet"
	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/run"
)

// k8sCmd is `perflab k8s manifest|run|image`.
func (e *env) k8sCmd(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageErrorf("perflab k8s needs a subcommand: manifest, run or image")
	}
	if isHelp(args[0]) {
		return e.groupHelp("k8s", "run")
	}
	switch args[0] {
	case "manifest":
		return e.k8sManifest(args[1:])
	case "run":
		return e.k8sRun(ctx, args[1:])
	case "image":
		return e.k8sImage(ctx, args[1:])
	}
	return usageErrorf("perflab k8s %s: unknown subcommand; want manifest, run or image", args[0])
}

// k8sFlags are the flags `perflab k8s manifest` and `perflab k8s run`
// share: what the Job is made of.
type k8sFlags struct {
	workers                  int
	image, store, namespace  string
	name, secret, account    string
	cpu, memory, runID, pull string
	profiles                 string
	repeat                   int
	deadline                 time.Duration
	// for a local cluster whose node is this machine
	hostNetwork bool
	storeHost   string
}

func addK8sFlags(fs *flag.FlagSet) *k8sFlags {
	kf := &k8sFlags{}
	fs.IntVar(&kf.workers, "workers", 0, "the Indexed Job's `N` workers (completions and parallelism)")
	fs.StringVar(&kf.image, "image", "", "an image with the perflab binary on its PATH (perflab k8s image makes one)")
	fs.StringVar(&kf.store, "store", "", "the shared store every worker reaches: s3://BUCKET/PREFIX?endpoint=URL (credentials from --secret)")
	fs.StringVar(&kf.namespace, "namespace", "default", "the namespace of the run's objects")
	fs.StringVar(&kf.name, "name", "", "the name of the Job, ConfigMap and ServiceAccount (default perflab-RUN_ID)")
	fs.StringVar(&kf.secret, "secret", "", "a Secret of yours whose keys become the workers' environment (store credentials, the plan's ${VAR}s)")
	fs.StringVar(&kf.account, "service-account", "", "an existing ServiceAccount for the workers (default: one is created, without API access)")
	fs.StringVar(&kf.cpu, "cpu", "1", "each worker's CPU request and limit")
	fs.StringVar(&kf.memory, "memory", "512Mi", "each worker's memory request and limit")
	fs.StringVar(&kf.runID, "run-id", "", "the run's id in the store and its objects' label (default: a new one)")
	fs.StringVar(&kf.pull, "pull-policy", "", "the image pull policy: Always, IfNotPresent or Never (default: Kubernetes')")
	fs.DurationVar(&kf.deadline, "deadline", 0, "the Job's activeDeadlineSeconds: Kubernetes ends it after this long (default: none)")
	fs.StringVar(&kf.profiles, "profile", "", "run only these profiles, comma-separated, in this order (default: all)")
	fs.IntVar(&kf.repeat, "repeat", 0, "run every cell `N` times, interleaved (default: the plan's repeat, else 1)")
	fs.BoolVar(&kf.hostNetwork, "host-network", false, "local cluster: the pods use the node's network, so that they reach a target and store on its loopback")
	fs.StringVar(&kf.storeHost, "store-hostpath", "", "local cluster whose node is this machine: the shared store is `DIR` here, mounted at the same path in the pods (hostPath), which run as your user")
	return kf
}

// objects are the Kubernetes objects of a run of p, with the options they
// were built from.
func (kf *k8sFlags) objects(p *plan.Plan) (k8s.Options, k8s.Objects, error) {
	o, err := kf.options(p)
	if err != nil {
		return o, k8s.Objects{}, err
	}
	objs, err := k8s.Build(o)
	if err != nil {
		return o, objs, usageErrorf("%v", err)
	}
	return o, objs, nil
}

// options are the k8s options of the flags, for plan p; every problem is
// listed.
func (kf *k8sFlags) options(p *plan.Plan) (k8s.Options, error) {
	if kf.runID == "" {
		kf.runID = fleet.NewRunID()
	}
	if kf.name == "" {
		kf.name = "perflab-" + kf.runID
	}
	text, err := os.ReadFile(p.File)
	if err != nil {
		return k8s.Options{}, &runError{err: fmt.Errorf("cannot read the plan: %w", err), code: ExitUsage}
	}
	files, err := planFiles(p)
	if err != nil {
		return k8s.Options{}, usageErrorf("%v", err)
	}
	o := k8s.Options{Name: kf.name, Namespace: kf.namespace, Image: kf.image, Workers: kf.workers, Store: kf.store,
		RunID: kf.runID, Plan: text, Files: files, Secret: kf.secret, ServiceAccount: kf.account, CPU: kf.cpu,
		Memory: kf.memory, Deadline: kf.deadline, PullPolicy: corev1.PullPolicy(kf.pull), HostNetwork: kf.hostNetwork}
	var errs []error
	if kf.storeHost != "" {
		if kf.store != "" {
			errs = append(errs, errors.New("give --store or --store-hostpath, not both"))
		}
		// The pods see the directory at the path the coordinator opens.
		if o.Store, err = filepath.Abs(kf.storeHost); err != nil {
			return o, usageErrorf("--store-hostpath %s: %v", kf.storeHost, err)
		}
		kf.store = o.Store
		o.HostStore = &k8s.Owner{UID: int64(os.Getuid()), GID: int64(os.Getgid())}
	}
	errs = append(errs, o.Validate()...)
	switch kf.pull {
	case "", "Always", "IfNotPresent", "Never":
	default:
		errs = append(errs, fmt.Errorf("--pull-policy %q: want Always, IfNotPresent or Never", kf.pull))
	}
	if kf.workers > maxWorkers {
		errs = append(errs, fmt.Errorf("--workers %d: want at most %d", kf.workers, maxWorkers))
	}
	if len(errs) > 0 {
		lines := make([]string, len(errs))
		for i, e := range errs {
			lines[i] = e.Error()
		}
		if kf.image == "" {
			lines = append(lines, imageHowTo)
		}
		return o, usageErrorf("cannot make the run's Kubernetes objects:\n  %s", strings.Join(lines, "\n  "))
	}
	return o, nil
}

// planFiles are the files p's workloads name (every *_file param: bodies,
// rules, prompts, CA bundles), by their path relative to the plan, read:
// they go into the ConfigMap beside it. A file outside the plan's
// directory cannot.
func planFiles(p *plan.Plan) (map[string][]byte, error) {
	b, err := run.Builtins("RUN_DIR")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	var errs []error
	for _, c := range p.RunCells(p.Repeat) {
		inst, err := p.Expand(c, b)
		if err != nil {
			return nil, err
		}
		for _, pr := range inst.Profiles {
			for _, w := range pr.Workloads {
				errs = append(errs, addParamFiles(p.Dir, w, out)...)
			}
		}
	}
	return out, errors.Join(errs...)
}

func addParamFiles(dir string, w plan.Workload, out map[string][]byte) []error {
	var params map[string]any
	if err := w.Params.Decode(&params); err != nil {
		return []error{err}
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		path, ok := params[k].(string)
		if !strings.HasSuffix(k, "_file") || !ok || path == "" {
			continue
		}
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, path)
		}
		rel, err := filepath.Rel(dir, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			errs = append(errs, fmt.Errorf("workload %s: %s %s is outside the plan's directory: the workers cannot have it; put it beside the plan", w.Name, k, path))
			continue
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			errs = append(errs, fmt.Errorf("workload %s: cannot read %s: %w", w.Name, k, err))
			continue
		}
		out[filepath.ToSlash(rel)] = data
	}
	return errs
}

// k8sManifest is `perflab k8s manifest PLAN --workers N --image IMG
// --store URL [...]`: the YAML of the objects `perflab k8s run` creates,
// to apply by hand (then run the coordinator's side with perflab merge).
func (e *env) k8sManifest(args []string) error {
	fs := newFlagSet("k8s manifest", e)
	kf := addK8sFlags(fs)
	out := fs.String("out", "", "write the YAML to this file instead of stdout")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab k8s manifest PLAN.yaml --workers N --image IMG --store s3://BUCKET/PREFIX?endpoint=URL [flags]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return e.flagError(fs, err)
	}
	if len(pos) != 1 {
		return usageErrorf("perflab k8s manifest needs exactly one plan file, got %d arguments", len(pos))
	}
	p, _, err := checkedPlan(fs, pos[0], kf.profiles, kf.repeat, "RUN_DIR", false)
	if err != nil {
		return err
	}
	o, objs, err := kf.objects(p)
	if err != nil {
		return err
	}
	y, err := objs.YAML()
	if err != nil {
		return &runError{err: err, code: ExitFailed}
	}
	if *out == "" {
		if _, err := e.stdout.Write(y); err != nil {
			return err
		}
	} else {
		if err := os.WriteFile(*out, y, 0o644); err != nil {
			return &runError{err: fmt.Errorf("cannot write %s: %w", *out, err), code: ExitFailed}
		}
		fmt.Fprintf(e.stderr, "perflab: wrote %s: run %s, %d workers\n", *out, o.RunID, o.Workers)
	}
	fmt.Fprintf(e.stderr, "perflab: once applied, its workers wait for their coordinator: perflab run %s --workers %d --store '%s' --run-id %s\n",
		p.File, o.Workers, o.Store, o.RunID)
	return nil
}
