package isolation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// Shape of the memory attack with kinds other than Secrets and ConfigMaps: A's TenantPolicy
// caps one object at memObjectCap and all of A's objects in the syncer's caches at
// memCachedCap; A makes one object of each kind over memObjectCap (annotations of
// memBigBytes) and memFillCount ServiceAccounts of memFillBytes each (each under
// memObjectCap, together over memCachedCap).
const (
	memObjectCap   = 64 << 10
	memCachedCap   = 8 << 20
	memBigBytes    = 100 * 1000
	memFillCount   = 200
	memFillBytes   = 50 * 1000
	memFillPrefix  = "memfill-"
	memBigNS       = "membound-big"
	memCachedGauge = "vcsyncer_tenant_cached_bytes"
)

// cachedBytes returns vcsyncer_tenant_cached_bytes{tenant} from the in-process registry (-1
// when it is not there).
func cachedBytes(tenant string) float64 { return tenantGauge(memCachedGauge, tenant) }

// attackMemoryOtherKinds: tenant A grows the syncer's heap with kinds other than Secrets and
// ConfigMaps, carrying big annotations: a Service, a ServiceAccount, a Pod, a Namespace (with
// a ConfigMap in it), an EndpointSlice and a claim over limits.maxObjectBytes, and many
// ServiceAccounts under it but past limits.maxCachedBytes together. None of the objects over
// a cap gets a super copy; each gets its kind's refusal (PolicyDenied Event and count, rule
// objectSize or cachedBytes; the Pod also PodScheduled=False); the Tenant shows
// WithinMemoryBound=False; the bytes the syncer holds for A stay under the cap; B's new Pod
// still syncs; and deleting the synced ServiceAccounts lets the ones kept out be synced.
func (s *suite) attackMemoryOtherKinds(t *testing.T) {
	ctx := context.Background()
	tp := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a-membound"},
		Spec: tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
			MaxObjectBytes: resource.NewQuantity(memObjectCap, resource.BinarySI),
			MaxCachedBytes: resource.NewQuantity(memCachedCap, resource.BinarySI),
		}}}
	if err := s.c.Create(ctx, tp); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s.setPolicyName(t, s.a.Name, tp.Name)
	s.waitPolicy(t, s.a.Name, tp.Name)

	big := map[string]string{"note": strings.Repeat("m", memBigBytes)}
	bigMeta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Annotations: big} }
	var fills []string
	for i := range memFillCount {
		fills = append(fills, fmt.Sprintf("%s%03d", memFillPrefix, i))
	}
	defer func() {
		for _, n := range fills {
			_ = s.a.Client.CoreV1().ServiceAccounts(aNS).Delete(ctx, n, metav1.DeleteOptions{})
		}
		_ = s.a.Client.CoreV1().Services(aNS).Delete(ctx, "membound-svc", metav1.DeleteOptions{})
		_ = s.a.Client.CoreV1().Services(aNS).Delete(ctx, "membound-ep", metav1.DeleteOptions{})
		_ = s.a.Client.CoreV1().ServiceAccounts(aNS).Delete(ctx, "membound-sa", metav1.DeleteOptions{})
		_ = s.a.Client.CoreV1().Pods(aNS).Delete(ctx, "membound-pod", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
		_ = s.a.Client.DiscoveryV1().EndpointSlices(aNS).Delete(ctx, "membound-ep-1", metav1.DeleteOptions{})
		_ = s.a.Client.CoreV1().PersistentVolumeClaims(aNS).Delete(ctx, "membound-pvc", metav1.DeleteOptions{})
		_ = s.a.Client.CoreV1().Namespaces().Delete(ctx, memBigNS, metav1.DeleteOptions{})
		s.setPolicyName(t, s.a.Name, "")
		_ = s.c.Delete(ctx, tp)
	}()

	// A selector-less Service, small: its EndpointSlice below is the tenant's to write.
	if _, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "membound-ep"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	itest.Eventually(t, maxWait, "A's small selector-less Service synced", func(ctx context.Context) error {
		_, err := s.super.CoreV1().Services(s.aSuperNS).Get(ctx, "membound-ep", metav1.GetOptions{})
		return err
	})

	h0 := liveHeap()
	create := []struct {
		kind, ns, name string
		do             func(ctx context.Context) error
		superCopy      func(ctx context.Context) error // nil error: a super copy exists
	}{
		{"Service", aNS, "membound-svc", func(ctx context.Context) error {
			_, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, &corev1.Service{ObjectMeta: bigMeta("membound-svc"),
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "membound"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
			return err
		}, func(ctx context.Context) error {
			_, err := s.super.CoreV1().Services(s.aSuperNS).Get(ctx, "membound-svc", metav1.GetOptions{})
			return err
		}},
		{"ServiceAccount", aNS, "membound-sa", func(ctx context.Context) error {
			_, err := s.a.Client.CoreV1().ServiceAccounts(aNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: bigMeta("membound-sa")}, metav1.CreateOptions{})
			return err
		}, func(ctx context.Context) error {
			_, err := s.super.CoreV1().ServiceAccounts(s.aSuperNS).Get(ctx, "membound-sa", metav1.GetOptions{})
			return err
		}},
		{"Pod", aNS, "membound-pod", func(ctx context.Context) error {
			p := basePod("membound-pod")
			p.Annotations = big
			_, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, p, metav1.CreateOptions{})
			return err
		}, func(ctx context.Context) error {
			_, err := s.super.CoreV1().Pods(s.aSuperNS).Get(ctx, "membound-pod", metav1.GetOptions{})
			return err
		}},
		{"Namespace", "", memBigNS, func(ctx context.Context) error {
			if _, err := s.a.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: bigMeta(memBigNS)}, metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err := s.a.Client.CoreV1().ConfigMaps(memBigNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "inside"},
				Data: map[string]string{"a": "b"}}, metav1.CreateOptions{})
			return err
		}, func(ctx context.Context) error {
			if _, err := s.super.CoreV1().Namespaces().Get(ctx, s.superNSOf(memBigNS), metav1.GetOptions{}); err != nil {
				return err
			}
			_, err := s.super.CoreV1().ConfigMaps(s.superNSOf(memBigNS)).Get(ctx, "inside", metav1.GetOptions{})
			return err
		}},
		{"EndpointSlice", aNS, "membound-ep-1", func(ctx context.Context) error {
			m := bigMeta("membound-ep-1")
			m.Labels = map[string]string{discoveryv1.LabelServiceName: "membound-ep"}
			_, err := s.a.Client.DiscoveryV1().EndpointSlices(aNS).Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: m,
				AddressType: discoveryv1.AddressTypeIPv4}, metav1.CreateOptions{})
			return err
		}, func(ctx context.Context) error {
			l, err := s.super.DiscoveryV1().EndpointSlices(s.aSuperNS).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil // not a copy
			}
			for _, e := range l.Items {
				if e.Name == "membound-ep-1" || strings.Contains(e.Annotations["tenancy.vcsyncer.io/name"], "membound-ep-1") {
					return nil
				}
			}
			return apierrors.NewNotFound(discoveryv1.Resource("endpointslices"), "membound-ep-1")
		}},
		{"PersistentVolumeClaim", aNS, "membound-pvc", func(ctx context.Context) error {
			_, err := s.a.Client.CoreV1().PersistentVolumeClaims(aNS).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: bigMeta("membound-pvc"),
				Spec: claimSpec(nil)}, metav1.CreateOptions{})
			return err
		}, func(ctx context.Context) error {
			_, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(ctx, "membound-pvc", metav1.GetOptions{})
			return err
		}},
	}
	c0 := map[string]float64{}
	for _, o := range create {
		c0[o.kind] = denials(s.a.Name, []string{o.kind}, []string{string(policy.RuleObjectSize)})
	}
	cFill0 := denials(s.a.Name, []string{"ServiceAccount"}, []string{string(policy.RuleCachedBytes)})
	for _, o := range create {
		if err := o.do(ctx); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating %s %s in tenant A: %v", o.kind, o.name, err)
		}
	}
	fillAnn := map[string]string{"note": strings.Repeat("f", memFillBytes)}
	for _, n := range fills {
		if _, err := s.a.Client.CoreV1().ServiceAccounts(aNS).Create(ctx, &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: n, Annotations: fillAnn}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	mc, err := metadata.NewForConfig(s.env.Super.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	superFills := func(ctx context.Context) (map[string]bool, error) {
		return superNamesWithPrefix(ctx, mc, "serviceaccounts", s.aSuperNS, memFillPrefix)
	}
	escaped := func(ctx context.Context) error {
		var errs []error
		for _, o := range create {
			if err := o.superCopy(ctx); err == nil {
				errs = append(errs, fmt.Errorf("%s %s (%d bytes of annotations, over limits.maxObjectBytes %d) has a super copy", o.kind, o.name, memBigBytes, memObjectCap))
			}
		}
		if got, err := superFills(ctx); err == nil && int64(len(got))*memFillBytes > memCachedCap {
			errs = append(errs, fmt.Errorf("%d ServiceAccounts of %d bytes were copied to %s, more than limits.maxCachedBytes (%d bytes)", len(got), memFillBytes, s.aSuperNS, memCachedCap))
		}
		return errors.Join(errs...)
	}

	// Every object over a cap is refused, visibly, and none escapes meanwhile.
	pending := map[string]attack{}
	for _, o := range create {
		pending[o.kind] = attack{kind: o.kind, ns: o.ns, names: []string{o.name}, rules: []string{string(policy.RuleObjectSize)}}
	}
	deadline := time.Now().Add(2 * maxWait)
	for len(pending) > 0 {
		if err := escaped(ctx); err != nil {
			t.Errorf("ATTACK ESCAPED: %v", err)
			break
		}
		var why []string
		for k, a := range pending {
			if ok, w := s.signalled(ctx, a, c0[k]); ok {
				delete(pending, k)
			} else {
				why = append(why, w)
			}
		}
		if len(pending) > 0 && time.Now().After(deadline) {
			t.Errorf("no refusal signal within %s: %s", 2*maxWait, strings.Join(why, "; "))
			break
		}
		time.Sleep(poll)
	}
	if t.Failed() {
		return
	}
	s.checkPodScheduledDenied(t, aNS, "membound-pod")

	// Every fill ServiceAccount is either synced or refused (rule cachedBytes).
	itest.Eventually(t, 3*time.Minute, "every fill ServiceAccount synced or refused", func(ctx context.Context) error {
		if err := escaped(ctx); err != nil {
			return err
		}
		got, err := superFills(ctx)
		if err != nil {
			return err
		}
		refused := denials(s.a.Name, []string{"ServiceAccount"}, []string{string(policy.RuleCachedBytes)}) - cFill0
		if len(got)+int(refused) < memFillCount {
			return itest.Errorf("%d synced + %v refused < %d", len(got), refused, memFillCount)
		}
		return nil
	})
	if err := escaped(ctx); err != nil {
		t.Fatalf("ATTACK ESCAPED: %v", err)
	}

	// The bytes the syncer holds for A stay under the cap.
	held := cachedBytes(s.a.Name)
	growth := int64(liveHeap()) - int64(h0)
	t.Logf("bytes held for tenant A: %.0f (limits.maxCachedBytes %d); tenant A created %d bytes of annotations; syncer live heap growth %d MB",
		held, memCachedCap, memFillCount*memFillBytes+len(create)*memBigBytes, growth>>20)
	if held < 0 || held > memCachedCap {
		t.Errorf("the syncer holds %.0f bytes for tenant A, over its limits.maxCachedBytes %d", held, memCachedCap)
	}
	if bound := int64(2*memCachedCap + heapSlack); growth > bound {
		t.Errorf("the syncer's live heap grew by %d MB, more than 2 × limits.maxCachedBytes + %d MB", growth>>20, heapSlack>>20)
	}

	// The provider sees it: A's Tenant has WithinMemoryBound=False.
	itest.Eventually(t, maxWait, "tenant A's Tenant has WithinMemoryBound=False", func(ctx context.Context) error {
		var tn tenancyv1alpha1.Tenant
		if err := s.c.Get(ctx, client.ObjectKey{Name: s.a.Name}, &tn); err != nil {
			return err
		}
		c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionWithinMemoryBound)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "MemoryBoundReached" {
			return itest.Errorf("condition %+v", c)
		}
		return nil
	})

	// Tenant B is unaffected: a new Pod of B syncs to Running.
	s.bPodRuns(t, "web-during-membound")

	// Room again: A deletes the synced fill ServiceAccounts; the ones kept out are synced.
	synced, err := superFills(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(synced) == memFillCount {
		t.Fatalf("every fill ServiceAccount was synced: nothing was kept out")
	}
	deleteAndWaitReadmitted(t, "ServiceAccounts", synced, memFillCount, func(ctx context.Context, n string) error {
		return s.a.Client.CoreV1().ServiceAccounts(aNS).Delete(ctx, n, metav1.DeleteOptions{})
	}, superFills)
	t.Logf("bytes held for tenant A after readmission: %.0f (limits.maxCachedBytes %d)", cachedBytes(s.a.Name), memCachedCap)
}
