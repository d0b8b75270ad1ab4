package isolation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// Shape of the cluster-scoped attack: tenant A (limits.maxObjectBytes memObjectCap,
// limits.maxCachedBytes memCachedCap) creates kindBigCount PriorityClasses and as many Nodes in
// its own control plane, each carrying kindBigBytes of annotations (16 MB in all): kinds the
// syncer watches in every tenant (to copy public classes up, to keep its vNodes).
const (
	kindBigCount  = 40
	kindBigBytes  = 200 * 1000
	kindPrefix    = "memkind-"
	heldOutGauge  = "vcsyncer_tenant_held_out_objects"
	cachedObjects = "vcsyncer_tenant_cached_objects"
)

// tenantGauge returns gauge name{tenant} from the in-process registry (-1 when it is not
// there).
func tenantGauge(name, tenant string) float64 {
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return -1
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "tenant" && lp.GetValue() == tenant {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// attackMemoryClusterKinds: tenant A creates large PriorityClasses and Nodes in its own
// control plane. The syncer watches those kinds in every tenant; each object over
// limits.maxObjectBytes must be kept out of its caches (a stub, counted in
// vcsyncer_tenant_held_out_objects), the bytes it holds for A stay under
// limits.maxCachedBytes, and B's new Pod still syncs.
func (s *suite) attackMemoryClusterKinds(t *testing.T) {
	ctx := context.Background()
	tp := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a-memkinds"},
		Spec: tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
			MaxObjectBytes: resource.NewQuantity(memObjectCap, resource.BinarySI),
			MaxCachedBytes: resource.NewQuantity(memCachedCap, resource.BinarySI),
		}}}
	if err := s.c.Create(ctx, tp); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s.setPolicyName(t, s.a.Name, tp.Name)
	s.waitPolicy(t, s.a.Name, tp.Name)
	var pcs, nodes []string
	for i := range kindBigCount {
		pcs = append(pcs, fmt.Sprintf("%spc-%03d", kindPrefix, i))
		nodes = append(nodes, fmt.Sprintf("%snode-%03d", kindPrefix, i))
	}
	entries0 := tenantGauge(cachedObjects, s.a.Name)
	defer func() {
		for _, n := range pcs {
			_ = s.a.Client.SchedulingV1().PriorityClasses().Delete(ctx, n, metav1.DeleteOptions{})
		}
		for _, n := range nodes {
			_ = s.a.Client.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
		}
		s.setPolicyName(t, s.a.Name, "")
		_ = s.c.Delete(ctx, tp)
		s.waitEntriesReleased(t, entries0, "tenant A's Nodes and PriorityClasses")
	}()

	out0 := tenantGauge(heldOutGauge, s.a.Name)
	h0 := liveHeap()
	big := map[string]string{"note": strings.Repeat("k", kindBigBytes)}
	for i, n := range pcs {
		if _, err := s.a.Client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
			ObjectMeta: metav1.ObjectMeta{Name: n, Annotations: big}, Value: int32(1000 + i)}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		if _, err := s.a.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n, Annotations: big}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	want := float64(2 * kindBigCount)
	itest.Eventually(t, maxWait, "tenant A's large Nodes and PriorityClasses kept out of the syncer's caches", func(context.Context) error {
		if got := tenantGauge(heldOutGauge, s.a.Name) - out0; got < want {
			return itest.Errorf("ATTACK ESCAPED: %.0f of %.0f tenant Nodes and PriorityClasses of %d bytes (over limits.maxObjectBytes %d) held out; the others are cached in full, uncounted",
				got, want, kindBigBytes, memObjectCap)
		}
		return nil
	})
	held := cachedBytes(s.a.Name)
	growth := int64(liveHeap()) - int64(h0)
	t.Logf("bytes held for tenant A: %.0f (limits.maxCachedBytes %d); A created %d bytes of cluster-scoped objects; syncer live heap growth %d MB",
		held, memCachedCap, 2*kindBigCount*kindBigBytes, growth>>20)
	if held < 0 || held > memCachedCap {
		t.Errorf("the syncer holds %.0f bytes for tenant A, over its limits.maxCachedBytes %d", held, memCachedCap)
	}
	s.bPodRuns(t, "web-during-memkinds")
}

