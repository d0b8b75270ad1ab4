package refusals

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const (
	ns               = "app"
	quotaPods        = 2 // the tenant's policy lets this many Pods run
	conditionSynced  = "tenancy.vcsyncer.io/Synced"
	reasonQuota      = "QuotaExceeded"
	reasonPolicy     = "PolicyDenied"
	syncerComponent  = "vc-syncer"
	maxWait          = 2 * time.Minute
	fakeNameserverIP = "10.255.255.10" // the nameserver the resolver is given, answered by the local CoreDNS
)

// TestRefusals: one tenant under a policy whose quota lets quotaPods Pods run, with a real
// CoreDNS serving its DNS, and the syncer in-process.
func TestRefusals(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 1)
	ctx := context.Background()
	tc := env.Tenants[0]
	dnsServer, err := tc.StartCoreDNS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := itest.StartSyncer(t, env.Super.RESTConfig, nil)
	itest.DefaultPolicy(t, c, tenancyv1alpha1.TenantPolicySpec{
		Limits: &tenancyv1alpha1.LimitsPolicy{Quota: corev1.ResourceList{
			corev1.ResourcePods: *resource.NewQuantity(quotaPods, resource.DecimalSI)}},
	})
	if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
		t.Fatal(err)
	}
	itest.WaitRunning(t, c, tc.Name)
	uid := itest.TenantUID(t, c, tc.Name)
	superNS := conversion.SuperNamespace(tc.Name, uid, ns)
	itest.MustCreateNS(t, tc.Client, ns)
	s := &suite{tenant: tc.Client, super: env.Super.Client, superNS: superNS, tenantName: tc.Name}
	resolver, err := localcluster.NewPodResolver(&corev1.PodDNSConfig{Nameservers: []string{fakeNameserverIP},
		Searches: []string{ns + ".svc.cluster.local", "svc.cluster.local", "cluster.local"},
		Options:  []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}}},
		map[string]string{fakeNameserverIP: dnsServer.Addr})
	if err != nil {
		t.Fatal(err)
	}
	s.resolver = resolver

	t.Run("quota-refused-pod-event-and-condition-agree", s.quotaRefusedPod)
	t.Run("owner-of-refused-pods-gets-one-event", s.ownerGetsOneEvent)
	t.Run("refused-service-condition-until-synced", s.refusedService)
	t.Run("refused-service-has-no-dns-answer", s.refusedServiceDNS)
}

type suite struct {
	tenant, super kubernetes.Interface
	superNS       string
	tenantName    string
	resolver      *localcluster.PodResolver
}

const deployment = "web"

// quotaRefusedPod: a Deployment of quotaPods+2 replicas; quotaPods run, the others are refused
// by the quota. A refused Pod's PodScheduled=False condition and its Warning Event have the
// same reason (QuotaExceeded), and the message names what is used and what the Pod asked for.
func (s *suite) quotaRefusedPod(t *testing.T) {
	ctx := t.Context()
	itest.Created(t)(s.tenant.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deployment},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](quotaPods + 2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": deployment}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": deployment}},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/web:1"}}}}},
	}, metav1.CreateOptions{}))
	var refused []corev1.Pod
	itest.Eventually(t, maxWait, fmt.Sprintf("%d Pods refused by the quota", 2), func(ctx context.Context) error {
		pods, err := s.tenant.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + deployment})
		if err != nil {
			return err
		}
		refused = nil
		var other []string
		for _, p := range pods.Items {
			if cond := scheduled(&p); cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason == reasonQuota {
				refused = append(refused, p)
			} else {
				other = append(other, fmt.Sprintf("%s %+v", p.Name, cond))
			}
		}
		if len(refused) < 2 {
			return fmt.Errorf("%d refused with PodScheduled=False reason %s; others: %v", len(refused), reasonQuota, other)
		}
		return nil
	})
	for _, p := range refused {
		cond := scheduled(&p)
		for _, want := range []string{"used", "request"} {
			if !strings.Contains(cond.Message, want) {
				t.Errorf("Pod %s: condition message %q does not say what is %s", p.Name, cond.Message, want)
			}
		}
		itest.Eventually(t, time.Minute, "Pod "+p.Name+": a Warning Event with the condition's reason", func(ctx context.Context) error {
			evs, err := events(ctx, s.tenant, "Pod", p.Name)
			if err != nil {
				return err
			}
			var reasons []string
			for _, e := range evs {
				if e.Source.Component != syncerComponent || e.Type != corev1.EventTypeWarning {
					continue
				}
				if e.Reason == cond.Reason {
					return nil
				}
				reasons = append(reasons, e.Reason+": "+e.Message)
			}
			return fmt.Errorf("the syncer's Warning Events have reasons %q, want %s (the condition's)", reasons, cond.Reason)
		})
	}
}

