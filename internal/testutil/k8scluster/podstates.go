//go:build linux

package k8scluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// PodStates says, for a test's failure message, the state of each pod of
// the default namespace that selector picks: its phase, and each
// container's waiting reason or exit.
func PodStates(ctx context.Context, cs kubernetes.Interface, selector string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, p := range pods.Items {
		s := p.Name + " " + string(p.Status.Phase)
		for _, st := range p.Status.ContainerStatuses {
			if w := st.State.Waiting; w != nil {
				s += " " + w.Reason + ": " + w.Message
			}
			if x := st.State.Terminated; x != nil {
				s += fmt.Sprintf(" exit %d %s", x.ExitCode, x.Reason)
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}
