package k8s

import (
	"bytes"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

func testOptions() Options {
	return Options{
		Name: "tempo-load", Namespace: "perf", Image: "registry.example/perflab:1.0", Workers: 4,
		Store: "s3://perflab-runs/shards?endpoint=http://minio.perf:9000", RunID: "tempo-load-20261124-1200",
		Plan:   []byte("name: tempo\n"),
		Files:  map[string][]byte{"rules/node-alerts.yaml": []byte("groups: []\n"), "prompts.jsonl": []byte("{}\n")},
		Secret: "perflab-s3", CPU: "2", Memory: "1Gi", Deadline: 90 * time.Minute,
	}
}

func TestBuildIndexedJob(t *testing.T) {
	objs, err := Build(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	j := objs.Job.Spec
	if *j.Completions != 4 || *j.Parallelism != 4 || *j.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completions %d, parallelism %d, mode %s; want 4, 4, Indexed", *j.Completions, *j.Parallelism, *j.CompletionMode)
	}
	if j.BackoffLimitPerIndex == nil || *j.BackoffLimitPerIndex != 0 {
		t.Errorf("backoffLimitPerIndex %v: a retried worker would double its share of the load", j.BackoffLimitPerIndex)
	}
	if j.BackoffLimit != nil {
		t.Errorf("backoffLimit %d: the first failed worker would fail the Job, which stops the others", *j.BackoffLimit)
	}
	if *j.ActiveDeadlineSeconds != 5400 {
		t.Errorf("activeDeadlineSeconds %d, want 5400", *j.ActiveDeadlineSeconds)
	}
	pod := j.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || pod.ServiceAccountName != "tempo-load" {
		t.Errorf("restart policy %s, service account %q", pod.RestartPolicy, pod.ServiceAccountName)
	}
	c := pod.Containers[0]
	if got := strings.Join(append(c.Command, c.Args...), " "); got != "perflab worker --plan /etc/perflab/plan/plan.yaml" {
		t.Errorf("command %q", got)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["PERFLAB_WORKERS"] != "4" || env["PERFLAB_RUN_ID"] != "tempo-load-20261124-1200" || env["PERFLAB_STORE"] == "" {
		t.Errorf("env %v", env)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != "perflab-s3" {
		t.Errorf("credentials must come from the user's Secret: %+v", c.EnvFrom)
	}
	cpu := c.Resources.Limits[corev1.ResourceCPU]
	if cpu.Cmp(resource.MustParse("2")) != 0 || !c.Resources.Requests.Memory().Equal(resource.MustParse("1Gi")) {
		t.Errorf("resources %+v", c.Resources)
	}
	if objs.Job.Labels[LabelRunID] != "tempo-load-20261124-1200" || pod.TopologySpreadConstraints[0].LabelSelector.MatchLabels[LabelRunID] == "" {
		t.Errorf("run-id label missing: %v", objs.Job.Labels)
	}
}

func TestBuildPutsThePlanFilesBackAtTheirPaths(t *testing.T) {
	objs, err := Build(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	items := map[string]string{}
	for _, it := range objs.Job.Spec.Template.Spec.Volumes[0].ConfigMap.Items {
		items[it.Path] = objs.ConfigMap.Data[it.Key]
	}
	want := map[string]string{"plan.yaml": "name: tempo\n", "rules/node-alerts.yaml": "groups: []\n", "prompts.jsonl": "{}\n"}
	for p, body := range want {
		if items[p] != body {
			t.Errorf("file %s in the pod = %q, want %q", p, items[p], body)
		}
	}
	if len(items) != len(want) {
		t.Errorf("files in the pod: %v", items)
	}
}

func TestBuildRefusesFilesOutsideThePlansDirectory(t *testing.T) {
	for _, name := range []string{"../secrets.yaml", "/etc/passwd", "plan.yaml"} {
		o := testOptions()
		o.Files = map[string][]byte{name: []byte("x")}
		if _, err := Build(o); err == nil {
			t.Errorf("file %q was accepted", name)
		}
	}
}

func TestExistingServiceAccountIsNotCreated(t *testing.T) {
	o := testOptions()
	o.ServiceAccount = "load-runner"
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if objs.ServiceAccount != nil || objs.Job.Spec.Template.Spec.ServiceAccountName != "load-runner" {
		t.Errorf("service account %v, pods use %q", objs.ServiceAccount, objs.Job.Spec.Template.Spec.ServiceAccountName)
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	o := Options{Name: "Bad_Name", Namespace: "", Workers: 0, CPU: "two", Memory: "1Gb", RunID: "a b", Deadline: -time.Second}
	errs := o.Validate()
	text := ""
	for _, e := range errs {
		text += e.Error() + "\n"
	}
	for _, want := range []string{`name "Bad_Name"`, "namespace", "image", "workers 0", "store", "run id", "plan is empty", `cpu "two"`, `memory "1Gb"`, "deadline"} {
		if !strings.Contains(text, want) {
			t.Errorf("no problem about %s in:\n%s", want, text)
		}
	}
	good := testOptions()
	if errs := good.Validate(); len(errs) > 0 {
		t.Errorf("valid options refused: %v", errs)
	}
}

// A store URL with credentials in it would put them into the Job's
// environment and the printed coordinator command: it is refused, without
// repeating it; so is a scheme no worker can open.
func TestValidateRefusesAStoreWithCredentialsOrAnUnknownScheme(t *testing.T) {
	for _, store := range []string{"s3://AKIA:hunter2@b/p?endpoint=http://minio:9000", "ftp://b/p", "ftp://AKIA:hunter2@b/p",
		"s3:///p", "s3://b/p?endpoint=minio:9000", "file://host/dir"} {
		o := testOptions()
		o.Store = store
		errs := o.Validate()
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "store") || strings.Contains(errs[0].Error(), "hunter2") {
			t.Errorf("store %s: %v", store, errs)
		}
	}
	o := testOptions()
	o.Store = "/mnt/shared/runs"
	if errs := o.Validate(); len(errs) > 0 {
		t.Errorf("a volume path refused: %v", errs)
	}
}

func TestYAMLHoldsEveryObjectInCreationOrder(t *testing.T) {
	objs, err := Build(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	out, err := objs.YAML()
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(out, []byte("---\n"))
	var kinds []string
	for _, d := range docs {
		var m struct{ Kind string }
		if err := yaml.Unmarshal(d, &m); err != nil {
			t.Fatalf("document does not parse: %v\n%s", err, d)
		}
		kinds = append(kinds, m.Kind)
	}
	if strings.Join(kinds, ",") != "ConfigMap,ServiceAccount,Job" {
		t.Errorf("kinds %v, want ConfigMap, ServiceAccount, Job in creation order", kinds)
	}
	var job batchv1.Job
	if err := yaml.Unmarshal(docs[2], &job); err != nil || *job.Spec.Completions != 4 {
		t.Errorf("the Job does not read back: %v", err)
	}
}

// TestBuildForALocalCluster: --host-network and --store-hostpath put the
// pods on the node's network and mount the store's directory of the node
// at the same path, the workers running as its owner; neither is there by
// default.
func TestBuildForALocalCluster(t *testing.T) {
	o := testOptions()
	objs, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if pod := objs.Job.Spec.Template.Spec; pod.HostNetwork || len(pod.Volumes) != 1 || pod.SecurityContext != nil {
		t.Errorf("a real cluster's pod: host network %v, volumes %d, security context %+v", pod.HostNetwork, len(pod.Volumes), pod.SecurityContext)
	}
	o.HostNetwork, o.Store, o.HostStore = true, "/var/tmp/perflab-store", &Owner{UID: 1000, GID: 100}
	if errs := o.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	objs, err = Build(o)
	if err != nil {
		t.Fatal(err)
	}
	pod := objs.Job.Spec.Template.Spec
	if !pod.HostNetwork || pod.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
		t.Errorf("host network %v, DNS policy %s", pod.HostNetwork, pod.DNSPolicy)
	}
	v := pod.Volumes[len(pod.Volumes)-1]
	m := pod.Containers[0].VolumeMounts[len(pod.Containers[0].VolumeMounts)-1]
	if v.HostPath == nil || v.HostPath.Path != "/var/tmp/perflab-store" || m.Name != v.Name || m.MountPath != "/var/tmp/perflab-store" {
		t.Errorf("volume %+v mounted as %+v", v, m)
	}
	if sc := pod.SecurityContext; sc == nil || *sc.RunAsUser != 1000 || *sc.RunAsGroup != 100 {
		t.Errorf("security context %+v, want the store's owner 1000:100", sc)
	}
	for _, bad := range []string{"s3://b/p?endpoint=http://127.0.0.1:9000", "relative/dir"} {
		o.Store = bad
		if errs := o.Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "absolute directory") {
			t.Errorf("store %s on the node: %v", bad, errs)
		}
	}
}

// TestBuildNamesThePodAndNode: each worker is told its pod's and node's
// names, which its host name (the node's, on the host network) is not.
func TestBuildNamesThePodAndNode(t *testing.T) {
	objs, err := Build(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range objs.Job.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			got[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if got[EnvPodName] != "metadata.name" || got[EnvNodeName] != "spec.nodeName" {
		t.Errorf("downward API env %v", got)
	}
}
