package admit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// boundsFixture is a tenant with namespace "app" in its cache, and a super cluster (fake
// clientset plus never-started caches that a test fills by hand).
type boundsFixture struct {
	c       *tenant.Cluster
	env     *resources.Env
	super   *fake.Clientset
	tenant  *fake.Clientset
	superNS string
}

func newBoundsFixture(t *testing.T, objs ...runtime.Object) *boundsFixture {
	t.Helper()
	tns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app", UID: "tns-uid"}}
	tenantCS := fake.NewClientset(append([]runtime.Object{tns}, objs...)...)
	c := &tenant.Cluster{Name: "t1", UID: "uid-t1", Client: tenantCS,
		Informers: informers.NewSharedInformerFactory(tenantCS, 0), Recorder: record.NewFakeRecorder(100)}
	add(t, c.Informers.Core().V1().Namespaces().Informer().GetIndexer(), tns)
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			add(t, c.Informers.Core().V1().ConfigMaps().Informer().GetIndexer(), cm)
		}
	}
	superCS := fake.NewClientset()
	env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0)}
	// The caches the reconcilers read (registered as the syncer does before starting them).
	env.SuperInformers.Core().V1().Namespaces().Informer()
	env.SuperInformers.Core().V1().ConfigMaps().Informer()
	env.SuperInformers.Core().V1().ResourceQuotas().Informer()
	env.SuperInformers.Core().V1().LimitRanges().Informer()
	return &boundsFixture{c: c, env: env, super: superCS, tenant: tenantCS, superNS: resources.SuperNamespace(c, "app")}
}

// limitRangeSpec is a LimitRange a provider may still set in limits.limitRange (none is built
// in: it changes tenant Pods).
var limitRangeSpec = []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
	DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
	Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}

// withLimitRange gives the fixture's tenant the built-in policy plus limitRangeSpec.
func (f *boundsFixture) withLimitRange() *boundsFixture {
	f.c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{LimitRange: limitRangeSpec}}))
	return f
}

// backstopQuota is the super ResourceQuota's spec.hard under the built-in policy: the keys of
// limits.quota that are object counts or claims' storage.
func backstopQuota() corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range policy.Default().Limits().Quota {
		if policy.BackstopKey(k) {
			out[k] = v
		}
	}
	return out
}

func add(t *testing.T, idx interface{ Add(any) error }, obj any) {
	t.Helper()
	if err := idx.Add(obj); err != nil {
		t.Fatal(err)
	}
}

// creates returns the resources the super clientset was asked to create, in order.
func (f *boundsFixture) creates() []string {
	var out []string
	for _, a := range f.super.Actions() {
		if a.GetVerb() == "create" {
			out = append(out, a.GetResource().Resource)
		}
	}
	return out
}

// syncCaches copies every namespace, ResourceQuota and LimitRange of the super clientset into
// the super caches, the quotas with their status computed as the quota controller would
// (status.hard = spec.hard, nothing used) when computed is true.
func (f *boundsFixture) syncCaches(t *testing.T, computed bool) {
	t.Helper()
	ctx := context.Background()
	nss, _ := f.super.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	for i := range nss.Items {
		add(t, f.env.SuperInformers.Core().V1().Namespaces().Informer().GetIndexer(), &nss.Items[i])
	}
	lrs, _ := f.super.CoreV1().LimitRanges("").List(ctx, metav1.ListOptions{})
	for i := range lrs.Items {
		add(t, f.env.SuperInformers.Core().V1().LimitRanges().Informer().GetIndexer(), &lrs.Items[i])
	}
	rqs, _ := f.super.CoreV1().ResourceQuotas("").List(ctx, metav1.ListOptions{})
	for i := range rqs.Items {
		rq := rqs.Items[i].DeepCopy()
		if computed {
			rq.Status.Hard = resources.CopyResourceList(rq.Spec.Hard)
			rq.Status.Used = corev1.ResourceList{}
			for k := range rq.Spec.Hard {
				rq.Status.Used[k] = resource.MustParse("0")
			}
		}
		add(t, f.env.SuperInformers.Core().V1().ResourceQuotas().Informer().GetIndexer(), rq)
	}
}

