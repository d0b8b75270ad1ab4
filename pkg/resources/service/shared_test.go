package service_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/resources/service"
)

// syncedCondition returns tenant Service shop/name's tenancy.vcsyncer.io/Synced condition in the
// tenant apiserver.
func syncedConditionOf(t *testing.T, h *restest.Harness, name string) *metav1.Condition {
	t.Helper()
	s, err := h.TenantCS.CoreV1().Services("shop").Get(h.Ctx(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(s.Status.Conditions, service.ConditionSynced)
}

// A tenant whose Services take addresses from the super cluster's shared Service range (their
// ClusterIPs are outside the Tenant's spec.serviceCIDRs, e.g. from a ServiceCIDR the tenant
// added to its own apiserver) gets at most services.maxSharedClusterIPs of them; the others get
// no super copy, one PolicyDenied Event and count each, and the Synced=False condition. A
// headless Service and one inside the tenant's range take no shared address and are synced.
func TestSharedClusterIPsBoundedByThePolicy(t *testing.T) {
	h := restest.New(t, "svc-shared", "shop")
	service.Resource.Forget(h.C.Name) // reservations of an earlier run (-count) of the same tenant
	t.Cleanup(func() { service.Resource.Forget(h.C.Name) })
	if err := h.C.SetServiceCIDRs([]string{"10.96.16.0/20"}); err != nil {
		t.Fatal(err)
	}
	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Services: &tenancyv1alpha1.ServicePolicy{MaxSharedClusterIPs: ptrInt32(2)}})
	r := service.Resource
	r.SuperInformer(h.Env)
	superNS := resources.SuperNamespace(h.C, "shop")
	before := h.Denials(resources.KindService, policy.RuleSharedClusterIP)
	mk := func(name, ip string) *corev1.Service {
		return tenantService(func(s *corev1.Service) {
			s.Name, s.UID, s.Spec.ClusterIP, s.Spec.ClusterIPs = name, types.UID("uid-"+name), ip, []string{ip}
		})
	}
	svcs := []*corev1.Service{mk("own", "10.96.16.10"), mk("headless", corev1.ClusterIPNone)}
	for i := range 4 {
		svcs = append(svcs, mk(fmt.Sprintf("shared-%d", i), fmt.Sprintf("10.60.0.%d", 10+i)))
	}
	for pass := range 2 { // the second pass (a resync) reports nothing new
		for _, svc := range svcs {
			if pass == 0 {
				h.Tenant(h.C.Informers.Core().V1().Services().Informer(), svc)
			}
			if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", svc.Name); err != nil {
				t.Fatalf("Downward(%s) = %v, want nil", svc.Name, err)
			}
			if s, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), svc.Name, metav1.GetOptions{}); err == nil && pass == 0 {
				if s.Spec.ClusterIP == "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
					s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.200."+fmt.Sprint(len(svc.Name)), []string{"10.96.200." + fmt.Sprint(len(svc.Name))}
				}
				h.Super(r.SuperInformer(h.Env), s) // what a running informer would see (with the allocated address)
			}
		}
		if pass == 0 {
			if ev := h.Events(); len(ev) != 2 || !strings.Contains(ev[0], "Warning PolicyDenied sharedClusterIP: ") {
				t.Errorf("events %q, want 2 PolicyDenied sharedClusterIP", ev)
			}
		} else if ev := h.Events(); len(ev) != 0 {
			t.Errorf("second pass: events %q", ev)
		}
	}
	for _, name := range []string{"own", "headless", "shared-0", "shared-1"} {
		if _, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), name, metav1.GetOptions{}); err != nil {
			t.Errorf("Service %s not synced: %v", name, err)
		}
	}
	for _, name := range []string{"shared-2", "shared-3"} {
		if _, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), name, metav1.GetOptions{}); err == nil {
			t.Errorf("Service %s synced beyond the policy's 2 shared addresses", name)
		}
		c := syncedConditionOf(t, h, name)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != policy.ReasonPolicyDenied || !strings.HasPrefix(c.Message, "sharedClusterIP: ") {
			t.Errorf("Service %s condition %+v", name, c)
		}
	}
	if got := h.Denials(resources.KindService, policy.RuleSharedClusterIP) - before; got != 2 {
		t.Errorf("denials rose by %v, want 2", got)
	}
	// A higher cap lets the next one in.
	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Services: &tenancyv1alpha1.ServicePolicy{MaxSharedClusterIPs: ptrInt32(3)}})
	if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "shared-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "shared-2", metav1.GetOptions{}); err != nil {
		t.Errorf("shared-2 not synced under a cap of 3: %v", err)
	}
}

// spec.externalIPs are never copied; the drop is reported once per spec: a PolicyDenied Event
// (rule externalIPs), a count, and the Synced=False condition written by the upward path.
func TestExternalIPsDroppedVisibly(t *testing.T) {
	h := restest.New(t, "svc-extips", "shop")
	r := service.Resource
	r.SuperInformer(h.Env)
	superNS := resources.SuperNamespace(h.C, "shop")
	before := h.Denials(resources.KindService, policy.RuleExternalIPs)
	svc := tenantService(func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"203.0.113.9"} })
	h.Tenant(h.C.Informers.Core().V1().Services().Informer(), svc)
	var s *corev1.Service
	for range 2 { // the second pass (a resync) reports nothing new
		if err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
			t.Fatal(err)
		}
		var err error
		if s, err = h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "web", metav1.GetOptions{}); err != nil {
			t.Fatalf("not synced: %v", err)
		}
		h.Super(r.SuperInformer(h.Env), s)
	}
	if len(s.Spec.ExternalIPs) > 0 {
		t.Errorf("super copy has externalIPs %v", s.Spec.ExternalIPs)
	}
	if ev := h.Events(); len(ev) != 1 || !strings.Contains(ev[0], "Warning PolicyDenied externalIPs: ") {
		t.Errorf("events %q, want one PolicyDenied externalIPs", ev)
	}
	if got := h.Denials(resources.KindService, policy.RuleExternalIPs) - before; got != 1 {
		t.Errorf("denials rose by %v, want 1", got)
	}
	if err := r.Upward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
		t.Fatal(err)
	}
	c := syncedConditionOf(t, h, "web")
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != policy.ReasonPolicyDenied || !strings.HasPrefix(c.Message, "externalIPs: ") {
		t.Errorf("condition %+v", c)
	}
	if ev := h.Events(); len(ev) != 0 {
		t.Errorf("the upward path recorded %q as well", ev)
	}
}

func ptrInt32(v int32) *int32 { return &v }
