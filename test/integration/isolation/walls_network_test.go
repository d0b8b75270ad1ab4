package isolation

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// networkWalls returns the attacks on Service addresses, Endpoints and EndpointSlices.
func (s *suite) networkWalls() []attackCase {
	return []attackCase{
		{"endpoints-keep-address-when-tenant-webhook-refuses-pod-writes", s.attackStaleAddressWebhook},
		{"endpoints-keep-address-of-deleted-pod", s.attackStaleAddressDeleted},
		{"endpoints-keep-address-after-pod-ip-moves", s.attackStaleAddressMoved},
		{"service-cidr-takes-shared-super-addresses", s.attackSharedClusterIPs},
		{"service-externalIPs-dropped-visibly", s.attackExternalIPs},
	}
}

// ---- stale endpoint addresses ----

// aPodIPs returns the IPs of tenant A's current super Pods (in any of A's super namespaces,
// not finished).
func (s *suite) aPodIPs(ctx context.Context) (map[string]string, error) {
	pods, err := s.super.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + s.aUID})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, ip := range p.Status.PodIPs {
			out[ip.IP] = p.Namespace + "/" + p.Name
		}
		if p.Status.PodIP != "" {
			out[p.Status.PodIP] = p.Namespace + "/" + p.Name
		}
	}
	return out, nil
}

// foreignAddresses returns, for A's Service name, the addresses of its super Endpoints and
// EndpointSlices that are not the IP of a current super Pod of A (the invariant: none).
func (s *suite) foreignAddresses(ctx context.Context, name string) ([]string, error) {
	addrs, err := s.superAddresses(ctx, name)
	if err != nil {
		return nil, err
	}
	own, err := s.aPodIPs(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for ip, where := range addrs {
		if _, ok := own[ip]; !ok {
			out = append(out, ip+" in "+where)
		}
	}
	sort.Strings(out)
	return out, nil
}

// endpointsPod creates, in A's namespace aNS, a Pod name and a selector-less Service svc
// whose Endpoints name the Pod's super IP, and waits until A's super Endpoints and
// EndpointSlice of svc list that IP.
func (s *suite) endpointsPod(t *testing.T, name, svc string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, basePod(name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ip string
	itest.Eventually(t, 2*time.Minute, "A's Pod "+name+" running with an IP in the super cluster and in A", func(ctx context.Context) error {
		sp, err := s.super.CoreV1().Pods(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sp.Status.Phase != corev1.PodRunning || sp.Status.PodIP == "" {
			return itest.Errorf("super Pod phase %s IP %q", sp.Status.Phase, sp.Status.PodIP)
		}
		tp, err := s.a.Client.CoreV1().Pods(aNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if tp.Status.PodIP != sp.Status.PodIP {
			return itest.Errorf("tenant Pod IP %q, super %q", tp.Status.PodIP, sp.Status.PodIP)
		}
		ip = sp.Status.PodIP
		return nil
	})
	if _, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, selectorless(svc, 80), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.a.Client.CoreV1().Endpoints(aNS).Create(ctx, &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: svc},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: ip}},
			Ports:     []corev1.EndpointPort{{Name: "p", Port: 80, Protocol: corev1.ProtocolTCP}},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, maxWait, "A's super Endpoints and EndpointSlice of "+svc+" list "+ip, func(ctx context.Context) error {
		ep, err := s.super.CoreV1().Endpoints(s.aSuperNS).Get(ctx, svc, metav1.GetOptions{})
		if err != nil {
			return itest.Errorf("super Endpoints: %v (Events: %s)", err, eventSummary(ctx, s.a.Client, svc))
		}
		inEndpoints := false
		for _, ss := range ep.Subsets {
			for _, a := range ss.Addresses {
				inEndpoints = inEndpoints || a.IP == ip
			}
		}
		sl, err := s.super.DiscoveryV1().EndpointSlices(s.aSuperNS).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
		if err != nil {
			return err
		}
		inSlice := false
		for _, sli := range sl.Items {
			for _, e := range sli.Endpoints {
				inSlice = inSlice || slices.Contains(e.Addresses, ip)
			}
		}
		if !inEndpoints || !inSlice {
			return itest.Errorf("%s in super Endpoints: %v, in a super EndpointSlice: %v", ip, inEndpoints, inSlice)
		}
		return nil
	})
}

// staleAddressAttack checks the invariant "an address in A's super Endpoints and
// EndpointSlices is always the IP of a current Pod of A" around trigger: before it the Pod's
// address is listed (endpointsPod); after it, within maxWait, no address of Service svc may be
// anything but A's current Pod IPs, the Endpoints get the endpointAddress refusal signal
// (PolicyDenied Event and a rise of the counter), and the invariant keeps holding for
// quietWindow. Nothing of B and nothing outside A's super namespaces changes.
func (s *suite) staleAddressAttack(t *testing.T, svc string, trigger func(ctx context.Context) error) {
	t.Helper()
	ctx := context.Background()
	before := s.snapshot(t)
	defer s.compare(t, before)
	c0 := denials(s.a.Name, []string{"Endpoints", "EndpointSlice"}, []string{"endpointAddress"})
	if err := trigger(ctx); err != nil {
		t.Fatalf("trigger: %v", err)
	}
	deadline := time.Now().Add(maxWait)
	for {
		foreign, err := s.foreignAddresses(ctx, svc)
		if err == nil && len(foreign) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("ATTACK ESCAPED (%s): %s after the trigger, A's Service %s still routes to addresses that are no Pod of A: %v (err %v; Endpoints Events: %s)",
				strings.TrimPrefix(t.Name(), "TestIsolation/"), maxWait, svc, foreign, err, eventSummary(ctx, s.a.Client, svc))
			return
		}
		time.Sleep(poll)
	}
	itest.Eventually(t, maxWait, "the stale address of "+svc+" is reported (PolicyDenied endpointAddress and the counter)", func(ctx context.Context) error {
		evs, _, err := deniedEvents(ctx, s.a.Client, "Endpoints", svc, []string{"endpointAddress"})
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return itest.Errorf("no PolicyDenied Event on Endpoints %s (its Events: %s)", svc, eventSummary(ctx, s.a.Client, svc))
		}
		if c := denials(s.a.Name, []string{"Endpoints", "EndpointSlice"}, []string{"endpointAddress"}); c <= c0 {
			return itest.Errorf("%s{rule=endpointAddress} did not rise (%v)", denialsMetric, c)
		}
		return nil
	})
	itest.Consistently(t, quietWindow, "no address of A's Service "+svc+" outside A's Pods", func(ctx context.Context) error {
		foreign, err := s.foreignAddresses(ctx, svc)
		if err != nil {
			return nil
		}
		if len(foreign) > 0 {
			return fmt.Errorf("ATTACK ESCAPED: %v", foreign)
		}
		return nil
	})
}

