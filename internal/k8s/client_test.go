package k8s

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// apiServer is a stand-in for the Kubernetes API server: it keeps the
// objects POSTed to it by path, answers GETs of them and of the pods it
// was given, and DELETEs, with the API's status objects for conflicts and
// missing objects. It records every request as "METHOD path?query body-kind".
type apiServer struct {
	mu      sync.Mutex
	objects map[string][]byte // by path
	pods    []byte            // the PodList a pod list answers
	seen    []string
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	var kind struct {
		Kind              string `json:"kind"`
		PropagationPolicy string `json:"propagationPolicy"`
		Metadata          struct{ Name string }
	}
	_ = json.Unmarshal(body, &kind)
	a.seen = append(a.seen, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+kind.Kind+" "+kind.PropagationPolicy))
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost:
		path := r.URL.Path + "/" + kind.Metadata.Name
		if a.objects[path] != nil {
			status(w, http.StatusConflict, metav1.StatusReasonAlreadyExists)
			return
		}
		a.objects[path] = body
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pods"):
		_, _ = w.Write(a.pods)
	case a.objects[r.URL.Path] == nil:
		status(w, http.StatusNotFound, metav1.StatusReasonNotFound)
	case r.Method == http.MethodGet:
		_, _ = w.Write(a.objects[r.URL.Path])
	case r.Method == http.MethodDelete:
		delete(a.objects, r.URL.Path)
		status(w, http.StatusOK, "")
	}
}

func status(w http.ResponseWriter, code int, reason metav1.StatusReason) {
	w.WriteHeader(code)
	s := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Code: int32(code), Reason: reason, Status: metav1.StatusSuccess}
	if code >= 300 {
		s.Status = metav1.StatusFailure
	}
	_ = json.NewEncoder(w).Encode(s)
}

func TestClientSpeaksTheAPIsPaths(t *testing.T) {
	objs := built(t)
	ns, name := objs.Job.Namespace, objs.Job.Name
	pods, _ := json.Marshal(corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []corev1.Pod{{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-0", Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "0"}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}}})
	api := &apiServer{objects: map[string][]byte{}, pods: pods}
	srv := httptest.NewServer(api)
	defer srv.Close()
	c, err := NewClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := Create(ctx, c, objs); err != nil {
		t.Fatal(err)
	}
	st, err := Look(ctx, c, objs.Job)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Workers) == 0 || st.Workers[0].Phase != corev1.PodRunning || st.Workers[0].Pod != name+"-0" {
		t.Errorf("workers %+v, want worker 0 running in pod %s-0", st.Workers, name)
	}
	if err := Create(ctx, c, objs); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("creating the run twice: %v, want it named as existing", err)
	}
	if err := Delete(ctx, c, objs); err != nil {
		t.Fatal(err)
	}
	var j batchv1.Job
	if err := c.Get(ctx, ns, name, &j); !apierrors.IsNotFound(err) {
		t.Errorf("the Job after Delete: %v, want not found", err)
	}
	core, batch := "/api/v1/namespaces/"+ns, "/apis/batch/v1/namespaces/"+ns
	want := []string{
		"POST " + core + "/configmaps ConfigMap",
		"POST " + batch + "/jobs Job",
		"GET " + batch + "/jobs/" + name,
		"GET " + core + "/pods?labelSelector=",
		"POST " + core + "/configmaps ConfigMap", // the second Create stops at the first object
		"DELETE " + batch + "/jobs/" + name + " DeleteOptions Foreground",
		"DELETE " + core + "/configmaps/" + objs.ConfigMap.Name + " DeleteOptions Foreground",
		"GET " + batch + "/jobs/" + name,
	}
	if objs.ServiceAccount != nil {
		want = slices.Insert(want, 1, "POST "+core+"/serviceaccounts ServiceAccount")
		want = slices.Insert(want, 7, "DELETE "+core+"/serviceaccounts/"+objs.ServiceAccount.Name+" DeleteOptions Foreground")
	}
	if len(api.seen) != len(want) {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(api.seen, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(api.seen[i], want[i]) {
			t.Errorf("request %d: %q, want %q", i, api.seen[i], want[i])
		}
	}
}
