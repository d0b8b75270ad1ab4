package disruption_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// reasonSuperPodLost is the status reason the syncer gives a tenant Pod whose super copy was
// deleted outside every disruption path (pkg/resources/pod).
const reasonSuperPodLost = "SuperPodLost"

func TestDisruption(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 1)
	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) {
		o.OptInKinds = []string{"PodDisruptionBudget"}
	})
	tc := env.Tenants[0]
	if err := itest.AddTenant(t.Context(), c, itest.KubeconfigNS, tc, 1); err != nil {
		t.Fatal(err)
	}
	itest.WaitRunning(t, c, tc.Name)
	s := &suite{c: c, tenant: tc.Client, super: env.Super.Client, superNS: func(ns string) string {
		return conversion.SuperNamespace(tc.Name, itest.TenantUID(t, c, tc.Name), ns)
	}}
	t.Run("a drain stops at the tenant's budget (maxUnavailable 1 of 3)", s.drainStopsAtBudget)
	t.Run("a budget allowing no disruption refuses super evictions", s.blockingBudgetHolds)
	t.Run("an evicted super Pod is an eviction in the tenant", s.evictionIsEviction)
	t.Run("a plain super delete stays SuperPodLost", s.plainDeleteIsLoss)
	t.Run("a budget selecting on the syncer's labels gets no super copy", s.reservedSelectorRefused)
	// Last: it sets a TenantPolicy bound that would let the drains above through.
	t.Run("maxBlockingSeconds lets one eviction of a held drain through", s.boundLetsDrainThrough)
}

type suite struct {
	c             client.Client
	tenant, super kubernetes.Interface
	superNS       func(ns string) string
}

// deployment creates namespace ns with Deployment app of n replicas (kwok runs them Ready),
// and waits for n Ready tenant Pods.
func (s *suite) deployment(t *testing.T, ns, app string, n int32) {
	t.Helper()
	labels := map[string]string{"app": app}
	itest.Created(t)(s.tenant.AppsV1().Deployments(ns).Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}},
	}, metav1.CreateOptions{}))
	itest.Eventually(t, 2*time.Minute, fmt.Sprintf("%d Ready tenant Pods of %s/%s", n, ns, app), func(ctx context.Context) error {
		if got := len(s.readyPods(ctx, s.tenant, ns, app)); got != int(n) {
			return itest.Errorf("%d Ready", got)
		}
		return nil
	})
}

// budget creates tenant PodDisruptionBudget app over the Pods labelled app=app with
// maxUnavailable maxUnavailable and waits until the tenant's disruption controller allows
// allowed disruptions and the super copy, observed by the super disruption controller, allows
// the same.
func (s *suite) budget(t *testing.T, ns, app string, maxUnavailable, allowed int32) {
	t.Helper()
	mu := intstr.FromInt32(maxUnavailable)
	itest.Created(t)(s.tenant.PolicyV1().PodDisruptionBudgets(ns).Create(t.Context(), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &mu, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
	}, metav1.CreateOptions{}))
	for _, side := range []struct {
		name string
		cs   kubernetes.Interface
		ns   string
	}{{"tenant", s.tenant, ns}, {"super", s.super, s.superNS(ns)}} {
		itest.Eventually(t, 2*time.Minute, side.name+" PDB current", func(ctx context.Context) error {
			p, err := side.cs.PolicyV1().PodDisruptionBudgets(side.ns).Get(ctx, app, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.ObservedGeneration != p.Generation || p.Status.DisruptionsAllowed != allowed {
				return itest.Errorf("spec %+v status %+v", p.Spec, p.Status)
			}
			return nil
		})
	}
}

// readyPods returns the names of the Ready, not terminating Pods labelled app=app in ns.
func (s *suite) readyPods(ctx context.Context, cs kubernetes.Interface, ns, app string) []string {
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil && itest.PodReady(&p) {
			out = append(out, p.Name)
		}
	}
	return out
}

// evict asks the super cluster's eviction API to evict super Pod superNS/name, as a node drain
// does.
func (s *suite) evict(ctx context.Context, superNS, name string) error {
	return s.super.PolicyV1().Evictions(superNS).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: superNS}})
}

