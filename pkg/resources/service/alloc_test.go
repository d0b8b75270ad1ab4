package service_test

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8stesting "k8s.io/client-go/testing"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/resources/service"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// allowAll lets tenant Services be NodePort and LoadBalancer, with externalTrafficPolicy Local.
var allowAll = &tenancyv1alpha1.TenantPolicySpec{Services: &tenancyv1alpha1.ServicePolicy{
	AllowedTypes:            []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer},
	AllowLocalTrafficPolicy: ptr(true)}}

func ptr[T any](v T) *T { return &v }

// kubectlOwns returns managedFields in which kubectl set the nodePort of port 80/TCP (and,
// with hcnp, the healthCheckNodePort), as the tenant apiserver records a manifest that sets
// them.
func kubectlOwns(hcnp bool) []metav1.ManagedFieldsEntry {
	extra := ""
	if hcnp {
		extra = `"f:healthCheckNodePort":{},`
	}
	return []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:spec":{` + extra + `"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{"f:nodePort":{}}}}}`)}}
}

// withManagedFields makes the fake tenant apiserver answer reads of Services with mf as their
// managedFields: the fake clientset's own field manager rewrites them on every write, where
// an apiserver keeps the entries of other managers.
func withManagedFields(h *restest.Harness, mf []metav1.ManagedFieldsEntry) {
	h.TenantCS.PrependReactor("get", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		g := a.(k8stesting.GetAction)
		o, err := h.TenantCS.Tracker().Get(a.GetResource(), g.GetNamespace(), g.GetName())
		if err != nil {
			return true, nil, err
		}
		s := o.(*corev1.Service).DeepCopy()
		s.ManagedFields = mf
		return true, s, nil
	})
}

// superAllocator makes the fake super apiserver behave like the Service registry: taken
// ClusterIPs and node ports are refused with the registry's errors; what is not requested is
// allocated (10.96.200.1, node ports from 30500, health-check port 30679).
func superAllocator(h *restest.Harness, takenIP string, takenPorts ...int32) *[]*corev1.Service {
	var creates []*corev1.Service
	next := int32(30500)
	h.SuperCS.PrependReactor("*", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetVerb() != "create" && a.GetVerb() != "update" {
			return false, nil, nil
		}
		s := a.(interface{ GetObject() runtime.Object }).GetObject().(*corev1.Service)
		if a.GetVerb() == "create" {
			creates = append(creates, s.DeepCopy())
		}
		gk := schema.GroupKind{Kind: "Service"}
		if s.Spec.ClusterIP == takenIP && takenIP != "" {
			return true, nil, apierrors.NewInvalid(gk, s.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"),
				s.Spec.ClusterIPs, "failed to allocate IP "+takenIP+": provided IP is already allocated")})
		}
		for i, p := range s.Spec.Ports {
			for _, taken := range takenPorts {
				if p.NodePort == taken {
					return true, nil, apierrors.NewInvalid(gk, s.Name, field.ErrorList{field.Invalid(
						field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort, "provided port is already allocated")})
				}
			}
		}
		for _, taken := range takenPorts {
			if s.Spec.HealthCheckNodePort == taken {
				return true, nil, apierrors.NewInternalError(fmt.Errorf(
					"failed to allocate requested HealthCheck NodePort %d: provided port is already allocated", taken))
			}
		}
		if s.Spec.ClusterIP == "" {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.200.1", []string{"10.96.200.1"}
		}
		for i := range s.Spec.Ports {
			if s.Spec.Ports[i].NodePort == 0 && s.Spec.Type != corev1.ServiceTypeClusterIP {
				s.Spec.Ports[i].NodePort, next = next, next+1
			}
		}
		if s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && s.Spec.HealthCheckNodePort == 0 {
			s.Spec.HealthCheckNodePort = 30679
		}
		return false, nil, nil
	})
	return &creates
}

func syncedCondition(t *testing.T, h *restest.Harness, name string) *metav1.Condition {
	t.Helper()
	s, err := h.TenantCS.CoreV1().Services("shop").Get(h.Ctx(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return meta.FindStatusCondition(s.Status.Conditions, service.ConditionSynced)
}

// A value the super cluster cannot allocate: an address or a port the tenant apiserver chose
// is allocated by the super cluster instead; a port a tenant client set makes the create fail
// for good (resources.ErrRejected), without a super copy, with the condition and one Warning
// Event however often the Service is reconciled.
func TestDownwardAllocationRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate     func(*corev1.Service)
		takenIP    string
		takenPorts []int32
		// want: the super copy's ClusterIP, nodePort and health-check port; or the refusal's reason.
		wantIP       string
		wantNodePort int32
		wantHCNP     int32
		wantReason   string
	}{
		"nothing taken: the tenant's values": {wantIP: "10.96.1.9", wantNodePort: 31001},
		"ClusterIP taken":                    {takenIP: "10.96.1.9", wantIP: "10.96.200.1", wantNodePort: 31001},
		"allocated nodePort taken":           {takenPorts: []int32{31001}, wantIP: "10.96.1.9", wantNodePort: 30500},
		"explicit nodePort taken": {mutate: func(s *corev1.Service) { s.ManagedFields = kubectlOwns(false) },
			takenPorts: []int32{31001}, wantReason: service.ReasonNodePortUnavailable},
		"allocated health-check port taken": {mutate: func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal, 32603
		}, takenPorts: []int32{32603}, wantIP: "10.96.1.9", wantNodePort: 31001, wantHCNP: 30679},
		"explicit health-check port taken": {mutate: func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal, 32603
			s.ManagedFields = kubectlOwns(true)
		}, takenPorts: []int32{32603}, wantReason: service.ReasonHealthCheckNodePortUnavailable},
	} {
		t.Run(name, func(t *testing.T) {
			h := restest.New(t, "svc-alloc", "shop")
			h.SetPolicy(allowAll)
			if err := h.C.SetServiceCIDRs([]string{"10.96.1.0/24"}); err != nil {
				t.Fatal(err)
			}
			creates := superAllocator(h, tc.takenIP, tc.takenPorts...)
			svc := tenantService(func(s *corev1.Service) {
				s.Generation = 1
				s.Spec.Type, s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ServiceTypeNodePort, "10.96.1.9", []string{"10.96.1.9"}
				s.Spec.Ports[0].NodePort = 31001
				if tc.mutate != nil {
					tc.mutate(s)
				}
			})
			withManagedFields(h, svc.ManagedFields)
			inf := h.C.Informers.Core().V1().Services().Informer()
			h.Tenant(inf, svc)
			r := service.Resource
			superNS := resources.SuperNamespace(h.C, "shop")
			var events []string
			for pass := range 3 { // later passes: a resync, the condition's own status write
				err := r.Downward(h.Ctx(), h.Env, h.C, "shop", "web")
				if tc.wantReason == "" && err != nil {
					t.Fatalf("pass %d: Downward = %v", pass, err)
				}
				if tc.wantReason != "" && !errors.Is(err, resources.ErrRejected) {
					t.Fatalf("pass %d: Downward = %v, want resources.ErrRejected", pass, err)
				}
				cur, gerr := h.TenantCS.CoreV1().Services("shop").Get(h.Ctx(), "web", metav1.GetOptions{})
				if gerr != nil {
					t.Fatal(gerr)
				}
				h.Tenant(inf, cur) // what the informers would see
				if sc, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "web", metav1.GetOptions{}); err == nil {
					h.Super(r.SuperInformer(h.Env), sc)
				}
				events = append(events, h.Events()...)
			}
			got, err := h.SuperCS.CoreV1().Services(superNS).Get(h.Ctx(), "web", metav1.GetOptions{})
			if tc.wantReason != "" {
				if !apierrors.IsNotFound(err) {
					t.Errorf("super copy of a Service whose explicit port is taken: %v (err %v)", got, err)
				}
				for _, c := range *creates {
					if c.Spec.Ports[0].NodePort != 31001 || (c.Spec.HealthCheckNodePort != 0 && c.Spec.HealthCheckNodePort != 32603) {
						t.Errorf("a create asked for another port than the tenant's: %+v", c.Spec)
					}
				}
				cond := syncedCondition(t, h, "web")
				if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != tc.wantReason {
					t.Fatalf("condition %+v, want %s=False reason %s", cond, service.ConditionSynced, tc.wantReason)
				}
				if len(events) != 1 || !strings.HasPrefix(events[0], "Warning "+tc.wantReason+" ") {
					t.Errorf("events %q, want one Warning %s", events, tc.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatalf("no super copy: %v", err)
			}
			if got.Spec.ClusterIP != tc.wantIP || got.Spec.Ports[0].NodePort != tc.wantNodePort || got.Spec.HealthCheckNodePort != tc.wantHCNP {
				t.Errorf("super clusterIP %s nodePort %d healthCheckNodePort %d, want %s %d %d", got.Spec.ClusterIP,
					got.Spec.Ports[0].NodePort, got.Spec.HealthCheckNodePort, tc.wantIP, tc.wantNodePort, tc.wantHCNP)
			}
			if len(events) != 0 {
				t.Errorf("events on the downward path: %q", events)
			}
		})
	}
}

// The upward path makes the tenant show what works: a node port the super cluster allocated
// instead of the tenant's is written into the tenant Service unless a tenant client set it;
// a ClusterIP or health-check port that differs (immutable on both sides) is reported, once.
func TestUpwardAgreesWithTheSuperCopy(t *testing.T) {
	for name, tc := range map[string]struct {
		tenant       func(*corev1.Service)
		super        func(*corev1.Service)
		wantNodePort int32 // in the tenant afterwards
		wantReason   string
	}{
		"agreeing Service: untouched": {wantNodePort: 31001},
		"allocated nodePort reallocated: written back": {
			super: func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30543 }, wantNodePort: 30543},
		"explicit nodePort: never overwritten": {
			tenant: func(s *corev1.Service) { s.ManagedFields = kubectlOwns(false) },
			super:  func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30543 }, wantNodePort: 31001},
		"ClusterIP outside the Tenant's range": {
			tenant: func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.115", []string{"10.0.0.115"} },
			super: func(s *corev1.Service) {
				s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.41.108", []string{"10.96.41.108"}
			},
			wantNodePort: 31001, wantReason: service.ReasonClusterIPMismatch},
		"health-check port reallocated": {
			tenant: func(s *corev1.Service) {
				s.Spec.Type, s.Spec.ExternalTrafficPolicy, s.Spec.HealthCheckNodePort = corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal, 32603
			},
			super:        func(s *corev1.Service) { s.Spec.HealthCheckNodePort = 30679 },
			wantNodePort: 31001, wantReason: service.ReasonHealthCheckNodePortMismatch},
	} {
		t.Run(name, func(t *testing.T) {
			h := restest.New(t, "svc-up", "shop")
			h.SetPolicy(allowAll)
			if err := h.C.SetServiceCIDRs([]string{"10.96.1.0/24"}); err != nil {
				t.Fatal(err)
			}
			ts := tenantService(func(s *corev1.Service) {
				s.Generation = 1
				s.Spec.Type, s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ServiceTypeNodePort, "10.96.1.9", []string{"10.96.1.9"}
				s.Spec.Ports[0].NodePort = 31001
				if tc.tenant != nil {
					tc.tenant(s)
				}
			})
			withManagedFields(h, ts.ManagedFields)
			inf := h.C.Informers.Core().V1().Services().Informer()
			h.Tenant(inf, ts)
			r := service.Resource
			ss := service.Desired(h.C, ts, resources.SuperNamespace(h.C, "shop"), nil)
			ss.UID = "super-uid"
			ss.Spec.ClusterIP, ss.Spec.ClusterIPs = ts.Spec.ClusterIP, ts.Spec.ClusterIPs
			if tc.super != nil {
				tc.super(ss)
			}
			h.Super(r.SuperInformer(h.Env), ss)
			var events []string
			for pass := range 3 {
				if err := r.Upward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
					t.Fatalf("pass %d: Upward = %v", pass, err)
				}
				cur, err := h.TenantCS.CoreV1().Services("shop").Get(h.Ctx(), "web", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				h.Tenant(inf, cur)
				events = append(events, h.Events()...)
			}
			cur, _ := h.TenantCS.CoreV1().Services("shop").Get(h.Ctx(), "web", metav1.GetOptions{})
			if got := cur.Spec.Ports[0].NodePort; got != tc.wantNodePort {
				t.Errorf("tenant nodePort %d, want %d", got, tc.wantNodePort)
			}
			cond := meta.FindStatusCondition(cur.Status.Conditions, service.ConditionSynced)
			if tc.wantReason == "" {
				if cond != nil || len(events) != 0 {
					t.Errorf("condition %+v, events %q: want none", cond, events)
				}
				return
			}
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != tc.wantReason {
				t.Fatalf("condition %+v, want False reason %s", cond, tc.wantReason)
			}
			if len(events) != 1 || !strings.HasPrefix(events[0], "Warning "+tc.wantReason+" ") {
				t.Errorf("events %q, want one Warning %s", events, tc.wantReason)
			}
		})
	}
}

// An address the super cluster allocates inside another tenant's Service range is never kept:
// that tenant's own DNS answers its Services' names with addresses of its range, so a super
// copy holding one would receive the other tenant's traffic. The copy is deleted and created
// again until the super cluster gives an address outside every other tenant's range.
func TestDownwardNeverKeepsAnotherTenantsAddress(t *testing.T) {
	h := restest.New(t, "svc-squat", "shop")
	other := netip.MustParsePrefix("10.96.2.0/24")
	h.Env.ReservedServiceIP = func(_ *tenant.Cluster, ip netip.Addr) bool { return other.Contains(ip) }
	// The super cluster's random allocation lands in the other tenant's range twice first.
	answers := []string{"10.96.2.7", "10.96.2.8", "10.96.77.3"}
	var deleted []string
	h.SuperCS.PrependReactor("*", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		switch a.GetVerb() {
		case "create":
			s := a.(interface{ GetObject() runtime.Object }).GetObject().(*corev1.Service)
			if s.Spec.ClusterIP == "" && len(answers) > 0 {
				s.Spec.ClusterIP, s.Spec.ClusterIPs, answers = answers[0], []string{answers[0]}, answers[1:]
			}
		case "delete":
			deleted = append(deleted, a.(k8stesting.DeleteAction).GetName())
		}
		return false, nil, nil
	})
	svc := tenantService(func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.9", []string{"10.0.0.9"} })
	h.Tenant(h.C.Informers.Core().V1().Services().Informer(), svc)
	if err := (service.Resource).Downward(h.Ctx(), h.Env, h.C, "shop", "web"); err != nil {
		t.Fatalf("Downward = %v", err)
	}
	got, err := h.SuperCS.CoreV1().Services(resources.SuperNamespace(h.C, "shop")).Get(h.Ctx(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ClusterIP != "10.96.77.3" || len(deleted) != 2 {
		t.Errorf("super copy has ClusterIP %s after %d deletes, want 10.96.77.3 after 2", got.Spec.ClusterIP, len(deleted))
	}
}
