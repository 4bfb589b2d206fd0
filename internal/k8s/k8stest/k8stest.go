// Package k8stest makes client-go's fake clientset (or any clientset) a
// k8s.Client, for tests: perflab itself speaks the API through k8s.NewClient,
// without the clientset, and only test binaries link this package.
package k8stest

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// Clientset is a k8s.Client over a clientset's typed clients.
type Clientset struct {
	kubernetes.Interface
}

// Create creates obj, a ConfigMap, ServiceAccount or Job.
func (c Clientset) Create(ctx context.Context, obj runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		made, err := c.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		return into(o, made, err)
	case *corev1.ServiceAccount:
		made, err := c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		return into(o, made, err)
	case *batchv1.Job:
		made, err := c.BatchV1().Jobs(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		return into(o, made, err)
	}
	return fmt.Errorf("cannot create a %T", obj)
}

// into makes *obj what the fake API server made of it, as the real client
// does.
func into[T any](obj, made *T, err error) error {
	if err == nil {
		*obj = *made
	}
	return err
}

// Get reads a Job into into.
func (c Clientset) Get(ctx context.Context, namespace, name string, into runtime.Object) error {
	j, ok := into.(*batchv1.Job)
	if !ok {
		return fmt.Errorf("cannot get a %T", into)
	}
	got, err := c.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		*j = *got
	}
	return err
}

// List lists pods into into.
func (c Clientset) List(ctx context.Context, namespace, selector string, into runtime.Object) error {
	l, ok := into.(*corev1.PodList)
	if !ok {
		return fmt.Errorf("cannot list into a %T", into)
	}
	got, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err == nil {
		*l = *got
	}
	return err
}

// Delete deletes obj, a ConfigMap, ServiceAccount or Job.
func (c Clientset) Delete(ctx context.Context, obj runtime.Object, opts metav1.DeleteOptions) error {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return c.CoreV1().ConfigMaps(o.Namespace).Delete(ctx, o.Name, opts)
	case *corev1.ServiceAccount:
		return c.CoreV1().ServiceAccounts(o.Namespace).Delete(ctx, o.Name, opts)
	case *batchv1.Job:
		return c.BatchV1().Jobs(o.Namespace).Delete(ctx, o.Name, opts)
	}
	return fmt.Errorf("cannot delete a %T", obj)
}
