// Package budget_test shows on real control planes that a tenant's Pods run as the tenant wrote
// them (no hidden requests, limits or QoS class from a super-cluster LimitRange) and that
// limits.quota bounds the tenant as a whole: a Pod over its tenant's budget waits, costing the
// super apiserver and the tenant's TokenRequests nothing, until room appears.
package budget_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const maxWait = time.Minute

type suite struct {
	env        *localcluster.Environment
	c          client.Client
	super      kubernetes.Interface
	tc         *localcluster.ControlPlane
	uid        string
	metricPort int
}

func TestBudget(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, 1)
	port := itest.FreePort(t)
	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) {
		o.MetricsBindAddress = fmt.Sprintf("127.0.0.1:%d", port)
		o.MetricsSecure = false
	})
	s := &suite{env: env, c: c, super: env.Super.Client, tc: env.Tenants[0], metricPort: port}
	if err := itest.AddTenant(context.Background(), c, itest.KubeconfigNS, s.tc, 1); err != nil {
		t.Fatal(err)
	}
	itest.WaitRunning(t, c, s.tc.Name)
	s.uid = itest.TenantUID(t, c, s.tc.Name)
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"resources-and-qos-as-the-tenant-wrote-them", s.resourcesAsWritten},
		{"tenant-limitrange-default-reaches-super", s.tenantLimitRange},
		{"budget-bounds-the-tenant-across-namespaces", s.budgetAcrossNamespaces},
		{"budget-bounds-claims-storage-across-namespaces", s.claimsAcrossNamespaces},
		{"budget-bounds-services-across-namespaces", s.servicesAcrossNamespaces},
		{"budget-kept-across-a-pause", s.budgetKeptAcrossAPause},
	} {
		if !t.Run(tc.name, tc.run) {
			t.Logf("FAILED: %s", tc.name)
		}
	}
}

func (s *suite) superNS(ns string) string { return conversion.SuperNamespace(s.tc.Name, s.uid, ns) }

func pod(name string, res corev1.ResourceRequirements) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: res}},
	}}
}

// superPod waits for the super copy of tenant Pod ns/name and returns it.
func (s *suite) superPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	var sp *corev1.Pod
	itest.Eventually(t, maxWait, "super Pod "+ns+"/"+name, func(ctx context.Context) error {
		p, err := s.super.CoreV1().Pods(s.superNS(ns)).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			tp, terr := s.tc.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if terr == nil {
				return fmt.Errorf("%w (tenant Pod conditions %+v)", err, tp.Status.Conditions)
			}
			return err
		}
		sp = p
		return nil
	})
	return sp
}

// sameResources fails the test unless super Pod sp has tenant Pod tp's container and pod-level
// resources and QoS class.
func sameResources(t *testing.T, tp, sp *corev1.Pod) {
	t.Helper()
	for i := range tp.Spec.Containers {
		if !equality.Semantic.DeepEqual(tp.Spec.Containers[i].Resources, sp.Spec.Containers[i].Resources) {
			t.Errorf("Pod %s container %s: super resources %+v, tenant %+v", tp.Name, tp.Spec.Containers[i].Name,
				sp.Spec.Containers[i].Resources, tp.Spec.Containers[i].Resources)
		}
	}
	if !equality.Semantic.DeepEqual(tp.Spec.Resources, sp.Spec.Resources) {
		t.Errorf("Pod %s: super pod-level resources %+v, tenant %+v", tp.Name, sp.Spec.Resources, tp.Spec.Resources)
	}
	if tp.Status.QOSClass != sp.Status.QOSClass {
		t.Errorf("Pod %s: super QoS class %s, tenant %s", tp.Name, sp.Status.QOSClass, tp.Status.QOSClass)
	}
}

