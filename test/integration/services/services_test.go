package services_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/resources/service"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

func nodePortService(name string, nodePort int32, mutate func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, NodePort: nodePort}}},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func lbLocal(s *corev1.Service) {
	s.Spec.Type, s.Spec.ExternalTrafficPolicy = corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal
}

// TestServiceAddresses: ClusterIPs are the tenant's in the super cluster; an explicit nodePort
// is requested there, and the second tenant asking for the same one is told and gets no other
// port; node ports the tenant apiserver allocated that are taken in the super cluster are
// reallocated there and written back into the tenant; health-check node ports agree, or the
// difference is reported.
func TestServiceAddresses(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 2)
	c := itest.StartSyncer(t, env.Super.RESTConfig, nil)
	itest.DefaultPolicy(t, c, tenancyv1alpha1.TenantPolicySpec{
		Services: &tenancyv1alpha1.ServicePolicy{
			AllowedTypes:            []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer},
			AllowLocalTrafficPolicy: ptr(true)},
		Limits: &tenancyv1alpha1.LimitsPolicy{Quota: corev1.ResourceList{ // node ports and load balancers allowed
			corev1.ResourceServices: resource.MustParse("50"), corev1.ResourceServicesNodePorts: resource.MustParse("20"),
			corev1.ResourceServicesLoadBalancers: resource.MustParse("10")}},
	})
	ctx := context.Background()
	super := env.Super.Client
	t1, t2 := env.Tenants[0], env.Tenants[1]
	if t1.ServiceCIDR == t2.ServiceCIDR {
		t.Fatalf("tenants share the Service range %s", t1.ServiceCIDR)
	}
	register := func(tc *localcluster.ControlPlane) string {
		t.Helper()
		if err := app.AddTenantWithOptions(ctx, c, itest.KubeconfigNS, tc.Name, tc.Kubeconfig,
			app.TenantOptions{Weight: 1, ServiceCIDRs: []string{tc.ServiceCIDR}}); err != nil {
			t.Fatal(err)
		}
		itest.WaitRunning(t, c, tc.Name)
		return itest.TenantUID(t, c, tc.Name)
	}
	uid1 := register(t1)
	itest.MustCreateNS(t, t1.Client, "web")
	itest.MustCreateNS(t, t2.Client, "web")

	// Tenant 2 is registered later: its Services "auto" and "lb" are allocated node ports by
	// its apiserver first, and those ports are then taken in the super cluster by a Service
	// the syncer does not own, so the syncer's requests for them collide.
	auto2, err := t2.Client.CoreV1().Services("web").Create(ctx, nodePortService("auto", 0, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lb2, err := t2.Client.CoreV1().Services("web").Create(ctx, nodePortService("lb", 0, lbLocal), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ex := service.ExplicitFields(auto2); len(ex.NodePorts) != 0 || ex.HealthCheckNodePort {
		t.Fatalf("the tenant apiserver's own allocation is in managedFields: %+v (%v)", ex, auto2.ManagedFields)
	}
	if ex := service.ExplicitFields(lb2); len(ex.NodePorts) != 0 || ex.HealthCheckNodePort {
		t.Fatalf("the tenant apiserver's own health-check port allocation is in managedFields: %+v", ex)
	}
	autoPort, hcnp2 := auto2.Spec.Ports[0].NodePort, lb2.Spec.HealthCheckNodePort
	itest.Created(t)(super.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "occupier"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{
			{Name: "a", Port: 1, NodePort: autoPort}, {Name: "b", Port: 2, NodePort: hcnp2}}},
	}, metav1.CreateOptions{}))
	uid2 := register(t2)
	superNS := map[*localcluster.ControlPlane]string{
		t1: conversion.SuperNamespace(t1.Name, uid1, "web"), t2: conversion.SuperNamespace(t2.Name, uid2, "web")}

	superOf := func(ctx context.Context, tc *localcluster.ControlPlane, name string) (ts, ss *corev1.Service, err error) {
		if ts, err = tc.Client.CoreV1().Services("web").Get(ctx, name, metav1.GetOptions{}); err != nil {
			return nil, nil, err
		}
		ss, err = super.CoreV1().Services(superNS[tc]).Get(ctx, name, metav1.GetOptions{})
		return ts, ss, err
	}

	t.Run("ClusterIP: the tenant's address is the super copy's", func(t *testing.T) {
		for _, tc := range []*localcluster.ControlPlane{t1, t2} {
			itest.Created(t)(tc.Client.CoreV1().Services("web").Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "api"},
				Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "api"}, Ports: []corev1.ServicePort{{Port: 8080}}},
			}, metav1.CreateOptions{}))
			itest.Eventually(t, time.Minute, tc.Name+" Service api in the super cluster", func(ctx context.Context) error {
				ts, ss, err := superOf(ctx, tc, "api")
				if err != nil {
					return err
				}
				if ts.Spec.ClusterIP != ss.Spec.ClusterIP || !slices.Equal(ts.Spec.ClusterIPs, ss.Spec.ClusterIPs) {
					return itest.Errorf("tenant ClusterIPs %v, super %v", ts.Spec.ClusterIPs, ss.Spec.ClusterIPs)
				}
				if !netip.MustParsePrefix(tc.ServiceCIDR).Contains(netip.MustParseAddr(ts.Spec.ClusterIP)) {
					return itest.Errorf("ClusterIP %s outside the tenant's range %s", ts.Spec.ClusterIP, tc.ServiceCIDR)
				}
				return nil
			})
		}
		// The tenant's own default/kubernetes Service: the first address of its range.
		itest.Eventually(t, time.Minute, "tenant-1 default/kubernetes in the super cluster", func(ctx context.Context) error {
			ts, err := t1.Client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return err
			}
			ss, err := super.CoreV1().Services(conversion.SuperNamespace(t1.Name, uid1, "default")).Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if ss.Spec.ClusterIP != ts.Spec.ClusterIP {
				return itest.Errorf("tenant %s, super %s", ts.Spec.ClusterIP, ss.Spec.ClusterIP)
			}
			return nil
		})
	})

	t.Run("explicit nodePort 31001: the first tenant gets it, the second is told and gets no other", func(t *testing.T) {
		fixed1, err := t1.Client.CoreV1().Services("web").Create(ctx, nodePortService("fixed", 31001, nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !service.ExplicitFields(fixed1).NodePorts[service.PortKey{Port: 80, Protocol: corev1.ProtocolTCP}] {
			t.Fatalf("a nodePort set by the client is not in its managedFields: %v", fixed1.ManagedFields)
		}
		itest.Eventually(t, time.Minute, "tenant-1 fixed in the super cluster at 31001", func(ctx context.Context) error {
			_, ss, err := superOf(ctx, t1, "fixed")
			if err != nil {
				return err
			}
			if got := ss.Spec.Ports[0].NodePort; got != 31001 {
				return itest.Errorf("super nodePort %d", got)
			}
			return nil
		})
		itest.Created(t)(t2.Client.CoreV1().Services("web").Create(ctx, nodePortService("fixed", 31001, nil), metav1.CreateOptions{}))
		itest.WaitEvent(t, t2.Client, "web", "fixed", service.ReasonNodePortUnavailable, "nodePort 31001 of port http 80/TCP is not available")
		itest.Eventually(t, time.Minute, "tenant-2 fixed has the condition", func(ctx context.Context) error {
			return wantCondition(ctx, t2.Client, "fixed", service.ReasonNodePortUnavailable)
		})
		itest.Consistently(t, 3*time.Second, "tenant-2 fixed: no super copy, still 31001, one Event", func(ctx context.Context) error {
			ts, _, err := superOf(ctx, t2, "fixed")
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("super copy of a Service whose explicit nodePort is taken (err %w)", err)
			}
			if got := ts.Spec.Ports[0].NodePort; got != 31001 {
				return fmt.Errorf("tenant nodePort changed to %d", got)
			}
			return oneEvent(ctx, t2.Client, "fixed", service.ReasonNodePortUnavailable)
		})
		// Tenant 1's Service is untouched and reports nothing.
		ts, ss, err := superOf(ctx, t1, "fixed")
		if err != nil || ts.Spec.Ports[0].NodePort != 31001 || ss.Spec.Ports[0].NodePort != 31001 ||
			meta.FindStatusCondition(ts.Status.Conditions, service.ConditionSynced) != nil {
			t.Errorf("tenant-1 fixed: %v, tenant %+v", err, ts)
		}
		// Another port for tenant 2's Service: synced with it.
		itest.Eventually(t, 30*time.Second, "tenant-2 fixed moved to 31002", func(ctx context.Context) error {
			cur, err := t2.Client.CoreV1().Services("web").Get(ctx, "fixed", metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.Ports[0].NodePort = 31002
			_, err = t2.Client.CoreV1().Services("web").Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		itest.Eventually(t, time.Minute, "tenant-2 fixed in the super cluster at 31002, condition True", func(ctx context.Context) error {
			ts, ss, err := superOf(ctx, t2, "fixed")
			if err != nil {
				return err
			}
			if ss.Spec.Ports[0].NodePort != 31002 {
				return itest.Errorf("super nodePort %d", ss.Spec.Ports[0].NodePort)
			}
			if c := meta.FindStatusCondition(ts.Status.Conditions, service.ConditionSynced); c == nil || c.Status != metav1.ConditionTrue {
				return itest.Errorf("condition %+v", c)
			}
			return nil
		})
	})

	t.Run("allocated nodePort taken in the super cluster: reallocated and shown in the tenant", func(t *testing.T) {
		itest.Eventually(t, time.Minute, "tenant-2 auto agrees with its super copy", func(ctx context.Context) error {
			ts, ss, err := superOf(ctx, t2, "auto")
			if err != nil {
				return err
			}
			if ss.Spec.Ports[0].NodePort == autoPort {
				return itest.Errorf("super copy has the occupied port %d", autoPort)
			}
			if ts.Spec.Ports[0].NodePort != ss.Spec.Ports[0].NodePort {
				return itest.Errorf("tenant nodePort %d, super %d", ts.Spec.Ports[0].NodePort, ss.Spec.Ports[0].NodePort)
			}
			return nil
		})
		live, err := t2.Client.CoreV1().Services("web").Get(ctx, "auto", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ex := service.ExplicitFields(live); len(ex.NodePorts) != 0 {
			t.Errorf("the syncer's write-back counts as the tenant's: %+v", ex)
		}
		if err := oneEvent(ctx, t2.Client, "auto", service.ReasonNodePortUnavailable); err == nil || meta.FindStatusCondition(live.Status.Conditions, service.ConditionSynced) != nil {
			t.Errorf("a reallocated node port was reported: %v %+v", err, live.Status.Conditions)
		}
	})

	t.Run("LoadBalancer with externalTrafficPolicy Local: health-check node port", func(t *testing.T) {
		itest.Created(t)(t1.Client.CoreV1().Services("web").Create(ctx, nodePortService("lb", 0, lbLocal), metav1.CreateOptions{}))
		itest.Eventually(t, time.Minute, "tenant-1 lb agrees with its super copy", func(ctx context.Context) error {
			ts, ss, err := superOf(ctx, t1, "lb")
			if err != nil {
				return err
			}
			if ts.Spec.HealthCheckNodePort == 0 || ts.Spec.HealthCheckNodePort != ss.Spec.HealthCheckNodePort ||
				ts.Spec.Ports[0].NodePort != ss.Spec.Ports[0].NodePort || ts.Spec.ClusterIP != ss.Spec.ClusterIP {
				return itest.Errorf("tenant hcnp %d nodePort %d ip %s, super %d %d %s", ts.Spec.HealthCheckNodePort, ts.Spec.Ports[0].NodePort,
					ts.Spec.ClusterIP, ss.Spec.HealthCheckNodePort, ss.Spec.Ports[0].NodePort, ss.Spec.ClusterIP)
			}
			return nil
		})
		// Tenant 2's was taken in the super cluster: the copy has another one, which cannot
		// change in the tenant; the tenant is told.
		itest.WaitEvent(t, t2.Client, "web", "lb", service.ReasonHealthCheckNodePortMismatch, fmt.Sprintf("(%d was taken there)", hcnp2))
		itest.Eventually(t, time.Minute, "tenant-2 lb condition", func(ctx context.Context) error {
			if err := wantCondition(ctx, t2.Client, "lb", service.ReasonHealthCheckNodePortMismatch); err != nil {
				return err
			}
			ts, ss, err := superOf(ctx, t2, "lb")
			if err != nil {
				return err
			}
			if ss.Spec.HealthCheckNodePort == hcnp2 || ts.Spec.HealthCheckNodePort != hcnp2 || ts.Spec.Ports[0].NodePort != ss.Spec.Ports[0].NodePort {
				return itest.Errorf("tenant hcnp %d nodePort %d, super %d %d", ts.Spec.HealthCheckNodePort, ts.Spec.Ports[0].NodePort,
					ss.Spec.HealthCheckNodePort, ss.Spec.Ports[0].NodePort)
			}
			return nil
		})
	})
}

// wantCondition checks that tenant Service web/name has ConditionSynced=False with reason.
func wantCondition(ctx context.Context, c kubernetes.Interface, name, reason string) error {
	s, err := c.CoreV1().Services("web").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cond := meta.FindStatusCondition(s.Status.Conditions, service.ConditionSynced)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != reason {
		return itest.Errorf("condition %+v, want False %s", cond, reason)
	}
	return nil
}

// oneEvent checks that tenant Service web/name has exactly one Event with reason, seen once.
func oneEvent(ctx context.Context, c kubernetes.Interface, name, reason string) error {
	evs, err := c.CoreV1().Events("web").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return err
	}
	var n int32
	for _, e := range evs.Items {
		if e.Reason == reason {
			n += max(e.Count, 1)
		}
	}
	if n != 1 {
		return fmt.Errorf("%d %s Events on Service %s, want 1", n, reason, name)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