// The ResourceQuota and LimitRange are created right after the super namespace, and nothing
// may be created in it (EnsureSuperNamespace fails) until the quota's status is computed:
// the quota admission enforces only what status.hard names.
func TestEnsureSuperNamespaceCreatesBoundsBeforeAnythingElse(t *testing.T) {
	ctx := context.Background()
	f := newBoundsFixture(t).withLimitRange()
	_, err := admit.EnsureSuperNamespace(ctx, f.env, f.c, "app")
	if err == nil {
		t.Fatal("EnsureSuperNamespace succeeded before the quota was computed: a Pod created now escapes it")
	}
	if got, want := f.creates(), []string{"namespaces", "limitranges", "resourcequotas"}; !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("creates = %v, want %v", got, want)
	}
	rq, err := f.super.CoreV1().ResourceQuotas(f.superNS).Get(ctx, "vc-syncer-quota", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(rq.Spec.Hard, backstopQuota()) {
		t.Errorf("quota spec.hard = %v, want the policy's object counts and storage %v", rq.Spec.Hard, backstopQuota())
	}
	if _, ok := rq.Spec.Hard[corev1.ResourceRequestsCPU]; ok {
		t.Errorf("quota spec.hard has requests.cpu: every container would have to request cpu")
	}
	if o, ok := conversion.OwnerOf(rq); !ok || o.TenantUID != f.c.UID || o.Namespace != "app" || o.UID != "tns-uid" {
		t.Errorf("quota ownership = %+v, %v; want the tenant namespace's stamps", o, ok)
	}
	lr, err := f.super.CoreV1().LimitRanges(f.superNS).Get(ctx, "vc-syncer-limits", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(lr.Spec.Limits, limitRangeSpec) {
		t.Errorf("limit range = %v, want the policy's", lr.Spec.Limits)
	}
	if !conversion.OwnedByTenant(lr, f.c.UID) {
		t.Error("limit range not stamped as the tenant's")
	}

	f.syncCaches(t, false) // cached, status not computed yet
	if _, err := admit.EnsureSuperNamespace(ctx, f.env, f.c, "app"); !errors.Is(err, admit.ErrBoundsPending) {
		t.Errorf("quota without status: EnsureSuperNamespace = %v, want ErrBoundsPending", err)
	}
	f.syncCaches(t, true)
	f.super.ClearActions()
	if _, err := admit.EnsureSuperNamespace(ctx, f.env, f.c, "app"); err != nil {
		t.Fatalf("bounds in force: EnsureSuperNamespace = %v", err)
	}
	if len(f.super.Actions()) != 0 {
		t.Errorf("in sync, yet EnsureSuperNamespace wrote: %v", f.super.Actions())
	}
}

// A ConfigMap (as any kind) is not created in a new super namespace before its quota is in force.
func TestNoObjectBeforeTheQuotaIsInForce(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "app", UID: "cm-uid"}, Data: map[string]string{"k": "v"}}
	f := newBoundsFixture(t, cm)
	if err := (configmap.Resource).Downward(ctx, f.env, f.c, "app", "cfg"); err == nil {
		t.Error("Downward returned nil while the quota is not in force (the request would not be retried)")
	}
	for _, r := range f.creates() {
		if r == "configmaps" {
			t.Fatalf("ConfigMap created before the quota was in force: creates = %v", f.creates())
		}
	}
	f.syncCaches(t, true)
	if err := (configmap.Resource).Downward(ctx, f.env, f.c, "app", "cfg"); err != nil {
		t.Fatalf("Downward with the bounds in force: %v", err)
	}
	if got := f.creates(); got[len(got)-1] != "configmaps" {
		t.Errorf("creates = %v, want the ConfigMap last", got)
	}
}

