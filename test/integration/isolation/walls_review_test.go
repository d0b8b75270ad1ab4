package isolation

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/vcsyncer/syncer/test/integration/itest"
)

// reviewWalls returns the attacks found by a hostile review of the walls around scheduling,
// grace periods, endpoints, memory and the write share.
func (s *suite) reviewWalls() []attackCase {
	return []attackCase{
		{"grace-zero-delete-force-deletes-super-pod", s.attackForceDeleteSuperPod},
		{"podAntiAffinity-thousands-of-terms-load-super-scheduler", s.attackManySchedulingTerms},
		{"probe-and-hook-host-reaches-other-tenants-pod", s.attackProbeHost},
		{"service-clusterip-fallback-takes-shared-past-cap", s.attackFallbackSharedClusterIP},
	}
}

// attackForceDeleteSuperPod: tenant A holds its Pod with a finalizer of its own and deletes it
// with grace period 0 (`kubectl delete --force --grace-period=0`). The tenant Pod then stays,
// terminating, with deletionGracePeriodSeconds 0. Passing that 0 on to the super cluster would
// force-delete the super Pod: its object is gone at once while its node still runs its
// containers (up to the Pod's grace period, preStop hooks included), no longer counted by the
// super ResourceQuota or by the scheduler, so A could run Pods beyond its quota on nodes the
// scheduler then fills with other tenants' Pods. The super Pod must be deleted gracefully (the
// apiserver sets its deletionTimestamp and keeps it until its node confirms), and A is told
// (rule terminationGracePeriod).
func (s *suite) attackForceDeleteSuperPod(t *testing.T) {
	ctx := context.Background()
	const name, hold = "force-deleted", "example.com/hold"
	p := basePod(name)
	p.Finalizers = []string{hold}
	if _, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = s.a.Client.CoreV1().Pods(aNS).Patch(context.Background(), name, types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		deletePod(s.a.Client, aNS, name)
		s.waitGone(t, s.aSuperNS, name)
	}()
	var rv string
	itest.Eventually(t, maxWait, "A's Pod placed on a super Node", func(ctx context.Context) error {
		sp, err := s.super.CoreV1().Pods(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sp.Spec.NodeName == "" {
			return itest.Errorf("not scheduled yet")
		}
		rv = sp.ResourceVersion
		return nil
	})
	w, err := s.super.CoreV1().Pods(s.aSuperNS).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: rv,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	c0 := denials(s.a.Name, []string{"Pod"}, []string{"terminationGracePeriod"})
	zero := int64(0)
	if err := s.a.Client.CoreV1().Pods(aNS).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	tp, err := s.a.Client.CoreV1().Pods(aNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil || tp.DeletionTimestamp == nil || deref(tp.DeletionGracePeriodSeconds) != int64(0) {
		t.Fatalf("tenant Pod not held terminating with grace 0: %v %v", err, tp)
	}
	// The first event that shows the super Pod's deletion tells how it was deleted.
	timeout := time.After(maxWait)
	for done := false; !done; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("super Pod watch closed before its deletion")
			}
			sp, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				continue
			}
			switch {
			case ev.Type == watch.Deleted && sp.DeletionTimestamp == nil:
				t.Fatalf("super Pod %s/%s force-deleted (removed with no graceful deletion): its node still runs it, uncounted", s.aSuperNS, name)
			case sp.DeletionTimestamp != nil:
				if g := deref(sp.DeletionGracePeriodSeconds); g == nil || g == int64(0) {
					t.Fatalf("super Pod %s/%s deleted with grace period %v", s.aSuperNS, name, g)
				}
				done = true
			}
		case <-timeout:
			t.Fatalf("super Pod %s/%s not deleted within %s", s.aSuperNS, name, maxWait)
		}
	}
	itest.Eventually(t, maxWait, "A told (terminationGracePeriod)", func(ctx context.Context) error {
		if d := denials(s.a.Name, []string{"Pod"}, []string{"terminationGracePeriod"}) - c0; d < 1 {
			return itest.Errorf("denials rose by %v", d)
		}
		evs, _, err := deniedEvents(ctx, s.a.Client, "Pod", name, []string{"terminationGracePeriod"})
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return fmt.Errorf("no PolicyDenied Event")
		}
		return nil
	})
	if _, err := s.a.Client.CoreV1().Pods(aNS).Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Fatal("tenant Pod gone despite its finalizer")
	}
}

// manyTerms is the number of required pod anti-affinity terms of attackManySchedulingTerms.
const manyTerms = 2000