// attackStaleAddressWebhook: A's own admission webhook refuses the syncer's writes to A's
// Pods (the final delete with grace period 0 and pods/status updates), so A's deleted Pod
// stays in A's apiserver with its IP after its super Pod is gone. A's super Endpoints and
// EndpointSlice must lose the address all the same: the super cluster gives it to the next
// Pod, perhaps another tenant's.
func (s *suite) attackStaleAddressWebhook(t *testing.T) {
	const pod, svc = "ep-webhook-pod", "ep-webhook"
	s.endpointsPod(t, pod, svc)
	w := startRefusingWebhook(t)
	w.install(t, s, aNS, pod)
	s.staleAddressAttack(t, svc, func(ctx context.Context) error {
		return s.a.Client.CoreV1().Pods(aNS).Delete(ctx, pod, metav1.DeleteOptions{})
	})
	if n := w.refusedCount(); n == 0 {
		t.Errorf("the webhook refused none of the syncer's writes (answered %v): the attack did not take place", w.answered())
	}
}

// attackStaleAddressDeleted: A's Pod named by its Endpoints is deleted (no webhook).
func (s *suite) attackStaleAddressDeleted(t *testing.T) {
	const pod, svc = "ep-deleted-pod", "ep-deleted"
	s.endpointsPod(t, pod, svc)
	s.staleAddressAttack(t, svc, func(ctx context.Context) error {
		return s.a.Client.CoreV1().Pods(aNS).Delete(ctx, pod, metav1.DeleteOptions{})
	})
}

// movedIP is the address A's super Pod moves to in attackStaleAddressMoved: in kwok-node-0's
// Pod range, far above what kwok hands out in this suite.
const movedIP = "10.244.0.250"