// The bounds follow the policy and are reset when edited or deleted in the super cluster;
// an object at their name that the syncer does not own is left alone.
func TestEnsureBoundsRepairs(t *testing.T) {
	ctx := context.Background()
	sns := func(f *boundsFixture) *corev1.Namespace {
		ns, err := f.env.SuperInformers.Core().V1().Namespaces().Lister().Get(f.superNS)
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	setup := func(t *testing.T) *boundsFixture {
		f := newBoundsFixture(t).withLimitRange()
		_, _ = admit.EnsureSuperNamespace(ctx, f.env, f.c, "app")
		f.syncCaches(t, true)
		f.super.ClearActions()
		return f
	}
	t.Run("edited quota is reset", func(t *testing.T) {
		f := setup(t)
		idx := f.env.SuperInformers.Core().V1().ResourceQuotas().Informer().GetIndexer()
		obj, _, _ := idx.GetByKey(f.superNS + "/vc-syncer-quota")
		edited := obj.(*corev1.ResourceQuota).DeepCopy()
		edited.Spec.Hard[corev1.ResourcePods] = resource.MustParse("100000")
		add(t, idx, edited)
		if _, err := f.super.CoreV1().ResourceQuotas(f.superNS).Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		f.super.ClearActions()
		if admit.BoundsInSync(f.env, f.c, sns(f)) {
			t.Error("BoundsInSync true for an edited quota")
		}
		if err := admit.EnsureBounds(ctx, f.env, f.c, sns(f)); !errors.Is(err, admit.ErrBoundsPending) {
			t.Errorf("EnsureBounds after reset = %v, want ErrBoundsPending (status is the edited one's)", err)
		}
		live, _ := f.super.CoreV1().ResourceQuotas(f.superNS).Get(ctx, "vc-syncer-quota", metav1.GetOptions{})
		if !equality.Semantic.DeepEqual(live.Spec.Hard, backstopQuota()) {
			t.Errorf("quota not reset: %v", live.Spec.Hard)
		}
	})
	t.Run("deleted limit range is recreated", func(t *testing.T) {
		f := setup(t)
		idx := f.env.SuperInformers.Core().V1().LimitRanges().Informer().GetIndexer()
		obj, _, _ := idx.GetByKey(f.superNS + "/vc-syncer-limits")
		_ = idx.Delete(obj)
		_ = f.super.CoreV1().LimitRanges(f.superNS).Delete(ctx, "vc-syncer-limits", metav1.DeleteOptions{})
		if admit.BoundsInSync(f.env, f.c, sns(f)) {
			t.Error("BoundsInSync true without the limit range")
		}
		if err := admit.EnsureBounds(ctx, f.env, f.c, sns(f)); err != nil {
			t.Fatal(err)
		}
		if _, err := f.super.CoreV1().LimitRanges(f.superNS).Get(ctx, "vc-syncer-limits", metav1.GetOptions{}); err != nil {
			t.Errorf("limit range not recreated: %v", err)
		}
	})
	t.Run("policy without quota deletes the syncer's quota", func(t *testing.T) {
		f := setup(t)
		f.c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{Quota: corev1.ResourceList{}}}))
		if err := admit.EnsureBounds(ctx, f.env, f.c, sns(f)); err != nil {
			t.Fatal(err)
		}
		var deleted bool
		for _, a := range f.super.Actions() {
			if d, ok := a.(k8stesting.DeleteAction); ok && d.GetResource().Resource == "resourcequotas" {
				deleted = true
			}
		}
		if !deleted {
			t.Errorf("quota not deleted; actions %v", f.super.Actions())
		}
	})
	t.Run("policy change updates the quota", func(t *testing.T) {
		f := setup(t)
		f.c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
			Quota: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5"), corev1.ResourceSecrets: resource.MustParse("5")}}}))
		_ = admit.EnsureBounds(ctx, f.env, f.c, sns(f))
		live, _ := f.super.CoreV1().ResourceQuotas(f.superNS).Get(ctx, "vc-syncer-quota", metav1.GetOptions{})
		if got := live.Spec.Hard[corev1.ResourceSecrets]; len(live.Spec.Hard) != 1 || got.String() != "5" {
			t.Errorf("quota after policy change = %v, want secrets=5 only (pods is the budget's alone)", live.Spec.Hard)
		}
	})
	t.Run("an admin's quota at the name is left alone", func(t *testing.T) {
		f := newBoundsFixture(t)
		_, _ = admit.EnsureSuperNamespace(ctx, f.env, f.c, "app")
		_ = f.super.CoreV1().ResourceQuotas(f.superNS).Delete(ctx, "vc-syncer-quota", metav1.DeleteOptions{})
		admin := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "vc-syncer-quota", Namespace: f.superNS},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("7")}}}
		if _, err := f.super.CoreV1().ResourceQuotas(f.superNS).Create(ctx, admin, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		f.syncCaches(t, true) // the admin's quota is not labelled: a real super cache would not hold it
		_ = f.env.SuperInformers.Core().V1().ResourceQuotas().Informer().GetIndexer().Delete(admin)
		f.super.ClearActions()
		if err := admit.EnsureBounds(ctx, f.env, f.c, sns(f)); err != nil {
			t.Errorf("EnsureBounds with an admin's quota = %v, want nil (theirs is in force)", err)
		}
		live, _ := f.super.CoreV1().ResourceQuotas(f.superNS).Get(ctx, "vc-syncer-quota", metav1.GetOptions{})
		if live.Spec.Hard.Pods().String() != "7" || conversion.OwnedByTenant(live, f.c.UID) {
			t.Errorf("the admin's quota was changed: %+v", live)
		}
	})
	t.Run("never in a namespace the tenant does not own", func(t *testing.T) {
		f := newBoundsFixture(t)
		foreign := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.superNS}}
		if _, err := f.super.CoreV1().Namespaces().Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		f.super.ClearActions()
		if _, err := admit.EnsureSuperNamespace(ctx, f.env, f.c, "app"); !errors.Is(err, resources.ErrNotOwned) {
			t.Errorf("EnsureSuperNamespace in a foreign namespace = %v, want ErrNotOwned", err)
		}
		for _, r := range f.creates() {
			if r != "namespaces" {
				t.Errorf("created %s in a namespace the tenant does not own", r)
			}
		}
	})
}

