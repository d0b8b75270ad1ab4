package pod

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/tenant"
)

// tenantPodGets returns how many times the tenant apiserver was asked for a Pod.
func (f *podBounds) tenantPodGets() int {
	n := 0
	for _, a := range f.tenant.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}

// cacheAsInformer puts the tenant Pod ns/name into the tenant cache as the tenant informers'
// transform caches it (tenant.TrimTenantObject), after changing it with mutate in the tenant
// apiserver too.
func (f *podBounds) cacheAsInformer(t *testing.T, mutate func(*corev1.Pod)) {
	t.Helper()
	ctx := context.Background()
	p, err := f.tenant.CoreV1().Pods("app").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mutate(p)
	if p, err = f.tenant.CoreV1().Pods("app").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cached, err := tenant.TrimTenantObject(p.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.Informers.Core().V1().Pods().Informer().GetIndexer().Update(cached); err != nil {
		t.Fatal(err)
	}
}

// A new (unbound) tenant Pod is cached with its whole spec, so its super Pod is made from the
// cache: no GET of the tenant Pod (issue 36: one full-spec GET per Pod on the tenant apiserver),
// and the super Pod still has what the trimmed form drops (a container's command and env).
func TestNewPodSpecComesFromTheCache(t *testing.T) {
	ctx := context.Background()
	f := newPodBounds(t)
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web")
	f.syncCaches(t)
	f.cacheAsInformer(t, func(p *corev1.Pod) {
		p.Spec.Containers[0].Command = []string{"serve"}
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "MODE", Value: "fast"}}
	})
	f.tenant.ClearActions()
	if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if n := f.tenantPodGets(); n != 0 {
		t.Errorf("tenant Pod GETs = %d, want 0 (the cache holds the whole spec of an unbound Pod)", n)
	}
	s, err := f.super.CoreV1().Pods(f.superNS).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("super Pod: %v", err)
	}
	if c := s.Spec.Containers[0]; len(c.Command) != 1 || c.Command[0] != "serve" || len(c.Env) == 0 || c.Env[0].Value != "fast" {
		t.Errorf("super container = %+v, want the tenant's command and env", c)
	}
}

// A Pod the cache holds trimmed (here: bound, as a preset spec.nodeName is) is still read in
// full from the tenant apiserver.
func TestTrimmedPodIsReadFromTheTenant(t *testing.T) {
	cached, err := tenant.TrimTenantObject(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "app"},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "i", Command: []string{"x"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := cachedFullPod(cached); ok {
		t.Errorf("a bound Pod's cached form passed for a whole spec: %+v", p.Spec)
	}
	whole, _ := tenant.TrimTenantObject(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "app"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Command: []string{"x"}}}},
	})
	if p, ok := cachedFullPod(whole); !ok || len(p.Spec.Containers[0].Command) != 1 {
		t.Errorf("an unbound Pod's cached form: whole %t, spec %+v; want its whole spec", ok, p)
	}
	if _, ok := cachedFullPod(&corev1.Pod{}); ok {
		t.Error("a plain Pod (no transform) passed for a whole cached spec")
	}
}

// A new Pod cached whole that the policy refuses gets no tenant token: its TokenRequests are
// made only after the policy has decided (docs/security.md's "tokens asked for before the
// policy has decided" is left to Pods the cache holds trimmed).
func TestRefusedWholePodGetsNoToken(t *testing.T) {
	ctx := context.Background()
	f := newPodBounds(t)
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web")
	f.syncCaches(t)
	f.cacheAsInformer(t, func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{
			{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
			{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/kubelet"}}},
		}
	})
	f.tenant.ClearActions()
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web")
	for _, a := range f.tenant.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "serviceaccounts" && a.GetSubresource() == "token" {
			t.Errorf("TokenRequest for a Pod the policy refuses: %v", a)
		}
	}
	if got := f.superCreates(); len(got) > 0 && got[len(got)-1] == "pods" {
		t.Error("super Pod created for a refused Pod")
	}
}
