// Package k8s runs perflab's load generators as a Kubernetes Indexed Job:
// it builds the objects (a ConfigMap with the plan and the files it names, a
// ServiceAccount, the Job) with the typed API, renders them as YAML, creates
// them with client-go, follows the Job's pods until it ends, and deletes what
// it created. What the workers measure travels through the shared store
// (internal/shard), not through the Kubernetes API. It also builds the
// image the workers run, from the perflab binary itself (image.go), and
// writes it as an OCI archive for a cluster's nodes or pushes it to a
// registry (imagewrite.go).
package k8s

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/perflab/perflab/internal/shard"
)

// Labels every object carries, so that a run's objects can be listed and
// told apart from another run's.
const (
	LabelName  = "app.kubernetes.io/name"
	LabelRunID = "perflab.dev/run-id"
	AppName    = "perflab"
)

// Where the plan's ConfigMap is mounted in a worker's container.
const (
	PlanDir  = "/etc/perflab/plan"
	PlanFile = "plan.yaml"
)

// Options say what to generate.
type Options struct {
	Name      string // the Job, ConfigMap and ServiceAccount's name
	Namespace string
	Image     string // an image holding the perflab binary on its PATH
	Workers   int    // completions and parallelism of the Indexed Job
	Store     string // the shared store's URL (s3://bucket/prefix?endpoint=… or a mounted path)
	RunID     string
	// Plan is the plan's text; Files are the files it names (rules,
	// prompts, bodies), by their path relative to the plan.
	Plan  []byte
	Files map[string][]byte
	// Secret, when set, is a Secret of the user's whose keys become the
	// workers' environment (store credentials, the plan's ${VAR}s).
	Secret string
	// ServiceAccount, when set, is an existing account the pods use; none
	// is created then.
	ServiceAccount string
	CPU, Memory    string        // each worker's requests (and limits: the same, so it gets its cores)
	Deadline       time.Duration // the Job's activeDeadlineSeconds; 0: none
	PullPolicy     corev1.PullPolicy
}

// Objects are what one distributed run creates.
type Objects struct {
	ConfigMap      *corev1.ConfigMap
	ServiceAccount *corev1.ServiceAccount // nil when Options.ServiceAccount names an existing one
	Job            *batchv1.Job
}

// Validate lists every problem with o.
func (o *Options) Validate() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for _, v := range []struct{ what, value string }{{"name", o.Name}, {"namespace", o.Namespace}} {
		if msgs := validation.IsDNS1123Label(v.value); len(msgs) > 0 {
			add("%s %q is not a valid Kubernetes name: %s", v.what, v.value, strings.Join(msgs, "; "))
		}
	}
	if o.ServiceAccount != "" {
		if msgs := validation.IsDNS1123Subdomain(o.ServiceAccount); len(msgs) > 0 {
			add("service account %q is not a valid name: %s", o.ServiceAccount, strings.Join(msgs, "; "))
		}
	}
	if o.Secret != "" {
		if msgs := validation.IsDNS1123Subdomain(o.Secret); len(msgs) > 0 {
			add("secret %q is not a valid name: %s", o.Secret, strings.Join(msgs, "; "))
		}
	}
	if o.Image == "" {
		add("an image is needed (--image): one with the perflab binary on its PATH")
	}
	if o.Workers < 1 {
		add("workers %d must be >= 1", o.Workers)
	}
	if o.Store == "" {
		add("a shared store is needed (--store s3://bucket/prefix?endpoint=… or a volume path)")
	} else if err := shard.CheckURL(o.Store); err != nil {
		add("store: %v (the workers would refuse it; credentials go to them through --secret, never in the URL)", err)
	}
	if msgs := validation.IsValidLabelValue(o.RunID); o.RunID == "" || len(msgs) > 0 {
		add("run id %q must be a valid label value: %s", o.RunID, strings.Join(msgs, "; "))
	}
	if len(o.Plan) == 0 {
		add("the plan is empty")
	}
	for _, q := range []struct{ what, value string }{{"cpu", o.CPU}, {"memory", o.Memory}} {
		if q.value == "" {
			continue
		}
		if _, err := resource.ParseQuantity(q.value); err != nil {
			add("%s %q is not a Kubernetes quantity (e.g. 500m, 2, 512Mi)", q.what, q.value)
		}
	}
	if o.Deadline < 0 {
		add("deadline %v must be >= 0", o.Deadline)
	}
	return errs
}

// Build returns the objects of a run. Call Validate first.
func Build(o Options) (Objects, error) {
	labels := map[string]string{LabelName: AppName, LabelRunID: o.RunID}
	meta := metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels}
	cm, items, err := configMap(meta, o)
	if err != nil {
		return Objects{}, err
	}
	objs := Objects{ConfigMap: cm}
	account := o.ServiceAccount
	if account == "" {
		no := false
		objs.ServiceAccount = &corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta, AutomountServiceAccountToken: &no, // workers never call the API
		}
		account = o.Name
	}
	objs.Job = indexedJob(meta, o, account, items)
	return objs, nil
}

