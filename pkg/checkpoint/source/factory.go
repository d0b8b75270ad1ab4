package source

import (
	"context"
	"fmt"
	"reflect"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/coordination"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/discovery"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/networking"
	"k8s.io/client-go/informers/node"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// kindInfo describes one resumable kind: how to list and watch it through the typed clientset
// (so fake clientsets work too) and how to build its objects and lists.
type kindInfo struct {
	kind    string
	list    func(kubernetes.Interface, context.Context, metav1.ListOptions) (runtime.Object, error)
	watch   func(kubernetes.Interface, context.Context, metav1.ListOptions) (watch.Interface, error)
	newObj  func() runtime.Object
	newList func() runtime.Object
}

// typedClient is the List/Watch part of a generated typed client (e.g. PodInterface).
type typedClient[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

func info[T any, L any, PT interface {
	*T
	runtime.Object
}, PL interface {
	*L
	runtime.Object
}](kind string, client func(kubernetes.Interface) typedClient[PL]) kindInfo {
	return kindInfo{kind: kind,
		list: func(c kubernetes.Interface, ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client(c).List(ctx, o)
		},
		watch: func(c kubernetes.Interface, ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client(c).Watch(ctx, o)
		},
		newObj:  func() runtime.Object { return PT(new(T)) },
		newList: func() runtime.Object { return PL(new(L)) },
	}
}

// kinds are the kinds a Factory makes resumable; any other kind gets the factory's normal
// informer. Event is left out on purpose: its informers are built with their own filters.
var kinds = map[reflect.Type]kindInfo{}

func init() {
	all := metav1.NamespaceAll
	for _, k := range []kindInfo{
		info[corev1.Pod, corev1.PodList]("Pod", func(c kubernetes.Interface) typedClient[*corev1.PodList] { return c.CoreV1().Pods(all) }),
		info[corev1.ConfigMap, corev1.ConfigMapList]("ConfigMap", func(c kubernetes.Interface) typedClient[*corev1.ConfigMapList] { return c.CoreV1().ConfigMaps(all) }),
		info[corev1.Secret, corev1.SecretList]("Secret", func(c kubernetes.Interface) typedClient[*corev1.SecretList] { return c.CoreV1().Secrets(all) }),
		info[corev1.ServiceAccount, corev1.ServiceAccountList]("ServiceAccount", func(c kubernetes.Interface) typedClient[*corev1.ServiceAccountList] {
			return c.CoreV1().ServiceAccounts(all)
		}),
		info[corev1.Service, corev1.ServiceList]("Service", func(c kubernetes.Interface) typedClient[*corev1.ServiceList] { return c.CoreV1().Services(all) }),
		info[corev1.Endpoints, corev1.EndpointsList]("Endpoints", func(c kubernetes.Interface) typedClient[*corev1.EndpointsList] { return c.CoreV1().Endpoints(all) }),
		info[corev1.Namespace, corev1.NamespaceList]("Namespace", func(c kubernetes.Interface) typedClient[*corev1.NamespaceList] { return c.CoreV1().Namespaces() }),
		info[corev1.PersistentVolumeClaim, corev1.PersistentVolumeClaimList]("PersistentVolumeClaim", func(c kubernetes.Interface) typedClient[*corev1.PersistentVolumeClaimList] {
			return c.CoreV1().PersistentVolumeClaims(all)
		}),
		info[corev1.PersistentVolume, corev1.PersistentVolumeList]("PersistentVolume", func(c kubernetes.Interface) typedClient[*corev1.PersistentVolumeList] {
			return c.CoreV1().PersistentVolumes()
		}),
		info[corev1.Node, corev1.NodeList]("Node", func(c kubernetes.Interface) typedClient[*corev1.NodeList] { return c.CoreV1().Nodes() }),
		info[discoveryv1.EndpointSlice, discoveryv1.EndpointSliceList]("EndpointSlice", func(c kubernetes.Interface) typedClient[*discoveryv1.EndpointSliceList] {
			return c.DiscoveryV1().EndpointSlices(all)
		}),
		info[networkingv1.Ingress, networkingv1.IngressList]("Ingress", func(c kubernetes.Interface) typedClient[*networkingv1.IngressList] {
			return c.NetworkingV1().Ingresses(all)
		}),
		info[networkingv1.NetworkPolicy, networkingv1.NetworkPolicyList]("NetworkPolicy", func(c kubernetes.Interface) typedClient[*networkingv1.NetworkPolicyList] {
			return c.NetworkingV1().NetworkPolicies(all)
		}),
		info[policyv1.PodDisruptionBudget, policyv1.PodDisruptionBudgetList]("PodDisruptionBudget", func(c kubernetes.Interface) typedClient[*policyv1.PodDisruptionBudgetList] {
			return c.PolicyV1().PodDisruptionBudgets(all)
		}),
		info[schedulingv1.PriorityClass, schedulingv1.PriorityClassList]("PriorityClass", func(c kubernetes.Interface) typedClient[*schedulingv1.PriorityClassList] {
			return c.SchedulingV1().PriorityClasses()
		}),
		info[storagev1.StorageClass, storagev1.StorageClassList]("StorageClass", func(c kubernetes.Interface) typedClient[*storagev1.StorageClassList] {
			return c.StorageV1().StorageClasses()
		}),
		info[nodev1.RuntimeClass, nodev1.RuntimeClassList]("RuntimeClass", func(c kubernetes.Interface) typedClient[*nodev1.RuntimeClassList] {
			return c.NodeV1().RuntimeClasses()
		}),
		info[coordinationv1.Lease, coordinationv1.LeaseList]("Lease", func(c kubernetes.Interface) typedClient[*coordinationv1.LeaseList] {
			return c.CoordinationV1().Leases(all)
		}),
	} {
		kinds[reflect.TypeOf(k.newObj())] = k
	}
}

// KindOf returns the kind name a Factory uses in Source IDs for obj's type ("Pod", ...), and
// false for kinds that are not resumable.
func KindOf(obj runtime.Object) (string, bool) {
	k, ok := kinds[reflect.TypeOf(obj)]
	return k.kind, ok
}

// FactoryOptions configures a Factory.
type FactoryOptions struct {
	// Tweak modifies every List and Watch request (e.g. a label selector); may be nil.
	Tweak func(*metav1.ListOptions)
	// Transform runs on every object before it is cached (informers.WithTransform); may be nil.
	Transform cache.TransformFunc
	// Scope, if set, restricts the resumable kinds' informers to objects whose label
	// Scope.Key() has one of the Scope's values, following its changes (see Scope); nil
	// caches everything Tweak selects.
	Scope *Scope
}

// Factory is an informers.SharedInformerFactory whose informers of the resumable kinds are
// backed by Sources of a Registry, with IDs "<prefix>/<Kind>". Informers of other kinds, and
// informers asked for with a custom constructor of a non-resumable kind, come from an ordinary
// factory. Only the API groups of the resumable kinds (core, discovery, networking, policy,
// scheduling, storage, node, coordination) route through it; other groups behave as the embedded
// factory's.
//
// Its informers list with streaming watch-lists (KEP-3157), each object through the
// informer's transform as it arrives, except a scoped one
// (resumeLW.IsWatchListSemanticsUnSupported). A resumed informer's first list is answered from
// the checkpoint (checkpointing.md 3.1): as a stream of the checkpointed objects followed by
// the watch from the checkpoint's position (resumedStream), or, where the reflector lists with
// LIST requests, as a list.
type Factory struct {
	informers.SharedInformerFactory
	reg    *Registry
	prefix string
	client kubernetes.Interface
	tweak  func(*metav1.ListOptions)
	scope  *Scope
	core   *coreGroup
}

var _ informers.SharedInformerFactory = (*Factory)(nil)

// NewFactory returns a Factory over client whose Sources live in reg under prefix.
func NewFactory(reg *Registry, prefix string, client kubernetes.Interface, o FactoryOptions) *Factory {
	var opts []informers.SharedInformerOption
	if o.Tweak != nil {
		opts = append(opts, informers.WithTweakListOptions(o.Tweak))
	}
	if o.Transform != nil {
		opts = append(opts, informers.WithTransform(o.Transform))
	}
	f := &Factory{
		SharedInformerFactory: informers.NewSharedInformerFactoryWithOptions(client, 0, opts...),
		reg:                   reg, prefix: prefix, client: client, tweak: o.Tweak, scope: o.Scope,
	}
	f.core = newCoreGroup(core.New(f, metav1.NamespaceAll, f.tweak))
	return f
}

// InformerFor returns the shared informer of obj's type, building a resumable one for the
// resumable kinds.
func (f *Factory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	k, ok := kinds[reflect.TypeOf(obj)]
	if !ok {
		return f.SharedInformerFactory.InformerFor(obj, newFunc)
	}
	return f.SharedInformerFactory.InformerFor(obj, func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		src := f.reg.Source(f.prefix + "/" + k.kind)
		tweak := func(o *metav1.ListOptions) {
			if f.tweak != nil {
				f.tweak(o)
			}
		}
		client := f.client
		lw := &resumeLW{
			real: &cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					tweak(&o)
					return k.list(client, ctx, o)
				},
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
					tweak(&o)
					return k.watch(client, ctx, o)
				},
			},
			src: src, kind: k, scope: f.scope, client: client, tweak: f.tweak,
		}
		if f.scope != nil {
			f.scope.follow(lw)
		}
		inf := cache.NewSharedIndexInformerWithOptions(lw, k.newObj(), cache.SharedIndexInformerOptions{
			ResyncPeriod: resync,
			Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		})
		src.setInformer(inf, lw)
		return inf
	})
}

