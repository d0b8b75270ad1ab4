package source

import (
	"sync"

	"k8s.io/client-go/informers/core"
	corev1informers "k8s.io/client-go/informers/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// coreGroup is the core API group of a Factory with its hot kinds' informers kept: client-go's
// generated accessors build a new group, version, typed informer and empty prototype object
// (a whole corev1.Pod for Pods, about 1 KB) on every Core().V1().Pods().Informer() call, and
// the syncer's reconcilers and handlers make such calls several times per Pod event.
type coreGroup struct {
	core.Interface
	v1 *coreV1
}

// V1 returns the core/v1 informers, the same value on every call.
func (g *coreGroup) V1() corev1informers.Interface { return g.v1 }

// coreV1 keeps the Pod, Node, Namespace and Service informers; the other kinds are built on
// each call, as client-go does.
type coreV1 struct {
	corev1informers.Interface
	pods       keptPods
	nodes      keptNodes
	namespaces keptNamespaces
	services   keptServices
}

func newCoreGroup(g core.Interface) *coreGroup {
	v1 := g.V1()
	c := &coreV1{Interface: v1}
	c.pods.TypedPodInformer = v1.Pods()
	c.pods.build, c.pods.lister = c.pods.TypedPodInformer.Informer, corev1listers.NewPodLister
	c.nodes.TypedNodeInformer = v1.Nodes()
	c.nodes.build, c.nodes.lister = c.nodes.TypedNodeInformer.Informer, corev1listers.NewNodeLister
	c.namespaces.TypedNamespaceInformer = v1.Namespaces()
	c.namespaces.build, c.namespaces.lister = c.namespaces.TypedNamespaceInformer.Informer, corev1listers.NewNamespaceLister
	c.services.TypedServiceInformer = v1.Services()
	c.services.build, c.services.lister = c.services.TypedServiceInformer.Informer, corev1listers.NewServiceLister
	return &coreGroup{Interface: g, v1: c}
}

func (v *coreV1) Pods() corev1informers.TypedPodInformer             { return &v.pods }
func (v *coreV1) Nodes() corev1informers.TypedNodeInformer           { return &v.nodes }
func (v *coreV1) Namespaces() corev1informers.TypedNamespaceInformer { return &v.namespaces }
func (v *coreV1) Services() corev1informers.TypedServiceInformer     { return &v.services }

// kept is one kind's shared informer and lister, built on first use (the first Informer or
// Lister call registers the informer with the Factory, as client-go's accessor would) and
// returned as they are afterwards. Safe for concurrent use.
type kept[L any] struct {
	build  func() cache.SharedIndexInformer // client-go's accessor
	lister func(cache.Indexer) L
	once   sync.Once
	inf    cache.SharedIndexInformer
	l      L
}

func (k *kept[L]) init() {
	k.inf = k.build()
	k.l = k.lister(k.inf.GetIndexer())
}

// Informer returns the kind's shared informer.
func (k *kept[L]) Informer() cache.SharedIndexInformer {
	k.once.Do(k.init)
	return k.inf
}

// Lister returns a lister over the kind's shared informer's cache.
func (k *kept[L]) Lister() L {
	k.once.Do(k.init)
	return k.l
}

// Each kept kind embeds client-go's typed informer one level down, so that kept's Informer and
// Lister are the ones its method set has, and TypedInformer is client-go's.
type (
	typedPods struct {
		corev1informers.TypedPodInformer
	}
	typedNodes struct {
		corev1informers.TypedNodeInformer
	}
	typedNamespaces struct {
		corev1informers.TypedNamespaceInformer
	}
	typedServices struct {
		corev1informers.TypedServiceInformer
	}

	keptPods struct {
		typedPods
		kept[corev1listers.PodLister]
	}
	keptNodes struct {
		typedNodes
		kept[corev1listers.NodeLister]
	}
	keptNamespaces struct {
		typedNamespaces
		kept[corev1listers.NamespaceLister]
	}
	keptServices struct {
		typedServices
		kept[corev1listers.ServiceLister]
	}
)