// The LimitRange as stored (after the apiserver's defaulting) compares equal to the policy's.
func TestLimitRangeDefaultingIsNotADifference(t *testing.T) {
	f := newBoundsFixture(t)
	f.c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		LimitRange: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			Min: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Mi")}}}}}))
	sns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.superNS}}
	conversion.Stamp(&sns.ObjectMeta, conversion.Owner{Tenant: "t1", TenantUID: "uid-t1", Namespace: "app", Name: "app", UID: "tns-uid"})
	stored := admit.DesiredLimitRange(f.c, sns)
	it := &stored.Spec.Limits[0] // what the apiserver stores
	it.Default = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	it.DefaultRequest = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Mi")}
	add(t, f.env.SuperInformers.Core().V1().LimitRanges().Informer().GetIndexer(), stored)
	add(t, f.env.SuperInformers.Core().V1().ResourceQuotas().Informer().GetIndexer(), &corev1.ResourceQuota{
		ObjectMeta: *admit.DesiredQuota(f.c, sns).ObjectMeta.DeepCopy(), Spec: admit.DesiredQuota(f.c, sns).Spec})
	if !admit.BoundsInSync(f.env, f.c, sns) {
		t.Error("a defaulted LimitRange counts as a difference: every namespace reconcile would rewrite it")
	}
}

// The desired objects are copies: changing them never changes the shared policy.
func TestDesiredBoundsDoNotAliasThePolicy(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "uid-t1"}
	lrPolicy := policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{LimitRange: limitRangeSpec}})
	c.SetPolicy(lrPolicy)
	sns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t1-abc-app"}}
	conversion.Stamp(&sns.ObjectMeta, conversion.Owner{Tenant: "t1", TenantUID: "uid-t1", Namespace: "app", Name: "app", UID: "u"})
	rq, lr := admit.DesiredQuota(c, sns), admit.DesiredLimitRange(c, sns)
	rq.Spec.Hard[corev1.ResourcePods] = resource.MustParse("1")
	lr.Spec.Limits[0].Default[corev1.ResourceCPU] = resource.MustParse("99")
	if lrPolicy.Limits().Quota.Pods().Value() != 1000 || lrPolicy.Limits().LimitRange[0].Default.Cpu().Value() != 1 {
		t.Error("modifying a desired bound modified the policy")
	}
}