// resourcesAsWritten: a container requesting cpu 2 / memory 2Gi without limits (valid on any
// cluster) is synced with exactly those resources (no LimitRange gives it a 1 CPU limit, which
// the super apiserver would refuse); a BestEffort Pod stays BestEffort.
func (s *suite) resourcesAsWritten(t *testing.T) {
	ctx := context.Background()
	const ns = "as-written"
	itest.MustCreateNS(t, s.tc.Client, ns)
	big := pod("big", corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")}})
	for _, p := range []*corev1.Pod{big, pod("besteffort", corev1.ResourceRequirements{})} {
		tp, err := s.tc.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sp := s.superPod(t, ns, p.Name)
		sameResources(t, tp, sp)
	}
	if t.Failed() {
		return
	}
	sp := s.superPod(t, ns, "besteffort")
	if sp.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("besteffort: super QoS class %s", sp.Status.QOSClass)
	}
	lrs, err := s.super.CoreV1().LimitRanges(s.superNS(ns)).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lrs.Items) != 0 {
		t.Errorf("super namespace %s has %d LimitRanges (%s...): they change tenant Pods", s.superNS(ns), len(lrs.Items), lrs.Items[0].Name)
	}
}

// tenantLimitRange: a LimitRange in the tenant's own control plane keeps working: its default
// is in the tenant Pod (the tenant apiserver's admission) and so in the super Pod.
func (s *suite) tenantLimitRange(t *testing.T) {
	ctx := context.Background()
	const ns = "tenant-lr"
	itest.MustCreateNS(t, s.tc.Client, ns)
	if _, err := s.tc.Client.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m"), corev1.ResourceMemory: resource.MustParse("300Mi")},
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("200Mi")}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tp, err := s.tc.Client.CoreV1().Pods(ns).Create(ctx, pod("defaulted", corev1.ResourceRequirements{}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tp.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; got.Cmp(resource.MustParse("300m")) != 0 {
		t.Fatalf("the tenant's LimitRange did not default the tenant Pod: limits %v", tp.Spec.Containers[0].Resources.Limits)
	}
	sameResources(t, tp, s.superPod(t, ns, "defaulted"))
}

// apiserverCount returns the sum of apiserver_request_total of an apiserver over the series
// with verb POST, resource and subresource.
func apiserverCount(t *testing.T, cs kubernetes.Interface, res, sub string) float64 {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("scraping the apiserver: %v", err)
	}
	fam := itest.ParseMetrics(t, bytes.NewReader(raw))["apiserver_request_total"]
	if fam == nil {
		t.Fatal("apiserver has no apiserver_request_total")
	}
	sum := 0.0
	for _, m := range fam.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["verb"] == "POST" && labels["resource"] == res && labels["subresource"] == sub {
			sum += m.Counter.GetValue()
		}
	}
	return sum
}