// cordon sets every super Node unschedulable (a drain's first step) until the test ends, so
// that an evicted Pod's replacement cannot become healthy again.
func (s *suite) cordon(t *testing.T, on bool) {
	t.Helper()
	nodes, err := s.super.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{}) // also from a Cleanup
	if err != nil {
		t.Fatal(err)
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": on}})
	for _, n := range nodes.Items {
		if _, err := s.super.CoreV1().Nodes().Patch(context.Background(), n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// drainStopsAtBudget: three Pods of a Deployment under maxUnavailable 1. A drain evicts one
// super Pod; the second eviction is refused (429) for as long as the first Pod is not back
// healthy (the Nodes are cordoned, so its replacement stays Pending), and goes through once
// it is. The namespace's quota of 3 Pod objects makes a tenant Pod left behind as a loss
// (instead of deleted, as an eviction deletes it) keep its replacement from being created.
func (s *suite) drainStopsAtBudget(t *testing.T) {
	const ns, app = "quorum", "quorum"
	itest.MustCreateNS(t, s.tenant, ns)
	itest.Created(t)(s.tenant.CoreV1().ResourceQuotas(ns).Create(t.Context(), &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/pods": resource.MustParse("3")}},
	}, metav1.CreateOptions{}))
	s.deployment(t, ns, app, 3)
	s.budget(t, ns, app, 1, 1)
	superNS := s.superNS(ns)
	s.cordon(t, true)
	t.Cleanup(func() { s.cordon(t, false) })
	victims := s.readyPods(t.Context(), s.super, superNS, app)
	if len(victims) != 3 {
		t.Fatalf("super Pods Ready: %v", victims)
	}
	itest.Eventually(t, 30*time.Second, "first eviction", func(ctx context.Context) error {
		return s.evict(ctx, superNS, victims[0])
	})
	// A drain retries refused evictions (kubectl drain every 5 s): none may go through while
	// only two Pods are healthy.
	end := time.Now().Add(20 * time.Second)
	for time.Now().Before(end) {
		for _, v := range victims[1:] {
			err := s.evict(t.Context(), superNS, v)
			if err == nil {
				t.Fatalf("ATTACK ESCAPED: super Pod %s evicted while the tenant's budget allows no more disruption (the first evicted Pod is not back); tenant Pods Ready: %v",
					v, s.readyPods(t.Context(), s.tenant, ns, app))
			}
			if !apierrors.IsTooManyRequests(err) {
				t.Fatalf("eviction of %s: %v, want 429 TooManyRequests", v, err)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The replacement runs once the Nodes are schedulable again: the drain goes on.
	s.cordon(t, false)
	itest.Eventually(t, 2*time.Minute, "second eviction once three Pods are healthy again", func(ctx context.Context) error {
		return s.evict(ctx, superNS, victims[1])
	})
}

// blockingBudgetHolds: a budget with maxUnavailable 0 refuses evictions in the super cluster
// as it does in the tenant.
func (s *suite) blockingBudgetHolds(t *testing.T) {
	const ns, app = "frozen", "frozen"
	superNS, victims := s.frozenPair(t, ns, app)
	end := time.Now().Add(10 * time.Second)
	for time.Now().Before(end) {
		err := s.evict(t.Context(), superNS, victims[0])
		if err == nil {
			t.Fatalf("ATTACK ESCAPED: super Pod %s evicted under a tenant budget with maxUnavailable 0", victims[0])
		}
		if !apierrors.IsTooManyRequests(err) {
			t.Fatalf("eviction: %v, want 429 TooManyRequests", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// boundLetsDrainThrough: with TenantPolicy disruptionBudgets.maxBlockingSeconds 10, a budget
// with maxUnavailable 0 refuses a drain's evictions at first (the Nodes cordoned), lets one
// through once it has allowed no disruption for 10 s (measured from the super copy's
// DisruptionAllowed condition), refuses the next one right after (the bound starts over), and
// the tenant budget gets a Warning Event saying the bound let the drain through.
func (s *suite) boundLetsDrainThrough(t *testing.T) {
	bound := int32(10)
	itest.DefaultPolicy(t, s.c, tenancyv1alpha1.TenantPolicySpec{
		DisruptionBudgets: &tenancyv1alpha1.DisruptionBudgetPolicy{MaxBlockingSeconds: &bound},
	})
	t.Cleanup(func() {
		_ = s.c.Delete(context.Background(), &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
	})
	const ns, app = "bounded", "bounded"
	superNS, victims := s.frozenPair(t, ns, app)
	sp, err := s.super.PolicyV1().PodDisruptionBudgets(superNS).Get(t.Context(), app, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held := apimeta.FindStatusCondition(sp.Status.Conditions, policyv1.DisruptionAllowedCondition)
	if held == nil || held.Status != metav1.ConditionFalse {
		t.Fatalf("super copy's DisruptionAllowed %+v, want False", held)
	}
	s.cordon(t, true)
	t.Cleanup(func() { s.cordon(t, false) })
	if err := s.evict(t.Context(), superNS, victims[0]); err == nil {
		if time.Since(held.LastTransitionTime.Time) < 10*time.Second {
			t.Fatalf("ATTACK ESCAPED: super Pod %s evicted %v after its budget began to hold, before the bound of 10 s", victims[0], time.Since(held.LastTransitionTime.Time))
		}
		t.Skipf("the setup took longer than the bound (%v): the first eviction went through", time.Since(held.LastTransitionTime.Time))
	} else if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("first eviction: %v, want 429 TooManyRequests", err)
	}
	var evicted, other string
	var sent time.Time // when the request of the eviction that went through was sent
	itest.Eventually(t, 90*time.Second, "one eviction let through by the bound", func(ctx context.Context) error {
		for i, v := range victims {
			start := time.Now()
			if err := s.evict(ctx, superNS, v); err == nil {
				evicted, other, sent = v, victims[1-i], start
				return nil
			}
		}
		return itest.Errorf("refused")
	})
	if d := time.Since(held.LastTransitionTime.Time); d < 9*time.Second {
		t.Fatalf("ATTACK ESCAPED: %s evicted %v after its budget began to hold, before the bound of 10 s", evicted, d)
	}
	t.Logf("%s evicted %v after the budget began to hold", evicted, time.Since(held.LastTransitionTime.Time))
	// One disruption per bound: the next eviction is refused right after. Both evictions
	// happened inside their requests, so their distance is at most the time from the first
	// request's sending to the second one's answer: below the bound, the bound let two
	// disruptions through; at or past it (a slow apiserver), the bound started over and let
	// the next one through, as it should.
	end := time.Now().Add(4 * time.Second)
	for time.Now().Before(end) {
		err := s.evict(t.Context(), superNS, other)
		if err == nil {
			if d := time.Since(sent); d < time.Duration(bound)*time.Second {
				t.Fatalf("ATTACK ESCAPED: super Pod %s evicted %v after %s: the bound let more than one disruption through", other, d, evicted)
			}
			t.Logf("the eviction of %s took until %v after the first one: the bound started over and let it through", other, time.Since(sent))
			break
		}
		if !apierrors.IsTooManyRequests(err) {
			t.Fatalf("second eviction: %v, want 429 TooManyRequests", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	itest.WaitEvent(t, s.tenant, ns, app, "PolicyDenied", "maxBlockingSeconds")
}

// podEvents records the watch events of tenant Pods in a namespace.
type podEvents struct {
	mu     sync.Mutex
	events []watch.Event
}

func (e *podEvents) of(uid types.UID) []watch.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []watch.Event
	for _, ev := range e.events {
		if p, ok := ev.Object.(*corev1.Pod); ok && p.UID == uid {
			out = append(out, ev)
		}
	}
	return out
}

// watchPods records the tenant's Pod events in ns from now until the test ends.
func (s *suite) watchPods(t *testing.T, ns string) *podEvents {
	t.Helper()
	l, err := s.tenant.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.tenant.CoreV1().Pods(ns).Watch(t.Context(), metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	e := &podEvents{}
	go func() {
		for ev := range w.ResultChan() {
			e.mu.Lock()
			e.events = append(e.events, ev)
			e.mu.Unlock()
		}
	}()
	return e
}

func condition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// onePod returns the one tenant Pod labelled app=app in ns.
func (s *suite) onePod(t *testing.T, ns, app string) *corev1.Pod {
	t.Helper()
	l, err := s.tenant.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("tenant Pods of %s: %v (%v)", app, l, err)
	}
	return &l.Items[0]
}

// evictionIsEviction: a super Pod evicted through the eviction API shows in the tenant as
// evicted (DisruptionTarget True, reason EvictionByEvictionAPI), then the tenant Pod is deleted
// and its ReplicaSet replaces it; it never reads as a loss.
func (s *suite) evictionIsEviction(t *testing.T) {
	const ns, app = "evicted", "evicted"
	itest.MustCreateNS(t, s.tenant, ns)
	s.deployment(t, ns, app, 1)
	old := s.onePod(t, ns, app)
	events := s.watchPods(t, ns)
	itest.Eventually(t, 30*time.Second, "eviction", func(ctx context.Context) error {
		return s.evict(ctx, s.superNS(ns), old.Name)
	})
	itest.Eventually(t, time.Minute, "tenant Pod deleted after DisruptionTarget/EvictionByEvictionAPI", func(context.Context) error {
		evs := events.of(old.UID)
		if len(evs) == 0 {
			return itest.Errorf("no event of the tenant Pod")
		}
		for _, ev := range evs {
			if p := ev.Object.(*corev1.Pod); p.Status.Reason == reasonSuperPodLost {
				t.Fatalf("the evicted Pod was marked lost: %s %+v", p.Status.Reason, p.Status)
			}
		}
		last := evs[len(evs)-1]
		p := last.Object.(*corev1.Pod)
		if last.Type != watch.Deleted {
			return itest.Errorf("last event %s: phase %s deletionTimestamp %v conditions %+v", last.Type, p.Status.Phase, p.DeletionTimestamp, p.Status.Conditions)
		}
		if c := condition(p, corev1.DisruptionTarget); c == nil || c.Status != corev1.ConditionTrue || c.Reason != "EvictionByEvictionAPI" {
			t.Fatalf("deleted tenant Pod's DisruptionTarget %+v, want True EvictionByEvictionAPI", c)
		}
		return nil
	})
	itest.Eventually(t, time.Minute, "a replacement Ready", func(ctx context.Context) error {
		l, err := s.tenant.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return err
		}
		for _, p := range l.Items {
			if p.UID != old.UID && itest.PodReady(&p) {
				return nil
			}
		}
		return itest.Errorf("%d Pods, no new one Ready", len(l.Items))
	})
}

// plainDeleteIsLoss: a super Pod deleted outside every disruption path (no DisruptionTarget)
// is a loss: the tenant Pod stays, Failed with reason SuperPodLost.
func (s *suite) plainDeleteIsLoss(t *testing.T) {
	const ns, app = "lost", "lost"
	itest.MustCreateNS(t, s.tenant, ns)
	s.deployment(t, ns, app, 1)
	old := s.onePod(t, ns, app)
	if err := s.super.CoreV1().Pods(s.superNS(ns)).Delete(t.Context(), old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, time.Minute, "tenant Pod Failed, SuperPodLost", func(ctx context.Context) error {
		p, err := s.tenant.CoreV1().Pods(ns).Get(ctx, old.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.UID != old.UID || p.Status.Phase != corev1.PodFailed || p.Status.Reason != reasonSuperPodLost || p.DeletionTimestamp != nil {
			return itest.Errorf("uid %s phase %s reason %q deletionTimestamp %v", p.UID, p.Status.Phase, p.Status.Reason, p.DeletionTimestamp)
		}
		if c := condition(p, corev1.DisruptionTarget); c == nil || c.Reason != reasonSuperPodLost {
			return itest.Errorf("DisruptionTarget %+v", c)
		}
		return nil
	})
}

// reservedSelectorRefused: a tenant budget whose selector names a label key the syncer writes
// on super Pods (tenancy.vcsyncer.io/managed-by Exists) selects no tenant Pod, so it is not a
// second budget in the tenant, but its super copy would select every super Pod of the
// namespace; the eviction API refuses to evict a Pod under two budgets, so that copy would
// hold every drain of the namespace's Pods for good. It gets no super copy (a PolicyDenied
// Warning Event) and the namespace's own budget decides evictions.
func (s *suite) reservedSelectorRefused(t *testing.T) {
	const ns, app = "reserved", "reserved"
	itest.MustCreateNS(t, s.tenant, ns)
	s.deployment(t, ns, app, 2)
	s.budget(t, ns, app, 1, 1)
	zero := intstr.FromInt32(0)
	itest.Created(t)(s.tenant.PolicyV1().PodDisruptionBudgets(ns).Create(t.Context(), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "sneaky"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero, Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: conversion.LabelManagedBy, Operator: metav1.LabelSelectorOpExists},
		}}},
	}, metav1.CreateOptions{}))
	itest.WaitEvent(t, s.tenant, ns, "sneaky", "PolicyDenied", conversion.LabelManagedBy)
	superNS := s.superNS(ns)
	if _, err := s.super.PolicyV1().PodDisruptionBudgets(superNS).Get(t.Context(), "sneaky", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ATTACK ESCAPED: super copy of budget sneaky (selecting on %s): %v", conversion.LabelManagedBy, err)
	}
	victims := s.readyPods(t.Context(), s.super, superNS, app)
	if len(victims) != 2 {
		t.Fatalf("super Pods Ready: %v", victims)
	}
	itest.Eventually(t, 30*time.Second, "one eviction allowed by budget "+app, func(ctx context.Context) error {
		return s.evict(ctx, superNS, victims[0])
	})
}

// frozenPair creates tenant namespace ns with a Deployment app of 2 replicas under a budget
// with maxUnavailable 0, and returns the super namespace and the names of the 2 Ready super
// Pods.
func (s *suite) frozenPair(t *testing.T, ns, app string) (string, []string) {
	t.Helper()
	itest.MustCreateNS(t, s.tenant, ns)
	s.deployment(t, ns, app, 2)
	s.budget(t, ns, app, 0, 0)
	superNS := s.superNS(ns)
	victims := s.readyPods(t.Context(), s.super, superNS, app)
	if len(victims) != 2 {
		t.Fatalf("super Pods Ready: %v", victims)
	}
	return superNS, victims
}
