package restest

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admission"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Harness is one tenant (C, on the fake clientset TenantCS) and the super cluster (Env, on
// SuperCS). Events the reconcilers record on tenant objects go to Recorder.
type Harness struct {
	T        *testing.T
	C        *tenant.Cluster
	Env      *resources.Env
	TenantCS *fake.Clientset
	SuperCS  *fake.Clientset
	Recorder *record.FakeRecorder

	// denialsAtStart is vcsyncer_policy_denials_total of the tenant when New made the Harness,
	// by kind and rule: Denials reports the rise since then.
	denialsAtStart map[[2]string]float64
}

// New returns a Harness for a tenant named name (UID "uid-"+name) whose tenant cache holds the
// Namespaces namespaces (so super namespaces can be created).
func New(t *testing.T, name string, namespaces ...string) *Harness {
	t.Helper()
	tenantCS, superCS := fake.NewClientset(), fake.NewClientset()
	h := &Harness{
		T: t, TenantCS: tenantCS, SuperCS: superCS, Recorder: record.NewFakeRecorder(100),
		Env: &resources.Env{
			Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0),
			SuperNodes: informers.NewSharedInformerFactory(superCS, 0),
		},
	}
	h.denialsAtStart = metrics.PolicyDenialCounts(name)
	h.C = &tenant.Cluster{Name: name, UID: "uid-" + name, Client: tenantCS,
		Informers: informers.NewSharedInformerFactory(tenantCS, 0), Recorder: h.Recorder}
	h.SetPolicy(nil)
	for _, ns := range namespaces {
		h.Tenant(h.C.Informers.Core().V1().Namespaces().Informer(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, UID: types.UID("ns-" + ns)}})
	}
	return h
}

// noQuota is the "default" policy layer of a Harness: no ResourceQuota (a fake super cluster
// has no quota controller to compute one, so the bounds would never be in force) and no
// LimitRange.
var noQuota = tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
	Quota: corev1.ResourceList{}, LimitRange: []corev1.LimitRangeItem{}}}

// SetPolicy gives the tenant the policy spec (nil: the built-in defaults) over a "default"
// policy without quota and LimitRange.
func (h *Harness) SetPolicy(spec *tenancyv1alpha1.TenantPolicySpec) {
	h.C.SetPolicy(policy.Resolve(&noQuota, spec))
}

// Tenant puts obj into the tenant cache inf and into the tenant apiserver.
func (h *Harness) Tenant(inf cache.SharedIndexInformer, obj runtime.Object) {
	h.T.Helper()
	put(h.T, inf, obj)
	if err := h.TenantCS.Tracker().Add(obj.DeepCopyObject()); err != nil && !apierrors.IsAlreadyExists(err) {
		h.T.Fatal(err)
	}
}

// Super puts obj into the super cache inf and into the super apiserver.
func (h *Harness) Super(inf cache.SharedIndexInformer, obj runtime.Object) {
	h.T.Helper()
	put(h.T, inf, obj)
	if err := h.SuperCS.Tracker().Add(obj.DeepCopyObject()); err != nil && !apierrors.IsAlreadyExists(err) {
		h.T.Fatal(err)
	}
}

// Events returns the Events recorded so far ("Warning PolicyDenied <message>") and forgets them.
func (h *Harness) Events() []string { return Drain(h.Recorder) }