// budgetAcrossNamespaces: limits.quota pods=3 bounds the tenant, not each namespace: with 3
// Pods over two namespaces, a 4th (in either) waits, refused visibly (condition and one Warning
// Event with the same reason, one count), with no super create and no TokenRequest while it
// waits; deleting one Pod admits it promptly. The super namespaces keep a ResourceQuota of
// object counts other than Pods' only (services here) and no LimitRange.
func (s *suite) budgetAcrossNamespaces(t *testing.T) {
	ctx := context.Background()
	// Earlier subtests' Pods are deleted first: the budget counts all of the tenant's Pods.
	for _, ns := range []string{"as-written", "tenant-lr"} {
		if err := s.tc.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	itest.Eventually(t, 2*time.Minute, "earlier super Pods gone", func(ctx context.Context) error {
		for _, ns := range []string{"as-written", "tenant-lr"} {
			l, err := s.super.CoreV1().Pods(s.superNS(ns)).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(l.Items) > 0 {
				return itest.Errorf("%d super Pods left in %s", len(l.Items), s.superNS(ns))
			}
		}
		return nil
	})
	itest.DefaultPolicy(t, s.c, tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		Quota: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3"), corev1.ResourceRequestsCPU: resource.MustParse("64"),
			corev1.ResourceServices: resource.MustParse("10")}}})
	itest.MustCreateNS(t, s.tc.Client, "b1")
	itest.MustCreateNS(t, s.tc.Client, "b2")
	for _, p := range []struct{ ns, name string }{{"b1", "p1"}, {"b1", "p2"}, {"b2", "p3"}} {
		if _, err := s.tc.Client.CoreV1().Pods(p.ns).Create(ctx, pod(p.name, corev1.ResourceRequirements{}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s.superPod(t, p.ns, p.name)
	}
	denials := func() float64 {
		return itest.ScrapeSum(t, s.metricPort, "vcsyncer_policy_denials_total", map[string]string{"tenant": s.tc.Name, "kind": "Pod"})
	}
	denied0 := denials()
	creates0 := apiserverCount(t, s.super, "pods", "")
	tokens0 := apiserverCount(t, s.tc.Client, "serviceaccounts", "token")
	if _, err := s.tc.Client.CoreV1().Pods("b2").Create(ctx, pod("p4", corev1.ResourceRequirements{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var msg string
	itest.Eventually(t, maxWait, "p4 refused by the tenant budget", func(ctx context.Context) error {
		tp, err := s.tc.Client.CoreV1().Pods("b2").Get(ctx, "p4", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range tp.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "tenant budget") {
				msg = c.Message
				if c.Reason != "QuotaExceeded" {
					return itest.Errorf("condition reason %s, want QuotaExceeded (the Event's)", c.Reason)
				}
				return nil
			}
		}
		if _, err := s.super.CoreV1().Pods(s.superNS("b2")).Get(ctx, "p4", metav1.GetOptions{}); err == nil {
			return itest.Errorf("p4 was created in the super cluster: the quota bounds each namespace, not the tenant")
		}
		return itest.Errorf("conditions %+v", tp.Status.Conditions)
	})
	t.Logf("p4: %s", msg)
	for _, want := range []string{"pods=1", "used 3", "limited 3"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	itest.WaitEvent(t, s.tc.Client, "b2", "p4", "QuotaExceeded", "tenant budget")
	// While p4 waits, nothing is asked of either apiserver for it (no retry with backoff).
	itest.Consistently(t, 4*time.Second, "p4 waits without cost", func(context.Context) error {
		if d := apiserverCount(t, s.super, "pods", "") - creates0; d != 0 {
			return itest.Errorf("%v Pod creates reached the super apiserver while p4 waits", d)
		}
		if d := apiserverCount(t, s.tc.Client, "serviceaccounts", "token"); d != tokens0 {
			return itest.Errorf("%v TokenRequests reached the tenant while p4 waits", d-tokens0)
		}
		return nil
	})
	if d := denials() - denied0; d != 1 {
		t.Errorf("vcsyncer_policy_denials_total rose by %v for p4, want 1", d)
	}
	// Room appears: p1 (another namespace) is deleted; p4 is admitted promptly.
	if err := s.tc.Client.CoreV1().Pods("b1").Delete(ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.superPod(t, "b2", "p4")
	if d := apiserverCount(t, s.super, "pods", "") - creates0; d != 1 {
		t.Errorf("%v Pod creates reached the super apiserver for p4, want 1", d)
	}
	if d := apiserverCount(t, s.tc.Client, "serviceaccounts", "token") - tokens0; d != 1 {
		t.Errorf("%v TokenRequests reached the tenant for p4, want 1", d)
	}
	// The super namespace's ResourceQuota is a backstop of object counts other than Pods'
	// only: with pods, the super apiserver's quota admission would evaluate every super Pod's
	// create and write the quota's status for it.
	itest.Eventually(t, maxWait, "backstop ResourceQuota in "+s.superNS("b1"), func(ctx context.Context) error {
		rq, err := s.super.CoreV1().ResourceQuotas(s.superNS("b1")).Get(ctx, "vc-syncer-quota", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := rq.Spec.Hard[corev1.ResourceServices]; !ok {
			return itest.Errorf("hard %v has no services backstop", rq.Spec.Hard)
		}
		if _, ok := rq.Spec.Hard[corev1.ResourcePods]; ok {
			return itest.Errorf("hard %v has pods: every super Pod's create would write the quota", rq.Spec.Hard)
		}
		if _, ok := rq.Spec.Hard[corev1.ResourceRequestsCPU]; ok {
			return itest.Errorf("hard %v has requests.cpu: every container would have to request cpu", rq.Spec.Hard)
		}
		return nil
	})
}

// budgetPolicy sets the default TenantPolicy's limits.quota to quota, with room for the
// earlier subtests' Pods (pods 100, requests.cpu 64), creating the policy if need be.
func (s *suite) budgetPolicy(t *testing.T, quota corev1.ResourceList) {
	t.Helper()
	quota[corev1.ResourcePods] = resource.MustParse("100")
	quota[corev1.ResourceRequestsCPU] = resource.MustParse("64")
	s.setQuota(t, quota)
}

// setQuota sets the default TenantPolicy's limits.quota to quota, creating the policy if need
// be.
func (s *suite) setQuota(t *testing.T, quota corev1.ResourceList) {
	t.Helper()
	itest.Eventually(t, maxWait, "TenantPolicy default with limits.quota "+fmt.Sprint(quota), func(ctx context.Context) error {
		var p tenancyv1alpha1.TenantPolicy
		err := s.c.Get(ctx, client.ObjectKey{Name: "default"}, &p)
		if apierrors.IsNotFound(err) {
			p = tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
			p.Spec.Limits = &tenancyv1alpha1.LimitsPolicy{Quota: quota}
			return s.c.Create(ctx, &p)
		}
		if err != nil {
			return err
		}
		if p.Spec.Limits == nil {
			p.Spec.Limits = &tenancyv1alpha1.LimitsPolicy{}
		}
		p.Spec.Limits.Quota = quota
		return s.c.Update(ctx, &p)
	})
}

// waitsForBudget checks, for tenant object ns/name of kind (plural resource res), that it gets
// no super copy while the tenant's budget has no room: a Warning Event QuotaExceeded that
// names the tenant budget and what, one count of vcsyncer_policy_denials_total, and no
// create of res reaching the super apiserver for 4 s (no retry with backoff). exists reports
// whether the super copy exists; denied0 and creates0 are the counts taken before the object
// was created; says are what the Event's message must name.
func (s *suite) waitsForBudget(t *testing.T, kind, res, ns, name string, denied0, creates0 float64, exists func(ctx context.Context) bool, says ...string) {
	t.Helper()
	itest.Eventually(t, maxWait, name+" refused by the tenant budget", func(ctx context.Context) error {
		if exists(ctx) {
			return itest.Errorf("%s %s was created in the super cluster: the quota bounds each namespace, not the tenant", kind, name)
		}
		evs, err := s.tc.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == "QuotaExceeded" && strings.Contains(e.Message, "tenant budget") {
				t.Logf("%s: %s", name, e.Message)
				for _, want := range says {
					if !strings.Contains(e.Message, want) {
						t.Errorf("refusal %q does not say %q", e.Message, want)
					}
				}
				return nil
			}
		}
		return itest.Errorf("%s %s: no super copy and no QuotaExceeded Event naming the tenant budget (%d Events)", kind, name, len(evs.Items))
	})
	itest.Consistently(t, 4*time.Second, name+" waits without cost", func(ctx context.Context) error {
		if exists(ctx) {
			return itest.Errorf("%s %s was created in the super cluster while the budget is full", kind, name)
		}
		if d := apiserverCount(t, s.super, res, "") - creates0; d != 0 {
			return itest.Errorf("%v creates of %s reached the super apiserver while %s waits", d, res, name)
		}
		return nil
	})
	if d := itest.ScrapeSum(t, s.metricPort, "vcsyncer_policy_denials_total", map[string]string{"tenant": s.tc.Name, "kind": kind, "rule": "tenantQuota"}) - denied0; d != 1 {
		t.Errorf("vcsyncer_policy_denials_total{kind=%s,rule=tenantQuota} rose by %v for %s, want 1", kind, d, name)
	}
}

// denials returns vcsyncer_policy_denials_total{rule=tenantQuota} of the tenant's kind.
func (s *suite) denials(t *testing.T, kind string) float64 {
	return itest.ScrapeSum(t, s.metricPort, "vcsyncer_policy_denials_total", map[string]string{"tenant": s.tc.Name, "kind": kind, "rule": "tenantQuota"})
}

func claim(name, size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
	}}
}

// claimsAcrossNamespaces: limits.quota requests.storage=2Gi bounds the tenant's claims over
// all of its namespaces: with two 1Gi claims in two namespaces, a third waits (no super copy,
// a QuotaExceeded Event, one count, no super create while it waits) and is synced once one of
// the others is deleted.
func (s *suite) claimsAcrossNamespaces(t *testing.T) {
	ctx := context.Background()
	s.budgetPolicy(t, corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse("2Gi"),
		corev1.ResourcePersistentVolumeClaims: resource.MustParse("10")})
	itest.MustCreateNS(t, s.tc.Client, "st1")
	itest.MustCreateNS(t, s.tc.Client, "st2")
	superClaim := func(ns, name string) func(ctx context.Context) bool {
		return func(ctx context.Context) bool {
			_, err := s.super.CoreV1().PersistentVolumeClaims(s.superNS(ns)).Get(ctx, name, metav1.GetOptions{})
			return err == nil
		}
	}
	for _, c := range []struct{ ns, name string }{{"st1", "c1"}, {"st2", "c2"}} {
		if _, err := s.tc.Client.CoreV1().PersistentVolumeClaims(c.ns).Create(ctx, claim(c.name, "1Gi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, maxWait, "super claim "+c.name, func(ctx context.Context) error {
			if !superClaim(c.ns, c.name)(ctx) {
				return itest.Errorf("no super copy of claim %s/%s", c.ns, c.name)
			}
			return nil
		})
	}
	denied0 := s.denials(t, "PersistentVolumeClaim")
	creates0 := apiserverCount(t, s.super, "persistentvolumeclaims", "")
	if _, err := s.tc.Client.CoreV1().PersistentVolumeClaims("st2").Create(ctx, claim("c3", "1Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitsForBudget(t, "PersistentVolumeClaim", "persistentvolumeclaims", "st2", "c3", denied0, creates0, superClaim("st2", "c3"),
		"requests.storage=1Gi", "used 2Gi", "limited 2Gi")
	if err := s.tc.Client.CoreV1().PersistentVolumeClaims("st1").Delete(ctx, "c1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, maxWait, "c3 synced once c1 is gone", func(ctx context.Context) error {
		if !superClaim("st2", "c3")(ctx) {
			return itest.Errorf("no super copy of claim st2/c3")
		}
		return nil
	})
	if d := apiserverCount(t, s.super, "persistentvolumeclaims", "") - creates0; d != 1 {
		t.Errorf("%v claim creates reached the super apiserver for c3, want 1", d)
	}
}

// syncedServices returns the number of the tenant's Services that have a super copy.
func (s *suite) syncedServices(t *testing.T) int {
	t.Helper()
	ctx := t.Context()
	l, err := s.tc.Client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, svc := range l.Items {
		if _, err := s.super.CoreV1().Services(s.superNS(svc.Namespace)).Get(ctx, svc.Name, metav1.GetOptions{}); err == nil {
			n++
		}
	}
	return n
}

func service(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80}}}}
}