// Core returns the core API group's informers, routed through f: the same value on every call,
// whose Pod, Node, Namespace and Service informers and listers are built once (coreGroup).
func (f *Factory) Core() core.Interface { return f.core }

// Discovery returns the discovery API group's informers, routed through f.
func (f *Factory) Discovery() discovery.Interface {
	return discovery.New(f, metav1.NamespaceAll, f.tweak)
}

// Networking returns the networking API group's informers, routed through f.
func (f *Factory) Networking() networking.Interface {
	return networking.New(f, metav1.NamespaceAll, f.tweak)
}

// Policy returns the policy API group's informers, routed through f.
func (f *Factory) Policy() policy.Interface { return policy.New(f, metav1.NamespaceAll, f.tweak) }

// Scheduling returns the scheduling API group's informers, routed through f.
func (f *Factory) Scheduling() scheduling.Interface {
	return scheduling.New(f, metav1.NamespaceAll, f.tweak)
}

// Storage returns the storage API group's informers, routed through f.
func (f *Factory) Storage() storage.Interface { return storage.New(f, metav1.NamespaceAll, f.tweak) }

// Node returns the node.k8s.io API group's informers (RuntimeClasses), routed through f.
func (f *Factory) Node() node.Interface { return node.New(f, metav1.NamespaceAll, f.tweak) }