// fullQuota puts the syncer's quota of the fixture's namespace into the super cache with its
// status computed and configmaps used up to its limit.
func (f *boundsFixture) fullQuota(t *testing.T, used string) {
	t.Helper()
	idx := f.env.SuperInformers.Core().V1().ResourceQuotas().Informer().GetIndexer()
	obj, ok, _ := idx.GetByKey(f.superNS + "/vc-syncer-quota")
	if !ok {
		t.Fatal("no quota in the cache")
	}
	rq := obj.(*corev1.ResourceQuota).DeepCopy()
	rq.Status.Used[corev1.ResourceConfigMaps] = resource.MustParse(used)
	if err := idx.Update(rq); err != nil {
		t.Fatal(err)
	}
}

// events drains the fake recorder.
func events(c *tenant.Cluster) []string { return restest.Drain(c.Recorder.(*record.FakeRecorder)) }

// An object the quota has no room for is refused from the cache (no super write), reported
// once (QuotaExceeded, rule quota) however often it is retried, and retried (an error) until
// there is room.
func TestQuotaFullIsReportedOnceAndRetried(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "app", UID: "cm-uid", ResourceVersion: "5"}}
	f := newBoundsFixture(t, cm)
	_, _ = admit.EnsureSuperNamespace(ctx, f.env, f.c, "app")
	f.syncCaches(t, true)
	f.fullQuota(t, "2000")
	_ = events(f.c)
	before := metrics.PolicyDenials("t1", "ConfigMap", "quota")
	f.super.ClearActions()
	for range 3 {
		err := (configmap.Resource).Downward(ctx, f.env, f.c, "app", "cfg")
		if !errors.Is(err, admit.ErrNoQuotaRoom) {
			t.Fatalf("Downward with a full quota = %v, want ErrNoQuotaRoom (retried with backoff)", err)
		}
	}
	if n := len(f.super.Actions()); n != 0 {
		t.Errorf("a refused object cost %d super-cluster calls: %v", n, f.super.Actions())
	}
	ev := events(f.c)
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning QuotaExceeded ") || !strings.Contains(ev[0], "quota:") {
		t.Errorf("events = %q, want one QuotaExceeded quota event", ev)
	}
	if got := metrics.PolicyDenials("t1", "ConfigMap", "quota") - before; got != 1 {
		t.Errorf("denials counted %v times, want 1", got)
	}
	f.fullQuota(t, "1999")
	if err := (configmap.Resource).Downward(ctx, f.env, f.c, "app", "cfg"); err != nil {
		t.Fatalf("Downward with room = %v", err)
	}
	if _, err := f.super.CoreV1().ConfigMaps(f.superNS).Get(ctx, "cfg", metav1.GetOptions{}); err != nil {
		t.Errorf("not created once there was room: %v", err)
	}
}

// The super apiserver's own quota refusal (403 exceeded quota: the cache was behind, or a
// resource the cached check cannot see) is a quota refusal too: reported once, retried.
func TestQuotaExceededAnswerIsAQuotaRefusal(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "app", UID: "cm-uid", ResourceVersion: "5"}}
	f := newBoundsFixture(t, cm)
	_, _ = admit.EnsureSuperNamespace(ctx, f.env, f.c, "app")
	f.syncCaches(t, true)
	_ = events(f.c)
	f.super.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "cfg",
			errors.New("exceeded quota: vc-syncer-quota, requested: configmaps=1, used: configmaps=2000, limited: configmaps=2000"))
	})
	for range 2 {
		if err := (configmap.Resource).Downward(ctx, f.env, f.c, "app", "cfg"); !errors.Is(err, admit.ErrNoQuotaRoom) {
			t.Fatalf("Downward = %v, want ErrNoQuotaRoom", err)
		}
	}
	ev := events(f.c)
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning QuotaExceeded ") || strings.Contains(ev[0], "SyncFailed") {
		t.Errorf("events = %q, want one QuotaExceeded event (no SyncFailed per retry)", ev)
	}
}
