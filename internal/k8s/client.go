package k8s

import (
	"context"
	"fmt"
	"reflect"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// Client is the part of the Kubernetes API a run uses: its ConfigMap,
// ServiceAccount and Job created and deleted, the Job read, its pods
// listed. Objects are of core/v1 and batch/v1; each method takes the
// namespace and name from the object. Create makes obj what the API server
// answered, so that a caller sees what the server kept of it. A fake for tests wraps client-go's
// fake clientset (package k8stest).
type Client interface {
	Create(ctx context.Context, obj runtime.Object) error
	Get(ctx context.Context, namespace, name string, into runtime.Object) error
	List(ctx context.Context, namespace, selector string, into runtime.Object) error
	Delete(ctx context.Context, obj runtime.Object, opts metav1.DeleteOptions) error
}

// restClient speaks the API over REST with a scheme of core/v1 and
// batch/v1 only. client-go's clientset registers every API group, about
// 14 MB of perflab's binary and the pages its start-up touches in every
// perflab process, for four kinds of objects.
type restClient struct {
	core, batch *rest.RESTClient
}

// NewClient is a Client of the cluster cfg describes (a kubeconfig's).
func NewClient(cfg *rest.Config) (Client, error) {
	cs, err := restClients(cfg, []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme},
		corev1.SchemeGroupVersion, batchv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	return &restClient{core: cs[0], batch: cs[1]}, nil
}

// restClients are REST clients of the cluster cfg describes, one per API
// group version of gvs (core/v1 at /api, the others at /apis), sharing
// one HTTP client and a scheme of the kinds add registers.
func restClients(cfg *rest.Config, add []func(*runtime.Scheme) error, gvs ...schema.GroupVersion) ([]*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	for _, a := range add {
		if err := a(scheme); err != nil {
			return nil, fmt.Errorf("cannot make a Kubernetes client: %w", err)
		}
	}
	codecs := serializer.NewCodecFactory(scheme)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot make a Kubernetes client: %w", err)
	}
	out := make([]*rest.RESTClient, len(gvs))
	for i, gv := range gvs {
		c := rest.CopyConfig(cfg)
		c.GroupVersion, c.APIPath = &gv, "/apis"
		if gv.Group == "" {
			c.APIPath = "/api"
		}
		c.NegotiatedSerializer = codecs.WithoutConversion()
		if c.UserAgent == "" {
			c.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		if out[i], err = rest.RESTClientForConfigAndClient(c, hc); err != nil {
			return nil, fmt.Errorf("cannot make a Kubernetes client: %w", err)
		}
	}
	return out, nil
}

// resource is the REST client and resource name of obj's kind.
func (c *restClient) resource(obj runtime.Object) (*rest.RESTClient, string, error) {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return c.core, "configmaps", nil
	case *corev1.ServiceAccount:
		return c.core, "serviceaccounts", nil
	case *corev1.Pod, *corev1.PodList:
		return c.core, "pods", nil
	case *batchv1.Job:
		return c.batch, "jobs", nil
	}
	return nil, "", fmt.Errorf("no resource for %T", obj)
}

// Create creates obj and makes obj what the API server answered.
func (c *restClient) Create(ctx context.Context, obj runtime.Object) error {
	rc, res, err := c.resource(obj)
	if err != nil {
		return err
	}
	m, err := metaOf(obj)
	if err != nil {
		return err
	}
	made := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
	if err := rc.Post().Namespace(m.GetNamespace()).Resource(res).Body(obj).Do(ctx).Into(made); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(made).Elem())
	return nil
}

func (c *restClient) Get(ctx context.Context, namespace, name string, into runtime.Object) error {
	rc, res, err := c.resource(into)
	if err != nil {
		return err
	}
	return rc.Get().Namespace(namespace).Resource(res).Name(name).Do(ctx).Into(into)
}

func (c *restClient) List(ctx context.Context, namespace, selector string, into runtime.Object) error {
	rc, res, err := c.resource(into)
	if err != nil {
		return err
	}
	return rc.Get().Namespace(namespace).Resource(res).Param("labelSelector", selector).Do(ctx).Into(into)
}

func (c *restClient) Delete(ctx context.Context, obj runtime.Object, opts metav1.DeleteOptions) error {
	rc, res, err := c.resource(obj)
	if err != nil {
		return err
	}
	m, err := metaOf(obj)
	if err != nil {
		return err
	}
	return rc.Delete().Namespace(m.GetNamespace()).Resource(res).Name(m.GetName()).Body(&opts).Do(ctx).Error()
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no name", obj)
	}
	return m, nil
}