// attackManyTinyObjects: tenant A creates many tiny ConfigMaps, each far under every byte
// cap, past limits.maxCachedObjects. The syncer stops watching A (Synced=False, reason
// TooManyObjects; vcsyncer_tenant_suspended 1) instead of caching an entry for each; B's new
// Pod still syncs; once A deletes them and its policy changes, A is synced again.
func (s *suite) attackManyTinyObjects(t *testing.T) {
	ctx := context.Background()
	base := tenantGauge(cachedObjects, s.a.Name)
	if base < 0 {
		t.Fatalf("no %s for tenant A", cachedObjects)
	}
	limit := int32(base) + 100
	tp := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a-entries"},
		Spec: tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{MaxCachedObjects: &limit}}}
	if err := s.c.Create(ctx, tp); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s.setPolicyName(t, s.a.Name, tp.Name)
	s.waitPolicy(t, s.a.Name, tp.Name)
	const tiny = 300
	defer func() {
		for i := range tiny {
			_ = s.a.Client.CoreV1().ConfigMaps(aNS).Delete(ctx, fmt.Sprintf("tiny-%03d", i), metav1.DeleteOptions{})
		}
		s.setPolicyName(t, s.a.Name, "")
		_ = s.c.Delete(ctx, tp)
		s.waitSynced(t, s.a.Name)
	}()
	for i := range tiny {
		if _, err := s.a.Client.CoreV1().ConfigMaps(aNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("tiny-%03d", i)}},
			metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	itest.Eventually(t, 2*maxWait, "tenant A suspended (Synced=False, TooManyObjects)", func(ctx context.Context) error {
		var tn tenancyv1alpha1.Tenant
		if err := s.c.Get(ctx, client.ObjectKey{Name: s.a.Name}, &tn); err != nil {
			return err
		}
		c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionSynced)
		if c == nil || c.Reason != "TooManyObjects" {
			return itest.Errorf("ATTACK ESCAPED: tenant A with %d more tiny ConfigMaps than its limits.maxCachedObjects %d: Synced %+v; %s %.0f",
				tiny-100, limit, c, cachedObjects, tenantGauge(cachedObjects, s.a.Name))
		}
		if g := tenantGauge("vcsyncer_tenant_suspended", s.a.Name); g != 1 {
			return itest.Errorf("vcsyncer_tenant_suspended = %v", g)
		}
		return nil
	})
	if got := tenantGauge(cachedObjects, s.a.Name); got > float64(limit) {
		t.Errorf("the syncer holds %.0f entries for suspended tenant A, over limits.maxCachedObjects %d", got, limit)
	}
	s.bPodRuns(t, "web-during-entries")
}

// Shape of the forged Event copies attack: forgedEventCount Events of forgedEventBytes of
// annotations each (40 MB in all), labelled as the syncer's copies.
const (
	forgedEventCount = 200
	forgedEventBytes = 200 * 1000
)

