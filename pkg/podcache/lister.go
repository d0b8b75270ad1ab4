package podcache

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Lister reads Pods from an informer's indexer whose Pods are cached Pods (or plain Pods),
// as client-go's typed PodLister does for plain ones: Get returns a NotFound error for a Pod
// the cache does not hold, List the Pods whose labels match. Each Pod it returns is decoded
// anew (From). The indexer must have client-go's namespace index (cache.NamespaceIndex), as
// every informer built by a SharedInformerFactory has.
type Lister struct{ indexer cache.Indexer }

// NewLister returns a Lister over indexer (SharedIndexInformer.GetIndexer()).
func NewLister(indexer cache.Indexer) Lister { return Lister{indexer: indexer} }

// ListerOf returns a Lister over a Pod informer's indexer: what client-go's
// Pods().Lister() returns for plain Pods.
func ListerOf(inf cache.SharedIndexInformer) Lister { return NewLister(inf.GetIndexer()) }

// List returns every cached Pod whose labels match sel, decoded. The error is always nil; it
// is there to match client-go's listers.
func (l Lister) List(sel labels.Selector) ([]*corev1.Pod, error) {
	return collect(l.indexer.List(), sel), nil
}

// Pods returns a lister of the Pods in namespace ns.
func (l Lister) Pods(ns string) NamespaceLister { return NamespaceLister{indexer: l.indexer, ns: ns} }

// NamespaceLister reads the cached Pods of one namespace (Lister.Pods).
type NamespaceLister struct {
	indexer cache.Indexer
	ns      string
}

// List returns the namespace's cached Pods whose labels match sel, decoded (every namespace's
// for metav1.NamespaceAll, as client-go's listers do); the error is that of the namespace
// index (none for an informer's indexer).
func (l NamespaceLister) List(sel labels.Selector) ([]*corev1.Pod, error) {
	if l.ns == metav1.NamespaceAll {
		return collect(l.indexer.List(), sel), nil
	}
	objs, err := l.indexer.ByIndex(cache.NamespaceIndex, l.ns)
	if err != nil {
		return nil, err
	}
	return collect(objs, sel), nil
}

// Get returns the cached Pod ns/name, decoded, or a NotFound error (apierrors.IsNotFound) when
// the cache holds none, or when what it holds under that key is not a Pod.
func (l NamespaceLister) Get(name string) (*corev1.Pod, error) {
	obj, exists, err := l.indexer.GetByKey(l.ns + "/" + name)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(corev1.Resource("pod"), name)
	}
	p, ok := From(obj)
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("pod"), name)
	}
	return p, nil
}

func collect(objs []any, sel labels.Selector) []*corev1.Pod {
	var out []*corev1.Pod
	for _, obj := range objs {
		m, ok := obj.(interface{ GetLabels() map[string]string })
		if !ok || !sel.Matches(labels.Set(m.GetLabels())) {
			continue // labels are matched before decoding
		}
		if p, ok := From(obj); ok {
			out = append(out, p)
		}
	}
	return out
}
