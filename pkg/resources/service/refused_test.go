package service_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/resources/service"
)

// A Service the policy refuses looks refused: condition Synced=False with the reason of its
// Warning Event (PolicyDenied) and the label tenancy.vcsyncer.io/refused, written once (the
// writes coming back through the informer report nothing again); once it changes to what the
// policy allows, its super copy is made and the upward path turns the condition True and
// removes the label.
func TestRefusedServiceShowsWhyUntilItIsSynced(t *testing.T) {
	h := restest.New(t, "svc-refused-condition", "shop")
	inf := h.C.Informers.Core().V1().Services().Informer()
	h.Tenant(inf, tenantService(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }))
	r := service.Resource
	superInf := r.SuperInformer(h.Env)
	superNS := resources.SuperNamespace(h.C, "shop")
	live := func() *corev1.Service {
		t.Helper()
		s, err := h.TenantCS.CoreV1().Services("shop").Get(h.Ctx(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
		t.Fatalf("Downward = %v", err)
	}
	got := live()
	cond := meta.FindStatusCondition(got.Status.Conditions, service.ConditionSynced)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != policy.ReasonPolicyDenied ||
		!strings.HasPrefix(cond.Message, string(policy.RuleServiceType)+": ") {
		t.Fatalf("condition %+v, want Synced=False reason PolicyDenied message %q...", cond, policy.RuleServiceType+": ")
	}
	if v := got.Labels[conversion.LabelRefused]; v != policy.ReasonPolicyDenied {
		t.Errorf("label %s = %q, want %q", conversion.LabelRefused, v, policy.ReasonPolicyDenied)
	}
	ev := h.Events()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+cond.Reason+" ") {
		t.Errorf("events = %q, want one Warning %s (the condition's reason)", ev, cond.Reason)
	}

	// The informer brings the writes back with a new resourceVersion: nothing new is written
	// or reported.
	got.ResourceVersion = "7"
	h.Tenant(inf, got)
	h.TenantCS.ClearActions()
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
		t.Fatalf("Downward = %v", err)
	}
	if a := h.TenantCS.Actions(); len(a) != 0 {
		t.Errorf("tenant writes for an unchanged refused Service: %v", a)
	}
	if ev := h.Events(); len(ev) != 0 {
		t.Errorf("events reported again after the syncer's own writes: %q", ev)
	}

	// Changed to ClusterIP: synced, and the refusal goes away.
	got = live()
	got.Spec.Type = corev1.ServiceTypeClusterIP
	got.Spec.Ports[0].NodePort = 0
	got.ResourceVersion = "8"
	if _, err := h.TenantCS.CoreV1().Services("shop").Update(h.Ctx(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.Tenant(inf, got)
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
		t.Fatalf("Downward = %v", err)
	}
	s, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no super copy once allowed: %v", err)
	}
	h.Super(superInf, s)
	if err := r.Upward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
		t.Fatalf("Upward = %v", err)
	}
	got = live()
	if c := meta.FindStatusCondition(got.Status.Conditions, service.ConditionSynced); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("condition %+v after the Service was synced, want Synced=True", c)
	}
	if v, ok := got.Labels[conversion.LabelRefused]; ok {
		t.Errorf("label %s=%q kept after the Service was synced", conversion.LabelRefused, v)
	}
}

// The label the syncer writes is the one the local tenant DNS (and the documented Corefile)
// filters on.
func TestRefusedLabelIsTheDNSFilters(t *testing.T) {
	if conversion.LabelRefused != localcluster.RefusedLabel {
		t.Errorf("conversion.LabelRefused %q, localcluster.RefusedLabel %q: the tenant DNS would answer refused Services",
			conversion.LabelRefused, localcluster.RefusedLabel)
	}
}