// attackForgedEventCopies: tenant A labels its own Events as the syncer's copies of super
// Events, each with 200 KB of annotations, to make the syncer's tenant Event informer hold
// them. Each must take a bounded record in the syncer's memory and be counted like any other
// cached object (vcsyncer_tenant_cached_objects, within limits.maxCachedBytes), so the live
// heap grows by far less than what A wrote; B's new Pod still syncs.
func (s *suite) attackForgedEventCopies(t *testing.T) {
	ctx := context.Background()
	var names []string
	for i := range forgedEventCount {
		names = append(names, fmt.Sprintf("forged-copy.%03d", i))
	}
	// The baseline once earlier subtests' objects have left the caches (the gauge unchanged
	// over 2 s); A's other cached objects (the syncer's own Event copies, which expire) can
	// still come and go by a few meanwhile, hence the 5% slack below.
	entries0 := s.stableEntries(t)
	held0 := cachedBytes(s.a.Name)
	defer func() {
		for _, n := range names {
			_ = s.a.Client.CoreV1().Events(aNS).Delete(ctx, n, metav1.DeleteOptions{})
		}
		s.waitEntriesReleased(t, entries0, "the forged Event copies")
	}()
	h0 := liveHeap()
	pad := map[string]string{"pad": strings.Repeat("e", forgedEventBytes)}
	for _, n := range names {
		if _, err := s.a.Client.CoreV1().Events(aNS).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: n, Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue}, Annotations: pad},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: aNS, Name: "forged"},
			Reason:         "Forged", Message: "a copy the syncer never wrote", Type: corev1.EventTypeNormal,
		}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	itest.Eventually(t, maxWait, "tenant A's forged Event copies counted in the syncer's caches", func(context.Context) error {
		if got := tenantGauge(cachedObjects, s.a.Name) - entries0; got < forgedEventCount*95/100 {
			return itest.Errorf("ATTACK ESCAPED: %.0f of %d Events labelled as the syncer's copies counted in %s; the others are cached uncounted",
				got, forgedEventCount, cachedObjects)
		}
		return nil
	})
	held := cachedBytes(s.a.Name) - held0
	growth := int64(liveHeap()) - int64(h0)
	t.Logf("tenant A wrote %d MB of forged Event copies: %.0f bytes counted held for them, syncer live heap growth %d MB",
		(forgedEventCount*forgedEventBytes)>>20, held, growth>>20)
	if limit := float64(forgedEventCount * 1024); held > limit {
		t.Errorf("the syncer counts %.0f bytes for %d forged Event copies, more than 1 KiB each", held, forgedEventCount)
	}
	if limit := int64(16 << 20); growth > limit {
		t.Errorf("the syncer's live heap grew by %d MB for %d MB of forged Event copies, more than %d MB: their annotations are held",
			growth>>20, (forgedEventCount*forgedEventBytes)>>20, limit>>20)
	}
	s.bPodRuns(t, "web-during-forged-events")
}

// waitEntriesReleased waits until tenant A's entries in the syncer's caches
// (vcsyncer_tenant_cached_objects) are back to at most entries0, what deleted objects took
// (named by what) released: the next subtests count entries from the gauge.
func (s *suite) waitEntriesReleased(t *testing.T, entries0 float64, what string) {
	t.Helper()
	itest.Eventually(t, maxWait, what+" released", func(context.Context) error {
		if got := tenantGauge(cachedObjects, s.a.Name) - entries0; got > 0 {
			return itest.Errorf("%.0f entries left", got)
		}
		return nil
	})
}

// stableEntries returns tenant A's vcsyncer_tenant_cached_objects once it has not changed
// over 2 s (at most maxWait; then its last value).
func (s *suite) stableEntries(t *testing.T) float64 {
	t.Helper()
	prev := tenantGauge(cachedObjects, s.a.Name)
	for deadline := time.Now().Add(maxWait); time.Now().Before(deadline); {
		time.Sleep(2 * time.Second)
		cur := tenantGauge(cachedObjects, s.a.Name)
		if cur == prev {
			return cur
		}
		prev = cur
	}
	return prev
}

// waitSynced waits until Tenant name has Synced=True.
func (s *suite) waitSynced(t *testing.T, name string) {
	t.Helper()
	itest.Eventually(t, 3*maxWait, "Tenant "+name+" synced again", func(ctx context.Context) error {
		var tn tenancyv1alpha1.Tenant
		if err := s.c.Get(ctx, client.ObjectKey{Name: name}, &tn); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionSynced); c == nil || c.Status != metav1.ConditionTrue {
			return itest.Errorf("Synced %+v", c)
		}
		return nil
	})
}