// attackStaleAddressMoved: the super cluster gives A's Pod named by its Endpoints another IP
// (its status is rewritten, as a network plugin that re-addresses a Pod sandbox does); the old
// IP goes back to the pool.
func (s *suite) attackStaleAddressMoved(t *testing.T) {
	const pod, svc = "ep-moved-pod", "ep-moved"
	s.endpointsPod(t, pod, svc)
	s.staleAddressAttack(t, svc, func(ctx context.Context) error {
		sp, err := s.super.CoreV1().Pods(s.aSuperNS).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		sp.Status.PodIP, sp.Status.PodIPs = movedIP, []corev1.PodIP{{IP: movedIP}}
		_, err = s.super.CoreV1().Pods(s.aSuperNS).UpdateStatus(ctx, sp, metav1.UpdateOptions{})
		return err
	})
	// The tenant sees the new address (the upward path copied it).
	itest.Eventually(t, maxWait, "A's Pod shows its new IP", func(ctx context.Context) error {
		tp, err := s.a.Client.CoreV1().Pods(aNS).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if tp.Status.PodIP != movedIP {
			return itest.Errorf("tenant Pod IP %q", tp.Status.PodIP)
		}
		return nil
	})
}

// refusingWebhook is a validating admission webhook served over HTTPS on 127.0.0.1 (the
// tenant apiservers run on this machine). It refuses, as a hostile tenant's own webhook can,
// every UPDATE of pods/status and every DELETE of a Pod with grace period 0 (the syncer's
// writes after a super Pod is gone), and allows everything else.
type refusingWebhook struct {
	server  *itest.WebhookServer
	counts  itest.AdmissionCounts
	refused atomic.Int64
}

// startRefusingWebhook serves the webhook (itest.StartWebhookServer) until the test ends.
func startRefusingWebhook(t *testing.T) *refusingWebhook {
	t.Helper()
	w := &refusingWebhook{}
	srv, err := itest.StartWebhookServer(itest.AdmissionHandler(w.serve))
	if err != nil {
		t.Fatal(err)
	}
	w.server = srv
	t.Cleanup(srv.Close)
	return w
}

func (w *refusingWebhook) serve(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	refuse := req.SubResource == "status" && req.Operation == admissionv1.Update
	if req.Operation == admissionv1.Delete && req.SubResource == "" {
		var opts metav1.DeleteOptions
		if len(req.Options.Raw) > 0 && json.Unmarshal(req.Options.Raw, &opts) == nil &&
			opts.GracePeriodSeconds != nil && *opts.GracePeriodSeconds == 0 {
			refuse = true
		}
	}
	w.counts.Add(req)
	if !refuse {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	w.refused.Add(1)
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{Code: http.StatusForbidden, Message: "tenant webhook: the syncer may not finish this Pod"}}
}

func (w *refusingWebhook) answered() map[string]int { return w.counts.Snapshot() }

func (w *refusingWebhook) refusedCount() int { return int(w.refused.Load()) }

// refusingWebhookName is the ValidatingWebhookConfiguration install creates in tenant A.
const refusingWebhookName = "refuse-syncer-pod-writes"

// install creates, in tenant A, a ValidatingWebhookConfiguration sending every DELETE of pods
// and UPDATE of pods/status in namespace ns to w (failurePolicy Fail), waits until A's
// apiserver calls it (a dry-run delete of the existing Pod ns/probe), and removes it when the test ends (the stuck Pods are then finished).
func (w *refusingWebhook) install(t *testing.T, s *suite, ns, probe string) {
	t.Helper()
	ctx := context.Background()
	cfg := w.server.Configuration(refusingWebhookName, "refuse.isolation.vcsyncer.io", ns, 5,
		itest.WebhookRule(admissionregistrationv1.Delete, "pods"), itest.WebhookRule(admissionregistrationv1.Update, "pods/status"))
	if _, err := s.a.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.a.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), refusingWebhookName, metav1.DeleteOptions{})
	})
	// The apiserver picks the configuration up from its informer: probe with a dry-run delete
	// of Pod probe (admission runs, nothing is deleted) until w is called.
	itest.Eventually(t, time.Minute, "A's apiserver calls the webhook", func(ctx context.Context) error {
		_ = s.a.Client.CoreV1().Pods(ns).Delete(ctx, probe, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		if len(w.answered()) == 0 {
			return itest.Errorf("not called yet")
		}
		return nil
	})
}

// ---- Service addresses ----

// sharedRange is the Service range A adds to its own apiserver (a ServiceCIDR object): outside
// its Tenant's spec.serviceCIDRs, so the super cluster allocates its Services' addresses from
// its shared range.
const sharedRange = "10.60.0.0/24"