// ownerGetsOneEvent: the ReplicaSet of the Deployment whose Pods the tenant's budget refuses
// has exactly one Warning Event from the syncer, reason QuotaExceeded, after 4 of its Pods are
// refused (each refusal counted once), and still one after 2 more are refused (scaled up).
func (s *suite) ownerGetsOneEvent(t *testing.T) {
	ctx := t.Context()
	rs := s.replicaSet(t)
	d0 := budgetDenials(s.tenantName)
	s.scaleAndWaitRefused(t, quotaPods+4, 4)
	itest.Eventually(t, maxWait, "the 2 Pods of the scale-up refused", func(context.Context) error {
		if d := budgetDenials(s.tenantName) - d0; d < 2 {
			return fmt.Errorf("%v budget refusals since the scale-up", d)
		}
		return nil
	})
	itest.Eventually(t, time.Minute, "ReplicaSet "+rs.Name+": one Warning Event "+reasonQuota, func(ctx context.Context) error {
		n, summary, err := s.ownerEvents(ctx, rs.Name)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%d Warning Events from the syncer with reason %s (%s), want 1", n, reasonQuota, summary)
		}
		return nil
	})
	// More refused Pods: still one (count 1).
	d1 := budgetDenials(s.tenantName)
	s.scaleAndWaitRefused(t, quotaPods+6, 6)
	itest.Eventually(t, maxWait, "2 more budget refusals", func(context.Context) error {
		if d := budgetDenials(s.tenantName) - d1; d < 2 {
			return fmt.Errorf("%v budget refusals", d)
		}
		return nil
	})
	if n, summary, err := s.ownerEvents(ctx, rs.Name); err != nil || n != 1 {
		t.Errorf("ReplicaSet %s: %d Warning %s Events from the syncer after more refused Pods (%s, err %v), want 1", rs.Name, n, reasonQuota, summary, err)
	}
}

// scaleAndWaitRefused scales the Deployment to replicas and waits until refused of its Pods
// show PodScheduled=False with reason QuotaExceeded.
func (s *suite) scaleAndWaitRefused(t *testing.T, replicas int32, refused int) {
	t.Helper()
	// The Deployment controller writes the Deployment too: read and write again on a conflict.
	itest.Eventually(t, time.Minute, fmt.Sprintf("Deployment %s scaled to %d", deployment, replicas), func(ctx context.Context) error {
		scale, err := s.tenant.AppsV1().Deployments(ns).GetScale(ctx, deployment, metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec.Replicas = replicas
		_, err = s.tenant.AppsV1().Deployments(ns).UpdateScale(ctx, deployment, scale, metav1.UpdateOptions{})
		return err
	})
	itest.Eventually(t, maxWait, fmt.Sprintf("%d refused Pods", refused), func(ctx context.Context) error {
		pods, err := s.tenant.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + deployment})
		if err != nil {
			return err
		}
		n := 0
		for _, p := range pods.Items {
			if cond := scheduled(&p); cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason == reasonQuota {
				n++
			}
		}
		if n < refused {
			return fmt.Errorf("%d refused Pods, want %d", n, refused)
		}
		return nil
	})
}

// replicaSet returns the Deployment's ReplicaSet.
func (s *suite) replicaSet(t *testing.T) *appsv1.ReplicaSet {
	t.Helper()
	var rs *appsv1.ReplicaSet
	itest.Eventually(t, time.Minute, "the Deployment's ReplicaSet", func(ctx context.Context) error {
		l, err := s.tenant.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + deployment})
		if err != nil {
			return err
		}
		if len(l.Items) != 1 {
			return fmt.Errorf("%d ReplicaSets", len(l.Items))
		}
		rs = &l.Items[0]
		return nil
	})
	return rs
}

// ownerEvents counts the syncer's Warning Events with reason QuotaExceeded on ReplicaSet
// name (their counts summed), with a summary of all its Events.
func (s *suite) ownerEvents(ctx context.Context, name string) (int32, string, error) {
	evs, err := events(ctx, s.tenant, "ReplicaSet", name)
	if err != nil {
		return 0, "", err
	}
	var n int32
	var all []string
	for _, e := range evs {
		all = append(all, fmt.Sprintf("%s %s %s %q ×%d", e.Source.Component, e.Type, e.Reason, e.Message, e.Count))
		if e.Source.Component == syncerComponent && e.Type == corev1.EventTypeWarning && e.Reason == reasonQuota {
			n += max(e.Count, 1)
		}
	}
	return n, strings.Join(all, "; "), nil
}

const service = "front"