// configKey turns a file's path into a ConfigMap key: keys may hold only
// letters, digits, '-', '_' and '.', so a path's slashes become "__".
var notKeyChar = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// configMap holds the plan and the files it names, with the volume items
// that put every file back at its path relative to the plan.
func configMap(meta metav1.ObjectMeta, o Options) (*corev1.ConfigMap, []corev1.KeyToPath, error) {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta,
		Data: map[string]string{PlanFile: string(o.Plan)}}
	items := []corev1.KeyToPath{{Key: PlanFile, Path: PlanFile}}
	names := make([]string, 0, len(o.Files))
	for name := range o.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		clean := path.Clean(name)
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || clean == PlanFile {
			return nil, nil, fmt.Errorf("cannot put %q in the plan's ConfigMap: only files below the plan's directory can go with it", name)
		}
		key := "f." + notKeyChar.ReplaceAllString(strings.ReplaceAll(clean, "/", "__"), "_")
		if _, dup := cm.Data[key]; dup {
			return nil, nil, fmt.Errorf("cannot put %q in the plan's ConfigMap: its key %q is taken by another file", name, key)
		}
		cm.Data[key] = string(o.Files[name])
		items = append(items, corev1.KeyToPath{Key: key, Path: clean})
	}
	size := 0
	for _, v := range cm.Data {
		size += len(v)
	}
	if size > 1<<20-4096 {
		return nil, nil, fmt.Errorf("cannot put the plan in a ConfigMap: its files hold %d bytes, over the 1 MiB a ConfigMap may", size)
	}
	return cm, items, nil
}

// indexedJob is the Job of N workers, each told its index by Kubernetes
// (JOB_COMPLETION_INDEX) and the rest by its environment.
func indexedJob(meta metav1.ObjectMeta, o Options, account string, items []corev1.KeyToPath) *batchv1.Job {
	n := int32(o.Workers)
	indexed := batchv1.IndexedCompletion
	zero := int32(0)
	ttl := int32(24 * 3600) // a coordinator that died leaves nothing behind for long
	no := false
	spec := batchv1.JobSpec{
		Completions: &n, Parallelism: &n, CompletionMode: &indexed,
		// A retried worker would run its share of the load a second time,
		// on top of the others: a failed shard is reported, not retried.
		BackoffLimit:            &zero,
		TTLSecondsAfterFinished: &ttl,
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
			Spec: corev1.PodSpec{
				RestartPolicy:                 corev1.RestartPolicyNever,
				ServiceAccountName:            account,
				AutomountServiceAccountToken:  &no,
				TerminationGracePeriodSeconds: ptr(int64(30)),
				Containers:                    []corev1.Container{container(o)},
				Volumes: []corev1.Volume{{Name: "plan", VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: o.Name}, Items: items},
				}}},
				// Spread the workers over nodes, so that one node's
				// network or CPU is not every worker's limit.
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
					MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
					LabelSelector: &metav1.LabelSelector{MatchLabels: meta.Labels},
				}},
			},
		},
	}
	if o.Deadline > 0 {
		spec.ActiveDeadlineSeconds = ptr(int64((o.Deadline + time.Second - 1) / time.Second))
	}
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta, Spec: spec}
}

// container runs `perflab worker` on the mounted plan.
func container(o Options) corev1.Container {
	c := corev1.Container{
		Name: "perflab", Image: o.Image, ImagePullPolicy: o.PullPolicy,
		Command: []string{"perflab"},
		Args:    []string{"worker", "--plan", path.Join(PlanDir, PlanFile)},
		Env: []corev1.EnvVar{
			{Name: "PERFLAB_WORKERS", Value: fmt.Sprint(o.Workers)},
			{Name: "PERFLAB_RUN_ID", Value: o.RunID},
			{Name: "PERFLAB_STORE", Value: o.Store},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "plan", MountPath: PlanDir, ReadOnly: true}},
	}
	if o.Secret != "" {
		c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: o.Secret}}}}
	}
	if o.CPU != "" || o.Memory != "" {
		rl := corev1.ResourceList{}
		if o.CPU != "" {
			rl[corev1.ResourceCPU] = resource.MustParse(o.CPU)
		}
		if o.Memory != "" {
			rl[corev1.ResourceMemory] = resource.MustParse(o.Memory)
		}
		// Limits equal to requests: the worker gets the cores it asked for
		// (Go sets GOMAXPROCS from the CPU limit), and a worker short of
		// CPU shows as client-bound instead of being throttled unseen.
		c.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
	}
	return c
}

// YAML renders the objects as one multi-document YAML stream, in the order
// they must be created.
func (objs Objects) YAML() ([]byte, error) {
	var b bytes.Buffer
	for i, obj := range objs.list() {
		out, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("cannot render %T as YAML: %w", obj, err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(out)
	}
	return b.Bytes(), nil
}

// list is the objects in creation order.
func (objs Objects) list() []any {
	out := []any{objs.ConfigMap}
	if objs.ServiceAccount != nil {
		out = append(out, objs.ServiceAccount)
	}
	return append(out, objs.Job)
}

func ptr[T any](v T) *T { return &v }