// servicesAcrossNamespaces: limits.quota services bounds the tenant's Services over all of its
// namespaces: with the budget full after one Service in each of two namespaces, a third
// waits (no super copy, condition tenancy.vcsyncer.io/Synced=False and a Warning Event with
// the same reason QuotaExceeded, one count, no super create while it waits) and is synced once
// one of the others is deleted.
func (s *suite) servicesAcrossNamespaces(t *testing.T) {
	ctx := context.Background()
	base := s.syncedServices(t) // the tenant's own (kube-dns and the like)
	s.budgetPolicy(t, corev1.ResourceList{corev1.ResourceServices: resource.MustParse(fmt.Sprint(base + 2))})
	itest.MustCreateNS(t, s.tc.Client, "sv1")
	itest.MustCreateNS(t, s.tc.Client, "sv2")
	superSvc := func(ns, name string) func(ctx context.Context) bool {
		return func(ctx context.Context) bool {
			_, err := s.super.CoreV1().Services(s.superNS(ns)).Get(ctx, name, metav1.GetOptions{})
			return err == nil
		}
	}
	for _, c := range []struct{ ns, name string }{{"sv1", "a"}, {"sv2", "b"}} {
		if _, err := s.tc.Client.CoreV1().Services(c.ns).Create(ctx, service(c.name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		itest.Eventually(t, maxWait, "super Service "+c.name, func(ctx context.Context) error {
			if !superSvc(c.ns, c.name)(ctx) {
				return itest.Errorf("no super copy of Service %s/%s", c.ns, c.name)
			}
			return nil
		})
	}
	denied0 := s.denials(t, "Service")
	creates0 := apiserverCount(t, s.super, "services", "")
	if _, err := s.tc.Client.CoreV1().Services("sv2").Create(ctx, service("c"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitsForBudget(t, "Service", "services", "sv2", "c", denied0, creates0, superSvc("sv2", "c"),
		"services=1", fmt.Sprintf("used %d", base+2), fmt.Sprintf("limited %d", base+2))
	itest.Eventually(t, maxWait, "Service c marked refused", func(ctx context.Context) error {
		svc, err := s.tc.Client.CoreV1().Services("sv2").Get(ctx, "c", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range svc.Status.Conditions {
			if c.Type == "tenancy.vcsyncer.io/Synced" && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "tenant budget") {
				if c.Reason != "QuotaExceeded" {
					return itest.Errorf("condition reason %s, want QuotaExceeded (the Event's)", c.Reason)
				}
				return nil
			}
		}
		return itest.Errorf("conditions %+v", svc.Status.Conditions)
	})
	if err := s.tc.Client.CoreV1().Services("sv1").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, maxWait, "c synced once a is gone", func(ctx context.Context) error {
		if !superSvc("sv2", "c")(ctx) {
			return itest.Errorf("no super copy of Service sv2/c")
		}
		return nil
	})
	if d := apiserverCount(t, s.super, "services", "") - creates0; d != 1 {
		t.Errorf("%v Service creates reached the super apiserver for c, want 1", d)
	}
}

// budgetKeptAcrossAPause: a tenant paused and resumed keeps counting the super Pods that ran
// on meanwhile. With the budget full, a new Pod after the resume waits (QuotaExceeded) and gets
// no super copy: the pause did not make room for another budget's worth of Pods.
func (s *suite) budgetKeptAcrossAPause(t *testing.T) {
	ctx := context.Background()
	// The budget: the tenant's super Pods now (those being deleted count until they are
	// gone), and one more.
	l, err := s.super.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + s.uid})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range l.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	s.setQuota(t, corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(n+1), resource.DecimalSI),
		corev1.ResourceRequestsCPU: resource.MustParse("64"), corev1.ResourceServices: resource.MustParse("10")})
	itest.MustCreateNS(t, s.tc.Client, "pause")
	if _, err := s.tc.Client.CoreV1().Pods("pause").Create(ctx, pod("before", corev1.ResourceRequirements{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.superPod(t, "pause", "before")

	setPaused := func(paused bool) {
		t.Helper()
		itest.Eventually(t, maxWait, fmt.Sprintf("Tenant paused=%t", paused), func(ctx context.Context) error {
			tn := &tenancyv1alpha1.Tenant{}
			if err := s.c.Get(ctx, client.ObjectKey{Name: s.tc.Name}, tn); err != nil {
				return err
			}
			tn.Spec.Paused = paused
			return s.c.Update(ctx, tn)
		})
	}
	setPaused(true)
	itest.Eventually(t, maxWait, "Tenant Paused", func(ctx context.Context) error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := s.c.Get(ctx, client.ObjectKey{Name: s.tc.Name}, tn); err != nil {
			return err
		}
		if tn.Status.Phase != tenancyv1alpha1.TenantPaused {
			return itest.Errorf("phase %q", tn.Status.Phase)
		}
		return nil
	})
	setPaused(false)
	itest.WaitRunning(t, s.c, s.tc.Name)

	if _, err := s.tc.Client.CoreV1().Pods("pause").Create(ctx, pod("after", corev1.ResourceRequirements{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The refusal counts the Pods that ran on through the pause.
	itest.WaitEvent(t, s.tc.Client, "pause", "after", "QuotaExceeded", fmt.Sprintf("used %d, limited %d", n+1, n+1))
	itest.Consistently(t, 3*time.Second, "no super copy of the Pod after the resume", func(ctx context.Context) error {
		if _, err := s.super.CoreV1().Pods(s.superNS("pause")).Get(ctx, "after", metav1.GetOptions{}); err == nil {
			return itest.Errorf("the Pod created after the resume has a super copy: the pause forgot the %d running Pods", n+1)
		}
		return nil
	})
}
