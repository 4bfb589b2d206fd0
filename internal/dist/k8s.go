package dist

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/k8s"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/shard"
)

// Timings of `perflab k8s run`.
const (
	k8sPoll         = 2 * time.Second  // how often the Job's pods are looked at
	k8sDeleteWithin = 30 * time.Second // how long deleting the run's objects may take
)

// K8s are the workers of `perflab k8s run`: the pods of an Indexed
// Job, watched until the run ends.
type K8s struct {
	Events  run.Events
	Client  k8s.Client
	Objects k8s.Objects
	Keep    bool // leave the run's objects in the cluster at the end

	created bool // the objects are this run's: stop deletes them
	mu      sync.Mutex
	bad     map[int]string
	pods    map[int]string
	cancel  context.CancelFunc
	watched chan struct{}
}

var _ Launcher = (*K8s)(nil)

// Start creates the run's objects and watches the Job's pods, telling
// every change of a worker's state.
func (k *K8s) Start(ctx context.Context, sr shard.Run, _ string, _ int) error {
	k.bad, k.pods = map[int]string{}, map[int]string{}
	if err := k8s.Create(ctx, k.Client, k.Objects); err != nil {
		return err
	}
	k.created = true
	ns, name := k.Objects.Job.Namespace, k.Objects.Job.Name
	k.Events.Note(fmt.Sprintf("created Job %s/%s (run %s)", ns, name, sr.ID))
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	k.cancel, k.watched = cancel, make(chan struct{})
	go func() {
		defer close(k.watched)
		_, err := k8s.Wait(wctx, k.Client, k.Objects.Job, k8sPoll, k.changed)
		if err != nil && wctx.Err() == nil {
			k.Events.Alert(fmt.Sprintf("Job %s/%s: %v", ns, name, err))
		}
	}()
	return nil
}

// changed tells a worker's new state and remembers the failed ones.
func (k *K8s) changed(w k8s.WorkerState) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w.Pod != "" {
		k.pods[w.Index] = w.Pod
	}
	if w.Phase == "" {
		return
	}
	k.Events.Alert(w.String())
	if w.Failed() {
		why := string(w.Phase)
		if w.Reason != "" {
			why = w.Reason
		}
		k.bad[w.Index] = fmt.Sprintf("pod %s: %s", w.Pod, why)
	}
}

func (k *K8s) Failed() map[int]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[int]string, len(k.bad))
	for i, why := range k.bad {
		out[i] = why + "; kubectl -n " + k.Objects.Job.Namespace + " logs " + k.pods[i]
	}
	return out
}

// Stop stops watching and deletes the run's objects, unless --keep.
func (k *K8s) Stop(bool) {
	if k.cancel != nil {
		k.cancel()
		<-k.watched
	}
	if !k.created {
		return
	}
	ns, name := k.Objects.Job.Namespace, k.Objects.Job.Name
	if k.Keep {
		k.Events.Note(fmt.Sprintf("kept Job, ConfigMap and ServiceAccount %s/%s (--keep): kubectl -n %s delete job,configmap,serviceaccount %s",
			ns, name, ns, name))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), k8sDeleteWithin)
	defer cancel()
	if err := k8s.Delete(ctx, k.Client, k.Objects); err != nil {
		k.Events.Warn(fmt.Sprintf("%v; delete them with: kubectl -n %s delete job,configmap,serviceaccount %s", err, ns, name))
		return
	}
	k.Events.Note(fmt.Sprintf("deleted Job %s/%s and its ConfigMap and ServiceAccount", ns, name))
}

func (k *K8s) Logs(i int) string {
	return fmt.Sprintf("kubectl -n %s logs -l batch.kubernetes.io/job-completion-index=%d,%s=%s", k.Objects.Job.Namespace, i,
		k8s.LabelRunID, k.Objects.Job.Labels[k8s.LabelRunID])
}
