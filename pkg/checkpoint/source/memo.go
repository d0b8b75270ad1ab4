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
	c.pods.k.build, c.pods.k.lister = c.pods.TypedPodInformer.Informer, corev1listers.NewPodLister
	c.nodes.TypedNodeInformer = v1.Nodes()
	c.nodes.k.build, c.nodes.k.lister = c.nodes.TypedNodeInformer.Informer, corev1listers.NewNodeLister
	c.namespaces.TypedNamespaceInformer = v1.Namespaces()
	c.namespaces.k.build, c.namespaces.k.lister = c.namespaces.TypedNamespaceInformer.Informer, corev1listers.NewNamespaceLister
	c.services.TypedServiceInformer = v1.Services()
	c.services.k.build, c.services.k.lister = c.services.TypedServiceInformer.Informer, corev1listers.NewServiceLister
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

func (k *kept[L]) get() (cache.SharedIndexInformer, L) {
	k.once.Do(k.init)
	return k.inf, k.l
}

func (k *kept[L]) init() {
	k.inf = k.build()
	k.l = k.lister(k.inf.GetIndexer())
}

type keptPods struct {
	corev1informers.TypedPodInformer
	k kept[corev1listers.PodLister]
}

func (p *keptPods) Informer() cache.SharedIndexInformer {
	inf, _ := p.k.get()
	return inf
}

func (p *keptPods) Lister() corev1listers.PodLister {
	_, l := p.k.get()
	return l
}

type keptNodes struct {
	corev1informers.TypedNodeInformer
	k kept[corev1listers.NodeLister]
}

func (p *keptNodes) Informer() cache.SharedIndexInformer {
	inf, _ := p.k.get()
	return inf
}

func (p *keptNodes) Lister() corev1listers.NodeLister {
	_, l := p.k.get()
	return l
}

type keptNamespaces struct {
	corev1informers.TypedNamespaceInformer
	k kept[corev1listers.NamespaceLister]
}

func (p *keptNamespaces) Informer() cache.SharedIndexInformer {
	inf, _ := p.k.get()
	return inf
}

func (p *keptNamespaces) Lister() corev1listers.NamespaceLister {
	_, l := p.k.get()
	return l
}

type keptServices struct {
	corev1informers.TypedServiceInformer
	k kept[corev1listers.ServiceLister]
}

func (p *keptServices) Informer() cache.SharedIndexInformer {
	inf, _ := p.k.get()
	return inf
}

func (p *keptServices) Lister() corev1listers.ServiceLister {
	_, l := p.k.get()
	return l
}