// refusedService: a NodePort Service (refused by the built-in Service types) gets condition
// Synced=False with reason PolicyDenied, the reason of its Warning Event; changed to
// ClusterIP, it gets its super copy and the condition turns True.
func (s *suite) refusedService(t *testing.T) {
	ctx := t.Context()
	itest.Created(t)(s.tenant.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: service},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": deployment},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{}))
	var cond *metav1.Condition
	itest.Eventually(t, time.Minute, "Service "+service+": Synced=False reason "+reasonPolicy, func(ctx context.Context) error {
		svc, err := s.tenant.CoreV1().Services(ns).Get(ctx, service, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cond = meta.FindStatusCondition(svc.Status.Conditions, conditionSynced)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != reasonPolicy || !strings.HasPrefix(cond.Message, "serviceType: ") {
			return fmt.Errorf("condition %+v", cond)
		}
		return nil
	})
	itest.WaitEvent(t, s.tenant, ns, service, cond.Reason, "serviceType: ")
	if _, err := s.super.CoreV1().Services(s.superNS).Get(ctx, service, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("refused Service has a super copy (err %v)", err)
	}
	s.toClusterIP(t, service)
	itest.Eventually(t, time.Minute, "Service "+service+": a super copy and Synced=True", func(ctx context.Context) error {
		if _, err := s.super.CoreV1().Services(s.superNS).Get(ctx, service, metav1.GetOptions{}); err != nil {
			return err
		}
		svc, err := s.tenant.CoreV1().Services(ns).Get(ctx, service, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := meta.FindStatusCondition(svc.Status.Conditions, conditionSynced); c != nil && c.Status != metav1.ConditionTrue {
			return fmt.Errorf("condition %+v left after the refusal went away", c)
		}
		if v, ok := svc.Labels[localcluster.RefusedLabel]; ok {
			return fmt.Errorf("label %s=%s left after the refusal went away", localcluster.RefusedLabel, v)
		}
		return nil
	})
}

// refusedServiceDNS: the tenant DNS answers a ClusterIP Service's name, and not the name of a
// Service the policy refuses (a NodePort one), which has a ClusterIP in the tenant and nothing
// behind it; once allowed (changed to ClusterIP) its name answers.
func (s *suite) refusedServiceDNS(t *testing.T) {
	ctx := t.Context()
	const name = "refused-dns"
	itest.Created(t)(s.tenant.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": deployment},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{}))
	itest.Eventually(t, time.Minute, "Service "+name+" refused (Synced=False)", func(ctx context.Context) error {
		svc, err := s.tenant.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := meta.FindStatusCondition(svc.Status.Conditions, conditionSynced); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	// The synced Service of the previous subtest answers: the DNS works.
	itest.Eventually(t, time.Minute, service+" resolves", func(ctx context.Context) error {
		_, ips, err := s.resolver.LookupA(ctx, service)
		if err != nil || len(ips) == 0 {
			return fmt.Errorf("%v %w", ips, err)
		}
		return nil
	})
	itest.Eventually(t, time.Minute, name+" has no DNS answer", func(ctx context.Context) error {
		fqdn, ips, err := s.resolver.LookupA(ctx, name)
		if !errors.Is(err, localcluster.ErrNameNotFound) {
			return fmt.Errorf("%s resolved to %v (as %s, err %w), want not found: it has no super copy", name, ips, fqdn, err)
		}
		return nil
	})
	s.toClusterIP(t, name)
	itest.Eventually(t, time.Minute, name+" resolves once synced", func(ctx context.Context) error {
		svc, err := s.tenant.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		_, ips, err := s.resolver.LookupA(ctx, name)
		if err != nil || !slices.Equal(ips, []string{svc.Spec.ClusterIP}) {
			return fmt.Errorf("%v (err %w), want [%s]", ips, err, svc.Spec.ClusterIP)
		}
		return nil
	})
}

// scheduled returns p's PodScheduled condition (nil: none).
func scheduled(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// events lists the Events in ns about the object kind/name.
func events(ctx context.Context, c kubernetes.Interface, kind, name string) ([]corev1.Event, error) {
	l, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",involvedObject.kind=" + kind})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// budgetDenials returns the tenant's Pod refusals by its budget (rule tenantQuota) counted so
// far: each refused Pod version once.
func budgetDenials(tenant string) float64 {
	return metrics.PolicyDenialCounts(tenant)[[2]string{"Pod", string(policy.RuleTenantQuota)}]
}

// toClusterIP changes tenant Service name to type ClusterIP (no node ports).
func (s *suite) toClusterIP(t *testing.T, name string) {
	t.Helper()
	itest.Eventually(t, time.Minute, "Service "+name+" changed to ClusterIP", func(ctx context.Context) error {
		svc, err := s.tenant.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		svc.Spec.Type = corev1.ServiceTypeClusterIP
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
		_, err = s.tenant.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{})
		return err
	})
}