// aSharedServices counts A's super Services holding a ClusterIP outside A's own Service range
// (the Tenant's spec.serviceCIDRs, A's apiserver's --service-cluster-ip-range).
func (s *suite) aSharedServices(ctx context.Context) (int, error) {
	_, own, err := net.ParseCIDR(s.a.ServiceCIDR)
	if err != nil {
		return 0, err
	}
	svcs, err := s.super.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, sv := range svcs.Items {
		if !s.isANS(sv.Namespace, nil) || sv.Spec.ClusterIP == "" || sv.Spec.ClusterIP == corev1.ClusterIPNone {
			continue
		}
		if ip := net.ParseIP(sv.Spec.ClusterIP); ip != nil && !own.Contains(ip) {
			n++
		}
	}
	return n, nil
}

// attackSharedClusterIPs: A adds a Service range of its own to its apiserver (a ServiceCIDR)
// and creates Services there: each super copy takes an address of the super cluster's shared
// range. A's policy bounds how many (services.maxSharedClusterIPs; set here to the number A
// holds now plus 2): of 5 such Services, at most 2 get a super copy, and the others are
// refused (rule sharedClusterIP) with the condition tenancy.vcsyncer.io/Synced=False.
func (s *suite) attackSharedClusterIPs(t *testing.T) {
	ctx := context.Background()
	if _, err := s.a.Client.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-extra"},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{sharedRange}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, maxWait, "A's ServiceCIDR ready", func(ctx context.Context) error {
		sc, err := s.a.Client.NetworkingV1().ServiceCIDRs().Get(ctx, "tenant-extra", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady) {
			return itest.Errorf("conditions %+v", sc.Status.Conditions)
		}
		return nil
	})
	limit := int32(s.settledSharedServices(t) + 2)
	s.withSharedIPLimit(t, "tenant-a-shared-ips", limit)
	var names []string
	for i := range 5 {
		names = append(names, fmt.Sprintf("shared-%d", i))
	}
	// Registered after withSharedIPLimit, so it runs before the limit is lifted: deleted while
	// the limit holds, the refused Services never get a super copy, and the next subtest
	// counts A's shared addresses without them.
	s.deleteServicesOnCleanup(t, names...)
	s.run(t, attack{
		kind: "Service", ns: aNS, names: names, anyOf: true, rules: []string{"sharedClusterIP"},
		create: func(ctx context.Context) error {
			for i, n := range names {
				svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: corev1.ServiceSpec{
					ClusterIP: fmt.Sprintf("10.60.0.%d", 10+i),
					Selector:  map[string]string{"app": n}, Ports: []corev1.ServicePort{{Port: 80}}}}
				if _, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
					return err
				}
			}
			return nil
		},
		escaped: func(ctx context.Context) error {
			n, err := s.aSharedServices(ctx)
			if err != nil {
				return nil
			}
			if n > int(limit) {
				return fmt.Errorf("A holds %d super Services with addresses of the shared range; its policy allows %d", n, limit)
			}
			return nil
		},
	})
	// Every refused Service carries the condition.
	itest.Eventually(t, maxWait, "refused Services have tenancy.vcsyncer.io/Synced=False reason PolicyDenied", func(ctx context.Context) error {
		var bad []string
		for _, n := range names {
			if _, err := s.super.CoreV1().Services(s.aSuperNS).Get(ctx, n, metav1.GetOptions{}); err == nil {
				continue
			}
			tsvc, err := s.a.Client.CoreV1().Services(aNS).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return err
			}
			c := meta.FindStatusCondition(tsvc.Status.Conditions, "tenancy.vcsyncer.io/Synced")
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reasonPolicyDenied {
				bad = append(bad, fmt.Sprintf("%s: %+v", n, c))
			}
		}
		if len(bad) > 0 {
			return itest.Errorf("%v", bad)
		}
		return nil
	})
}

// withSharedIPLimit gives tenant A a TenantPolicy named policyName whose only setting is
// services.maxSharedClusterIPs = limit, waits until A uses it, and on cleanup gives A its
// default policy back and deletes the TenantPolicy.
func (s *suite) withSharedIPLimit(t *testing.T, policyName string, limit int32) {
	t.Helper()
	ctx := context.Background()
	tp := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: tenancyv1alpha1.TenantPolicySpec{Services: &tenancyv1alpha1.ServicePolicy{MaxSharedClusterIPs: &limit}}}
	if err := s.c.Create(ctx, tp); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s.setPolicyName(t, s.a.Name, tp.Name)
	t.Cleanup(func() {
		s.setPolicyName(t, s.a.Name, "")
		_ = s.c.Delete(context.Background(), tp)
	})
	// The Tenant's PolicyValid condition names the policy in force; wait for it to name this one.
	s.waitPolicy(t, s.a.Name, tp.Name)
}