// Drain returns the Events rec has recorded so far, each as "<type> <reason> <message>", and
// forgets them.
func Drain(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// WantOneEvent fails t unless rec recorded exactly one Event since it was last drained, and that
// Event contains every string of want (for example "Warning PolicyDenied storageDataSource: ").
func WantOneEvent(t testing.TB, rec *record.FakeRecorder, want ...string) {
	t.Helper()
	got := Drain(rec)
	if len(got) != 1 {
		t.Errorf("Events %q, want exactly one", got)
		return
	}
	for _, w := range want {
		if !strings.Contains(got[0], w) {
			t.Errorf("Event %q, want it to contain %q", got[0], w)
		}
	}
}

// Denials returns how much vcsyncer_policy_denials_total for the harness's tenant, kind and
// rule has risen since New made the Harness. The counter is process-wide and tenant names
// repeat across runs (go test -count=2), so its absolute value means nothing to a test.
func (h *Harness) Denials(kind resources.Kind, rule policy.Rule) float64 {
	return metrics.PolicyDenials(h.C.Name, string(kind), string(rule)) - h.denialsAtStart[[2]string{string(kind), string(rule)}]
}

// Rise returns a function reporting how much read (a process-wide counter such as
// metrics.PolicyDenials for one series) has risen since Rise was called. Take it before the
// test acts; compare what it then returns.
func Rise(read func() float64) func() float64 {
	before := read()
	return func() float64 { return read() - before }
}

// DenialsRise is Rise of vcsyncer_policy_denials_total{tenant, kind, rule}.
func DenialsRise(tenant string, kind resources.Kind, rule policy.Rule) func() float64 {
	return Rise(func() float64 { return metrics.PolicyDenials(tenant, string(kind), string(rule)) })
}

// Ctx returns a background context.
func (h *Harness) Ctx() context.Context { return context.Background() }

func put(t *testing.T, inf cache.SharedIndexInformer, obj runtime.Object) {
	t.Helper()
	if err := inf.GetIndexer().Update(obj); err != nil {
		t.Fatal(err)
	}
}

// EqualCase is one row of a table test of an equality function: Mutate changes a copy of the
// reference object, and Equal is what the function must then report.
type EqualCase[T any] struct {
	Mutate func(T)
	Equal  bool
}

// RunEqualCases runs one subtest per case: it copies ref with deepCopy, applies the case's
// Mutate to the copy and fails when equal(ref, copy) is not the case's Equal.
func RunEqualCases[T any](t *testing.T, ref T, deepCopy func(T) T, equal func(ref, changed T) bool, cases map[string]EqualCase[T]) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			changed := deepCopy(ref)
			tc.Mutate(changed)
			if got := equal(ref, changed); got != tc.Equal {
				t.Errorf("equal = %v after the change, want %v", got, tc.Equal)
			}
		})
	}
}

// CheckCase is one row of a table test of a resources.Checker: Mutate (nil: no change)
// changes the tenant object t and the super object s that the table's build function made and
// returns them, a nil super object standing for "no super copy"; Want is the verdict Check
// must then return.
type CheckCase[T interface {
	comparable
	metav1.Object
}] struct {
	Mutate func(t, s T) (T, T)
	Want   resources.Mismatch
}

// RunCheckCases runs one subtest per case: it builds a fresh tenant and super object, applies
// the case's Mutate and fails when check (a Checker's Check with its Env and tenant bound)
// does not return the case's Want.
func RunCheckCases[T interface {
	comparable
	metav1.Object
}](t *testing.T, check func(t, s metav1.Object) resources.Mismatch, build func() (T, T), cases map[string]CheckCase[T]) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			to, so := build()
			if tc.Mutate != nil {
				to, so = tc.Mutate(to, so)
			}
			var s metav1.Object
			var none T
			if so != none {
				s = so
			}
			if got := check(to, s); got != tc.Want {
				t.Errorf("Check = %q, want %q", got, tc.Want)
			}
		})
	}
}

// CollidingNamespaces returns two tenant namespace names of tenant c (Name and UID set) that
// map to one super namespace, and that super namespace: a 63-character name, cut when it is
// mapped, and the tail of its cut form. It fails t when they do not collide.
func CollidingNamespaces(t testing.TB, c *tenant.Cluster) (long, short, superNS string) {
	t.Helper()
	long = strings.Repeat("x", 63)
	superNS = resources.SuperNamespace(c, long)
	short = strings.TrimPrefix(superNS, conversion.SuperNamespacePrefix(c.Name, c.UID))
	if resources.SuperNamespace(c, short) != superNS {
		t.Fatalf("%q and %q do not collide", long, short)
	}
	return long, short, superNS
}

// Budget adapts b to resources.Budget as pkg/syncer does (resources.BudgetOf): objects are
// keyed <kind>/<super namespace>/<name> (what a test Observes), and a parked object is woken
// as <namespace>/<name> of its tenant object.
func Budget(b *admission.Budget[string]) resources.Budget {
	return resources.BudgetOf(b, func(_ string, _ resources.Kind, namespace, name string) string { return namespace + "/" + name })
}
