package syncer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/kinds"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

// The fixed state of the checkpoint fixtures (testdata/checkpoint): one tenant with one object of
// every resumable kind, their super copies, the super objects the syncer caches without owning
// them (a Node, a PersistentVolume, StorageClasses), two queue items and a vNode binding.
const (
	fxTenant    = "t1"
	fxTenantUID = "6f1d2c3b-0000-4000-8000-00000000t001"
	fxSuperUID  = "6f1d2c3b-0000-4000-8000-0000000super"
	fxNS        = "app"
	fxSuperNS   = "t1-abcdef-app"
	// fxPosition stands in for the resourceVersion a real apiserver's list gives (the fake
	// clientsets give none): a position must be set for a resume without LIST.
	fxPosition = "1000"
)

// fxTime is the fixed time of the fixtures' timestamps.
var fxTime = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// fxMeta returns the metadata of a fixed object: what the transforms trim (managedFields,
// kubectl's last-applied annotation) and what they keep.
func fxMeta(namespace, name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(uid), ResourceVersion: "11", Generation: 2,
		CreationTimestamp: metav1.NewTime(fxTime), Labels: map[string]string{"app": "fx"},
		Annotations: map[string]string{"note": "kept", "kubectl.kubernetes.io/last-applied-configuration": `{"big":"yes"}`},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{}}`)}},
	}
}

// fxObjects returns one fixed object of every resumable kind, in namespace ns (cluster-scoped
// kinds ignore it), with UIDs prefixed by uidPrefix.
func fxObjects(ns, uidPrefix string) []runtime.Object {
	m := func(namespaced bool, name string) metav1.ObjectMeta {
		n := ""
		if namespaced {
			n = ns
		}
		return fxMeta(n, name, uidPrefix+"-"+name)
	}
	qty := resource.MustParse("1Gi")
	port := int32(8080)
	proto := corev1.ProtocolTCP
	yes := true
	return []runtime.Object{
		&corev1.Pod{ObjectMeta: m(true, "pod"), Spec: corev1.PodSpec{
			NodeName: "node-1", ServiceAccountName: "sa", PriorityClassName: "pc", RuntimeClassName: ptrTo("rc"),
			Containers: []corev1.Container{{Name: "c", Image: "img:1", Command: []string{"run"},
				Env:          []corev1.EnvVar{{Name: "K", Value: "V"}},
				Resources:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
				VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}}},
			InitContainers: []corev1.Container{{Name: "init", Image: "init:1"}},
			Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}},
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
		}, Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.5", HostIP: "192.168.0.1",
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(fxTime)}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Image: "img:1", Ready: true, RestartCount: 1}}}},
		&corev1.ConfigMap{ObjectMeta: m(true, "cm"), Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": {2}}},
		&corev1.Secret{ObjectMeta: m(true, "secret"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"p": []byte("pw")}},
		&corev1.ServiceAccount{ObjectMeta: m(true, "sa"), Secrets: []corev1.ObjectReference{{Name: "secret"}}, AutomountServiceAccountToken: &yes},
		&corev1.Service{ObjectMeta: m(true, "svc"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10",
			ClusterIPs: []string{"10.96.0.10"}, Selector: map[string]string{"app": "fx"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: proto}}}},
		&corev1.Endpoints{ObjectMeta: m(true, "svc"), Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "10.0.0.5", NodeName: ptrTo("node-1")}},
			Ports:     []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: proto}}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: m(true, "svc-abc"), AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.5"}, NodeName: ptrTo("node-1")}},
			Ports:     []discoveryv1.EndpointPort{{Name: ptrTo("http"), Port: &port, Protocol: &proto}}},
		&corev1.Namespace{ObjectMeta: m(false, ns), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		&corev1.PersistentVolumeClaim{ObjectMeta: m(true, "pvc"), Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptrTo("sc"), VolumeName: "pv",
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: qty}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: qty}}},
		&corev1.PersistentVolume{ObjectMeta: m(false, "pv"), Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{corev1.ResourceStorage: qty}, StorageClassName: "sc",
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "csi.example", VolumeHandle: "h"}},
			ClaimRef:               &corev1.ObjectReference{Namespace: ns, Name: "pvc", UID: types.UID(uidPrefix + "-pvc")}},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}},
		&corev1.Node{ObjectMeta: m(false, "node-1"), Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24"},
			Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.0.1"}},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.0"}}},
		&networkingv1.Ingress{ObjectMeta: m(true, "ing"), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "fx.example"}}}},
		&networkingv1.NetworkPolicy{ObjectMeta: m(true, "np"), Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "fx"}}}},
		&policyv1.PodDisruptionBudget{ObjectMeta: m(true, "pdb"), Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptrTo(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "fx"}}}},
		&schedulingv1.PriorityClass{ObjectMeta: m(false, "pc"), Value: 1000, Description: "fx"},
		&storagev1.StorageClass{ObjectMeta: m(false, "sc"), Provisioner: "csi.example", Parameters: map[string]string{"type": "ssd"}},
		&nodev1.RuntimeClass{ObjectMeta: m(false, "rc"), Handler: "runc"},
		&coordinationv1.Lease{ObjectMeta: m(true, "lease"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptrTo("node-1")}},
	}
}

func ptrTo[T any](v T) *T { return &v }

// fxSuperObjects returns the super cluster of the fixtures: kube-system (its UID is the super
// identity), the super copies of the tenant's objects (owned: labelled and annotated), and the
// objects the syncer caches without owning: the Node, the PersistentVolume, the StorageClass,
// a public StorageClass.
func fxSuperObjects() []runtime.Object {
	out := []runtime.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceSystem, UID: fxSuperUID}}}
	for _, o := range fxObjects(fxSuperNS, "super") {
		m := o.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
		switch o.(type) {
		case *corev1.Node, *corev1.PersistentVolume:
			out = append(out, o) // not owned: the super-nodes and super-volumes caches
			continue
		case *storagev1.StorageClass:
			out = append(out, o.DeepCopyObject()) // the super-volumes cache
			m.Name = "public-sc"
			m.Labels[conversion.LabelPublic] = conversion.PublicValue // the super-public cache
			out = append(out, o)
			continue
		}
		tenantNS, name := fxNS, m.Name
		if _, ok := o.(*corev1.Namespace); ok {
			m.Name = fxSuperNS
			tenantNS, name = fxNS, fxNS
		} else if m.Namespace == "" {
			m.Name = fxTenant + "-" + m.Name // cluster-scoped super copies carry the tenant in their name
			tenantNS = ""
		}
		conversion.Stamp(m, conversion.Owner{Tenant: fxTenant, TenantUID: fxTenantUID, Namespace: tenantNS, Name: name,
			UID: "tenant-" + name})
		out = append(out, o)
	}
	return out
}

// fxEnv is a Syncer and its tenant on fake clientsets holding the fixtures' objects.
type fxEnv struct {
	s                  *Syncer
	c                  *tenant.Cluster
	superCS, tenantCS  *fake.Clientset
	superInfs, tenants []cache.SharedIndexInformer
}

// fxOptInKinds are the opt-in kinds the fixtures' syncer syncs (all of them, so that their
// cached forms are covered too).
func fxOptInKinds() []resources.Kind {
	var out []resources.Kind
	for _, r := range kinds.OptIn() {
		out = append(out, r.Kind())
	}
	return out
}

// newFxEnv builds the fixtures' Syncer over store and its tenant (not started). The tenant's
// informers are built the way a connected tenant's are (Syncer.tenantInformers, with the
// Cluster's transform), and the identity of its Sources set as ClusterStarting sets it.
func newFxEnv(t *testing.T, st checkpoint.Store) *fxEnv {
	t.Helper()
	e := &fxEnv{superCS: fake.NewClientset(fxSuperObjects()...), tenantCS: fake.NewClientset(fxObjects(fxNS, "tenant")...)}
	var err error
	e.s, err = New(Options{Super: e.superCS, DownwardWorkers: 1, UpwardWorkers: 1, OptInKinds: fxOptInKinds(),
		Checkpoint: CheckpointOptions{Store: st, Holder: "fixture"}})
	if err != nil {
		t.Fatal(err)
	}
	e.c = &tenant.Cluster{Name: fxTenant, UID: fxTenantUID, Client: e.tenantCS, Recorder: record.NewFakeRecorder(100)}
	e.c.Informers = e.s.tenantInformers(fxTenant, e.tenantCS, func(o any) (any, error) { return e.c.Readmit(o), nil })
	for _, kind := range sortedKinds(e.s) {
		r := e.s.resources[kind]
		e.tenants = append(e.tenants, r.TenantInformer(e.c))
		e.superInfs = append(e.superInfs, r.SuperInformer(e.s.env))
	}
	return e
}

func sortedKinds(s *Syncer) []resources.Kind {
	kinds := make([]resources.Kind, 0, len(s.resources))
	for k := range s.resources {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	return kinds
}

// start runs the warm-up (load, restore, super informers), the storage caches and the
// tenant's informers, and waits for every cache.
func (e *fxEnv) start(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := e.s.resume.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	e.s.sources.CheckIdentity(tenantSourcePrefix+fxTenant+"/", e.c.Identity()+"/"+e.c.UID)
	e.s.env.SuperVolumes.Start(ctx.Done())
	e.s.env.SuperPublic.Start(ctx.Done())
	e.c.Informers.Start(ctx.Done())
	for _, inf := range append(append([]cache.SharedIndexInformer{}, e.superInfs...), e.tenants...) {
		go inf.Run(ctx.Done()) // a no-op for an informer its factory started
	}
	e.s.env.SuperVolumes.WaitForCacheSync(ctx.Done())
	e.s.env.SuperPublic.WaitForCacheSync(ctx.Done())
	e.c.Informers.WaitForCacheSync(ctx.Done())
	for _, inf := range append(append([]cache.SharedIndexInformer{}, e.superInfs...), e.tenants...) {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("an informer did not sync")
		}
	}
}

// fxQueueItems are the fixtures' unfinished requests: one to run now downward, one delayed
// upward.
func fxQueueItems() []resume.QueueItem {
	return []resume.QueueItem{
		{Req: resources.Request{Tenant: fxTenant, Kind: resources.KindPod, Namespace: fxNS, Name: "pod"}, Down: true},
		{Req: resources.Request{Tenant: fxTenant, Kind: resources.KindService, Namespace: fxNS, Name: "svc"},
			Earliest: fxTime.Add(time.Second), Latest: fxTime.Add(2 * time.Second)},
	}
}

// record fills the state a running syncer would have: every cached object acked the way the
// handlers ack it (tenant objects by version, super copies with their owner), the queue items
// parked for the tenant, a vNode binding, the policy generation its objects were examined under.
func (e *fxEnv) record(t *testing.T) {
	t.Helper()
	for _, kind := range sortedKinds(e.s) {
		r := e.s.resources[kind]
		if src := e.s.tenantSource(e.c, kind); src != nil {
			for _, o := range r.TenantInformer(e.c).GetStore().List() {
				m := o.(metav1.Object)
				src.Ack(source.Key(m), source.VersionOf(m))
			}
		}
		if src := e.s.superSource(kind); src != nil {
			for _, o := range r.SuperInformer(e.s.env).GetStore().List() {
				m := o.(metav1.Object)
				if owner, ok := conversion.OwnerOf(m); ok {
					src.Ack(source.Key(m), resume.OwnerVersion(m, owner))
				}
			}
		}
	}
	for _, it := range fxQueueItems() {
		e.s.resume.Park(it.Req, it.Down, trackingqueue.DelayWindow{Earliest: it.Earliest, Latest: it.Latest}, nil)
	}
	e.s.vnodes.Bindings().AddPod(fxTenant, "node-1", fxNS+"/pod", fxTime)
	// A fixed generation: the built-in policy's would tie the golden to policy.Default.
	e.s.resume.Marks.SetApplied(fxTenant, "0123456789abcdef")
}

// fxCheckpoint builds the fixtures' state on a cold syncer and returns its checkpoint, as
// Save writes it, with fxPosition as the position of every cache (the fake clientsets give
// none) and fixed TakenAt and Holder.
func fxCheckpoint(t *testing.T) *checkpoint.Checkpoint {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &store.Memory{Name: "fixture"}
	e := newFxEnv(t, st)
	e.start(t, ctx)
	e.record(t)
	if err := e.s.ckpt.Save(ctx); err != nil {
		t.Fatal(err)
	}
	data, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := checkpoint.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	cp.TakenAt, cp.Holder = fxTime, "fixture"
	for i := range cp.Sources {
		if cp.Sources[i].HasObjects && cp.Sources[i].Position == "" {
			cp.Sources[i].Position = fxPosition
		}
	}
	return cp
}

// fxNewObjects makes empty objects of the resumable kinds by name, to decode saved objects.
var fxNewObjects = map[string]func() runtime.Object{
	"Pod": func() runtime.Object { return &corev1.Pod{} }, "ConfigMap": func() runtime.Object { return &corev1.ConfigMap{} },
	"Secret": func() runtime.Object { return &corev1.Secret{} }, "ServiceAccount": func() runtime.Object { return &corev1.ServiceAccount{} },
	"Service":   func() runtime.Object { return &corev1.Service{} },
	"Endpoints": func() runtime.Object { return &corev1.Endpoints{} },
	"Namespace": func() runtime.Object { return &corev1.Namespace{} }, "Node": func() runtime.Object { return &corev1.Node{} },
	"PersistentVolumeClaim": func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
	"PersistentVolume":      func() runtime.Object { return &corev1.PersistentVolume{} },
	"EndpointSlice":         func() runtime.Object { return &discoveryv1.EndpointSlice{} },
	"Ingress":               func() runtime.Object { return &networkingv1.Ingress{} },
	"NetworkPolicy":         func() runtime.Object { return &networkingv1.NetworkPolicy{} },
	"PodDisruptionBudget":   func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
	"PriorityClass":         func() runtime.Object { return &schedulingv1.PriorityClass{} },
	"StorageClass":          func() runtime.Object { return &storagev1.StorageClass{} },
	"RuntimeClass":          func() runtime.Object { return &nodev1.RuntimeClass{} },
	"Lease":                 func() runtime.Object { return &coordinationv1.Lease{} },
}

// describe renders what cp holds as text that depends only on its meaning, never on map or
// encoding order: the shapes of the saved structs (field names and types), the options digest,
// every Source's ID, identity, scope and whether it has a position, each saved object (the SHA-256 of its saved
// bytes and its JSON), the ack entries, the queue items (decoded, sorted) and the extra state.
// The schema number is not in it: the same content under another schema is the same text.
func describe(t *testing.T, cp *checkpoint.Checkpoint) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "format %d\nconfig %s\nleftOut %q\n", cp.Format, cp.Config, cp.LeftOut)
	for _, v := range []any{checkpoint.Checkpoint{}, resume.QueueItem{}, vnode.Snapshot{}} {
		fmt.Fprintf(&b, "type %s\n", typeShape(reflect.TypeOf(v), 0))
	}
	for _, st := range cp.Sources {
		// The position's value is the apiserver's (here the fake clientset's), not a form of ours.
		fmt.Fprintf(&b, "source %s identity=%q hasPosition=%v hasObjects=%v scope=%q\n", st.ID, st.Identity, st.Position != "", st.HasObjects, st.Scope)
		kind := st.ID[strings.LastIndexByte(st.ID, '/')+1:]
		var objs []string
		for _, raw := range st.Objects {
			newObj, ok := fxNewObjects[kind]
			if !ok {
				t.Fatalf("source %s: no decoder for kind %s in fxNewObjects", st.ID, kind)
			}
			o := newObj()
			if err := o.(interface{ Unmarshal([]byte) error }).Unmarshal(raw); err != nil {
				t.Fatalf("source %s: %v", st.ID, err)
			}
			j, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(raw)
			objs = append(objs, fmt.Sprintf("  object sha256=%s %s", hex.EncodeToString(sum[:8]), j))
		}
		sort.Strings(objs)
		var acks []string
		for k, v := range st.Acked {
			owner := v.Owner
			v.Owner = nil
			line := fmt.Sprintf("  ack %q %+v", k, v)
			if owner != nil {
				line += fmt.Sprintf(" owner=%+v", *owner)
			}
			acks = append(acks, line)
		}
		sort.Strings(acks)
		for _, l := range append(objs, acks...) {
			b.WriteString(l + "\n")
		}
	}
	items, err := resume.DecodeQueueItems(cp.Queues)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, it := range items {
		lines = append(lines, fmt.Sprintf("queue %+v", it))
	}
	sort.Strings(lines)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "queueItems %d\n", cp.QueueItems)
	names := make([]string, 0, len(cp.Extras))
	for n := range cp.Extras {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "extra %s %s\n", n, cp.Extras[n])
	}
	return b.String()
}

// typeShape describes t's encoded shape: struct field names and types, recursively (gob
// matches fields by name and type).
func typeShape(t reflect.Type, depth int) string {
	if depth > 8 {
		return t.String()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + typeShape(t.Elem(), depth+1)
	case reflect.Slice:
		return "[]" + typeShape(t.Elem(), depth+1)
	case reflect.Map:
		return "map[" + typeShape(t.Key(), depth+1) + "]" + typeShape(t.Elem(), depth+1)
	case reflect.Struct:
		if t == reflect.TypeOf(time.Time{}) {
			return "time.Time"
		}
		var fs []string
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fs = append(fs, f.Name+" "+typeShape(f.Type, depth+1)+tagOf(f))
		}
		return t.Name() + "{" + strings.Join(fs, "; ") + "}"
	default:
		return t.Kind().String()
	}
}

func tagOf(f reflect.StructField) string {
	if j := f.Tag.Get("json"); j != "" {
		return " json:" + j
	}
	return ""
}

// fxStubDescription describes the held-out stub the tenant informers' transform caches for an
// object over the tenant's limits.maxCachedBytes (a cached form too: a checkpoint saves it).
func fxStubDescription(t *testing.T) string {
	t.Helper()
	c := &tenant.Cluster{Name: "stub", UID: "uid-stub", Recorder: record.NewFakeRecorder(10)}
	q := resource.MustParse("1Ki")
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		MaxCachedBytes: &q, Quota: corev1.ResourceList{}, LimitRange: []corev1.LimitRangeItem{}}}))
	big := &corev1.ConfigMap{ObjectMeta: fxMeta(fxNS, "big", "uid-big"), Data: map[string]string{"v": strings.Repeat("x", 2048)}}
	out := c.Readmit(big)
	if !tenant.IsHeldOut(out) {
		t.Fatal("a 2 KiB ConfigMap was not held out under a 1Ki bound: the fixture is wrong")
	}
	raw, err := out.(interface{ Marshal() ([]byte, error) }).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return fmt.Sprintf("stub ConfigMap sha256=%s %s\n", hex.EncodeToString(sum[:8]), j)
}