// deleteServicesOnCleanup deletes tenant A's Services names (in aNS) when t ends and waits
// until their super copies are gone.
func (s *suite) deleteServicesOnCleanup(t *testing.T, names ...string) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		for _, n := range names {
			if err := s.a.Client.CoreV1().Services(aNS).Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting A's Service %s: %v", n, err)
			}
		}
		itest.Eventually(t, maxWait, "the super copies of A's Services "+strings.Join(names, ", ")+" gone", func(ctx context.Context) error {
			for _, n := range names {
				if _, err := s.super.CoreV1().Services(s.aSuperNS).Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return itest.Errorf("%s still there (%v)", n, err)
				}
			}
			return nil
		})
	})
}

// settledSharedServices waits until every super Service of A with an address of the shared
// range has a tenant Service that is not being deleted (an earlier subtest's Services, still
// being deleted, would count against a limit set from this count), and returns their number.
func (s *suite) settledSharedServices(t *testing.T) int {
	t.Helper()
	n := 0
	itest.Eventually(t, maxWait, "A's super Services with shared addresses all belong to live tenant Services", func(ctx context.Context) error {
		_, own, err := net.ParseCIDR(s.a.ServiceCIDR)
		if err != nil {
			return err
		}
		svcs, err := s.super.CoreV1().Services("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		n = 0
		for _, sv := range svcs.Items {
			if !s.isANS(sv.Namespace, nil) || sv.Spec.ClusterIP == "" || sv.Spec.ClusterIP == corev1.ClusterIPNone {
				continue
			}
			if ip := net.ParseIP(sv.Spec.ClusterIP); ip == nil || own.Contains(ip) {
				continue
			}
			if sv.DeletionTimestamp != nil {
				return itest.Errorf("super Service %s/%s is being deleted", sv.Namespace, sv.Name)
			}
			tns, tname := sv.Annotations[conversion.AnnotationNamespace], sv.Annotations[conversion.AnnotationName]
			tsvc, err := s.a.Client.CoreV1().Services(tns).Get(ctx, tname, metav1.GetOptions{})
			if apierrors.IsNotFound(err) || (err == nil && tsvc.DeletionTimestamp != nil) {
				return itest.Errorf("super Service %s/%s: tenant Service %s/%s is gone or being deleted", sv.Namespace, sv.Name, tns, tname)
			}
			if err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n
}

// waitPolicy waits until Tenant name reports PolicyValid=True with a message naming
// TenantPolicy policyName.
func (s *suite) waitPolicy(t *testing.T, name, policyName string) {
	t.Helper()
	itest.Eventually(t, maxWait, "Tenant "+name+" uses TenantPolicy "+policyName, func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := s.c.Get(ctx, clientKey(name), tn); err != nil {
			return err
		}
		for _, c := range tn.Status.Conditions {
			if c.Type == tenancyv1alpha1.ConditionPolicyValid && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, policyName) {
				return nil
			}
		}
		return itest.Errorf("conditions %+v", tn.Status.Conditions)
	})
}

// attackExternalIPs: a Service with spec.externalIPs (CVE-2020-8554) is synced without them;
// the drop is visible: a PolicyDenied Event (rule externalIPs), the counter, and the condition
// tenancy.vcsyncer.io/Synced=False reason PolicyDenied on the Service.
func (s *suite) attackExternalIPs(t *testing.T) {
	const name = "external-ips"
	ip := s.nodeIP(t, bNode)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
		ExternalIPs: []string{ip}, Selector: map[string]string{"app": "x"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	s.serviceAttack(t, svc, []string{"externalIPs"}, func(ss *corev1.Service) error {
		if len(ss.Spec.ExternalIPs) > 0 {
			return fmt.Errorf("has externalIPs %v", ss.Spec.ExternalIPs)
		}
		return nil
	})
	itest.Eventually(t, maxWait, "Service "+name+" has tenancy.vcsyncer.io/Synced=False reason PolicyDenied", func(ctx context.Context) error {
		tsvc, err := s.a.Client.CoreV1().Services(aNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(tsvc.Status.Conditions, "tenancy.vcsyncer.io/Synced")
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reasonPolicyDenied || !slices.ContainsFunc([]string{"externalIPs"}, func(r string) bool { return strings.HasPrefix(c.Message, r+":") }) {
			return itest.Errorf("condition %+v", c)
		}
		return nil
	})
}

func clientKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }
