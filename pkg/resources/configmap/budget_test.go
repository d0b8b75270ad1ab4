package configmap

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/admission"
	"github.com/vcsyncer/syncer/pkg/admit"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

// TestConfigMapOverTenantBudgetWaitsWithoutCost: configmaps=1 counts all of the tenant's
// namespaces: with the budget taken by a ConfigMap of another namespace, a new one gets no
// super copy and nothing is written to the super cluster (not even its namespace) however
// often it runs; one QuotaExceeded Event and one count; it is woken (not retried) when the
// other goes, and then synced.
func TestConfigMapOverTenantBudgetWaitsWithoutCost(t *testing.T) {
	h := restest.New(t, "t1", "shop")
	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		Quota: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("1")}}})
	var woken []string
	b := admission.NewBudget(admission.BudgetOptions[string]{Wake: func(k string) { woken = append(woken, k) }})
	h.Env.Budget = restest.Budget(b)
	b.Observe("t1", "ConfigMap/t1-other/taken", policy.ObjectCharge(&corev1.ConfigMap{}))
	h.Tenant(h.C.Informers.Core().V1().ConfigMaps().Informer(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "shop", UID: "cm-uid", ResourceVersion: "1"}})
	for range 3 {
		if err := Resource.Downward(h.Ctx(), h.Env, h.C, "shop", "cfg"); err != nil {
			t.Fatalf("Downward = %v, want nil (parked, not retried)", err)
		}
	}
	if a := h.SuperCS.Actions(); len(a) != 0 {
		t.Fatalf("super calls for a ConfigMap over its tenant's budget: %v", a)
	}
	evs := h.Events()
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning QuotaExceeded tenantQuota: ConfigMap shop/cfg waits: exceeded tenant budget") ||
		!strings.Contains(evs[0], "requested configmaps=1, used 1, limited 1") {
		t.Fatalf("events %q, want one QuotaExceeded naming the budget", evs)
	}
	if d := h.Denials(resources.KindConfigMap, policy.RuleTenantQuota); d != 1 {
		t.Errorf("denials rose by %v, want 1", d)
	}
	if len(woken) != 0 {
		t.Fatalf("woken %v before room appeared", woken)
	}
	b.Observe("t1", "ConfigMap/t1-other/taken", nil)
	if len(woken) != 1 || woken[0] != "shop/cfg" {
		t.Fatalf("woken %v, want [shop/cfg]", woken)
	}
	makeSuperNamespace(t, h, "cfg")
	if err := Resource.Downward(h.Ctx(), h.Env, h.C, "shop", "cfg"); err != nil {
		t.Fatalf("Downward after room appeared: %v", err)
	}
	if _, err := h.SuperCS.CoreV1().ConfigMaps(resources.SuperNamespace(h.C, "shop")).Get(h.Ctx(), "cfg", metav1.GetOptions{}); err != nil {
		t.Fatalf("no super copy once room appeared: %v", err)
	}
	if got := b.Used("t1")[corev1.ResourceConfigMaps]; got.String() != "1" {
		t.Errorf("used configmaps %s after the create, want 1 (reserved until observed)", got.String())
	}
}

// makeSuperNamespace runs the downward reconcile of tenant ConfigMap shop/name once, which
// makes the super namespace and its backstop quota, and puts both into the super caches, the
// quota computed with nothing used (the fake super cluster has no quota controller).
func makeSuperNamespace(t *testing.T, h *restest.Harness, name string) {
	t.Helper()
	_ = Resource.Downward(h.Ctx(), h.Env, h.C, "shop", name)
	superNS := resources.SuperNamespace(h.C, "shop")
	ns, err := h.SuperCS.CoreV1().Namespaces().Get(h.Ctx(), superNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.Super(h.Env.SuperInformers.Core().V1().Namespaces().Informer(), ns)
	if rq, err := h.SuperCS.CoreV1().ResourceQuotas(superNS).Get(h.Ctx(), admit.QuotaName, metav1.GetOptions{}); err == nil {
		rq.Status.Hard, rq.Status.Used = resources.CopyResourceList(rq.Spec.Hard), corev1.ResourceList{}
		for k := range rq.Spec.Hard {
			rq.Status.Used[k] = resource.MustParse("0")
		}
		h.Super(h.Env.SuperInformers.Core().V1().ResourceQuotas().Informer(), rq)
	}
}