// attackManySchedulingTerms: tenant A's Pod with thousands of required pod anti-affinity terms,
// each confined to A's namespaces and keyed on kubernetes.io/hostname (so each passes the
// topology-key and namespace rules). The super scheduler evaluates every term of every existing
// Pod with required anti-affinity against every Pod it schedules, of any tenant, and the Pod's
// own terms against every Node: a few hundred such Pods slow the scheduling of everyone's
// Pods. The Pod is refused (rule schedulingRequirements) and never reaches the super cluster.
func (s *suite) attackManySchedulingTerms(t *testing.T) {
	p := basePod("anti-affinity-thousands")
	terms := make([]corev1.PodAffinityTerm, manyTerms)
	for i := range terms {
		terms[i] = corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"attack": fmt.Sprintf("t%d", i)}},
			TopologyKey:   corev1.LabelHostname,
		}
	}
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
	s.podAttack(t, p, []string{"schedulingRequirements"}, func(sp *corev1.Pod) error {
		if n := len(podAffinityTerms(sp.Spec.Affinity)); n > 64 {
			return fmt.Errorf("carries %d pod affinity terms", n)
		}
		return nil
	})
}

// attackProbeHost: tenant A's Pod whose readiness probe (tcpSocket) and preStop hook (httpGet)
// name a host: tenant B's Pod IP. The kubelet makes these connections itself, from the node's
// network (outside A's Pod and any NetworkPolicy of A's namespace), so A could reach B's Pods,
// the node's own loopback services or a metadata endpoint. Pod Security baseline refuses such
// hosts only on super clusters from 1.34 on; the syncer refuses the Pod itself (rule
// probeHost), whatever the super cluster's Pod Security level and version.
func (s *suite) attackProbeHost(t *testing.T) {
	p := basePod("probe-b")
	p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
		TCPSocket: &corev1.TCPSocketAction{Host: s.bPodIP, Port: intstr.FromInt32(80)}}}
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		HTTPGet: &corev1.HTTPGetAction{Host: s.bPodIP, Path: "/delete-everything", Port: intstr.FromInt32(80)}}}
	s.podAttack(t, p, []string{"probeHost"}, func(sp *corev1.Pod) error {
		for _, c := range sp.Spec.Containers {
			if h := probeHosts(c); len(h) > 0 {
				return fmt.Errorf("container %s probes or hooks hosts %v", c.Name, h)
			}
		}
		return nil
	})
}

// probeHosts returns the hosts c's probes and lifecycle hooks name.
func probeHosts(c corev1.Container) []string {
	var out []string
	handler := func(get *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction) {
		if get != nil && get.Host != "" {
			out = append(out, get.Host)
		}
		if tcp != nil && tcp.Host != "" {
			out = append(out, tcp.Host)
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			handler(p.HTTPGet, p.TCPSocket)
		}
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []*corev1.LifecycleHandler{l.PostStart, l.PreStop} {
			if h != nil {
				handler(h.HTTPGet, h.TCPSocket)
			}
		}
	}
	return out
}

// attackFallbackSharedClusterIP: tenant A's Service asks for an address of A's own Service
// range that the super cluster refuses (here a super Service holds it; equally a range the
// provider did not add to the super cluster's ServiceCIDRs). The syncer then lets the super
// cluster allocate an address of its shared range: without a check there, every such Service
// takes a shared address past services.maxSharedClusterIPs (set here to what A holds already,
// so A may take none). The Service is refused (rule sharedClusterIP) instead.
func (s *suite) attackFallbackSharedClusterIP(t *testing.T) {
	ctx := context.Background()
	_, own, err := net.ParseCIDR(s.a.ServiceCIDR)
	if err != nil {
		t.Fatal(err)
	}
	ip := make(net.IP, len(own.IP.To4()))
	copy(ip, own.IP.To4())
	ip[3] += 250
	limit := int32(s.settledSharedServices(t))
	s.withSharedIPLimit(t, "tenant-a-fallback-shared", limit)
	const name = "fallback-shared"
	s.deleteServicesOnCleanup(t, name) // before the limit is lifted: it never gets a super copy
	// The super cluster's own Service holding A's address.
	occupant := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "occupant", Namespace: "default"}, Spec: corev1.ServiceSpec{
		ClusterIP: ip.String(), Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := s.super.CoreV1().Services("default").Create(ctx, occupant, metav1.CreateOptions{}); err != nil {
		t.Logf("super Service holding %s not created (%v): the super cluster refuses A's address anyway", ip, err)
	} else {
		defer func() {
			_ = s.super.CoreV1().Services("default").Delete(context.Background(), "occupant", metav1.DeleteOptions{})
		}()
	}
	s.run(t, attack{
		kind: "Service", ns: aNS, names: []string{name}, rules: []string{"sharedClusterIP"},
		create: func(ctx context.Context) error {
			_, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
				ClusterIP: ip.String(), Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
			return err
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
}