// Coordination returns the coordination API group's informers, routed through f.
func (f *Factory) Coordination() coordination.Interface {
	return coordination.New(f, metav1.NamespaceAll, f.tweak)
}

// resumeLW answers a resumed informer's first List from its Source's checkpointed objects and
// passes everything else to the apiserver; with a Scope, its lists and watches follow the
// Scope (scopedList, scopedWatchStart).
type resumeLW struct {
	real *cache.ListWatch
	src  *Source
	kind kindInfo

	scope  *Scope
	client kubernetes.Interface
	tweak  func(*metav1.ListOptions)
	ss     scopeState
}

var (
	_ cache.ListerWatcher            = (*resumeLW)(nil)
	_ cache.ListerWatcherWithContext = (*resumeLW)(nil)
)

// IsWatchListSemanticsUnSupported reports whether this informer's reflector must list with
// LIST requests instead of streaming watch-lists (client-go
// util/watchlist.DoesClientNotSupportWatchListSemantics, asked once when the reflector is
// built): when its client cannot stream (none, or a fake clientset), and for a scoped
// informer (its lists follow the Scope). Otherwise its lists are streams, a resumed one's
// first answered from the checkpoint (resumedStream)
// (KEP-3157: a watch with sendInitialEvents; client-go falls back to a LIST when the apiserver
// does not serve one), each object passing the informer's transform as it arrives, so a
// tenant's first list is never held whole before the transform bounds it.
func (l *resumeLW) IsWatchListSemanticsUnSupported() bool {
	return l.client == nil || watchlist.DoesClientNotSupportWatchListSemantics(l.client) || l.scope != nil
}

func (l *resumeLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *resumeLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if st := l.src.takePending(); st != nil {
		list, err := l.synthetic(st)
		if err == nil {
			if l.scope != nil {
				l.restoredValues(st, list)
			}
			return list, nil
		}
		// A checkpoint this code cannot decode is not fatal: list from the apiserver instead.
		l.src.mu.Lock()
		l.src.setMode(ModeRelistDiff)
		l.src.mu.Unlock()
	}
	if l.scope != nil {
		return l.scopedList(ctx, opts)
	}
	return l.real.ListWithContext(ctx, opts)
}

func (l *resumeLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

func (l *resumeLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if l.scope != nil {
		return l.scopedWatchStart(ctx, opts)
	}
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		// A list by a stream: answered from the checkpoint on a resume, as a List would be
		// (takePending records the resume mode either way).
		if st := l.src.takePending(); st != nil {
			objs, err := l.decode(st)
			if err == nil {
				return l.resumedWatch(ctx, st, objs, opts), nil
			}
			// A checkpoint this code cannot decode is not fatal: stream from the apiserver.
			l.src.mu.Lock()
			l.src.setMode(ModeRelistDiff)
			l.src.mu.Unlock()
		}
	}
	return l.real.WatchWithContext(ctx, opts)
}

// decode returns st's checkpointed objects.
func (l *resumeLW) decode(st *State) ([]runtime.Object, error) {
	items := make([]runtime.Object, 0, len(st.Objects))
	for _, b := range st.Objects {
		o := l.kind.newObj()
		if err := unmarshal(o, b); err != nil {
			return nil, fmt.Errorf("source %s: %w", l.src.ID, err)
		}
		items = append(items, o)
	}
	return items, nil
}

// synthetic builds the list object of st's objects at st.Position.
func (l *resumeLW) synthetic(st *State) (runtime.Object, error) {
	items, err := l.decode(st)
	if err != nil {
		return nil, err
	}
	list := l.kind.newList()
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	lm.SetResourceVersion(st.Position)
	return list, nil
}

type protoMarshaler interface{ Marshal() ([]byte, error) }
type protoUnmarshaler interface{ Unmarshal([]byte) error }

// marshal encodes a cached object with its generated protobuf marshaller.
func marshal(obj any) ([]byte, error) {
	m, ok := obj.(protoMarshaler)
	if !ok {
		return nil, fmt.Errorf("%T has no protobuf encoding", obj)
	}
	return m.Marshal()
}

func unmarshal(obj runtime.Object, b []byte) error {
	u, ok := obj.(protoUnmarshaler)
	if !ok {
		return fmt.Errorf("%T has no protobuf encoding", obj)
	}
	return u.Unmarshal(b)
}
