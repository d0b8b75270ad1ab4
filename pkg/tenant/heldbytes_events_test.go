package tenant

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/eventcache"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// forgedEvent returns a tenant Event labelled as the syncer's copy, with n bytes of
// annotations: what a tenant can create to make the syncer's Event informer cache it.
func forgedEvent(name string, n int) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1",
		Labels:      map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue},
		Annotations: map[string]string{"pad": strings.Repeat("e", n)}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web"},
		Reason:         "Forged", Message: strings.Repeat("m", n), Type: corev1.EventTypeNormal}
}

// Event copies (the tenant's Events labelled as the syncer's, which a tenant can forge) are
// cached in a bounded form and counted like any held kind: each takes an entry
// (limits.maxCachedObjects) and its bytes (limits.maxCachedBytes); past the byte cap they are
// stubs, and a deletion frees the bytes.
func TestEventCopiesAreBounded(t *testing.T) {
	cached := resource.MustParse("4Ki")
	c := &Cluster{Name: "t"}
	c.SetPolicy(policy.Resolve(&tenancyv1alpha1.TenantPolicySpec{}, &tenancyv1alpha1.TenantPolicySpec{
		Limits: &tenancyv1alpha1.LimitsPolicy{MaxCachedBytes: &cached}}))
	var stubs, full int
	var cachedBytes int64
	for i := range 20 {
		got := c.Readmit(forgedEvent(fmt.Sprintf("e%02d", i), 9000))
		cp, ok := got.(*eventcache.Copy)
		if !ok {
			t.Fatalf("a tenant Event copy is cached as %T, want *eventcache.Copy", got)
		}
		cachedBytes += policy.ObjectBytes(cp)
		if IsHeldOut(cp) {
			stubs++
		} else {
			full++
		}
	}
	if got := c.Held.Entries(); got != 20 {
		t.Errorf("%d entries counted for 20 Event copies, want 20 (limits.maxCachedObjects)", got)
	}
	held, out := c.Held.Totals()
	if held == 0 || held > 4*1024 || full == 0 || stubs == 0 || out != stubs {
		t.Errorf("held %d bytes (cap 4Ki), %d copies in full, %d stubs (%d counted held out); want bytes counted within the cap and the rest stubs",
			held, full, stubs, out)
	}
	if limit := int64(20 * 1024); cachedBytes > limit {
		t.Errorf("20 Event copies of 18 KB take %d bytes in the cache, want at most %d", cachedBytes, limit)
	}
	if !c.Held.Release(HeldKey{Kind: "Event", Namespace: "ns", Name: "e00"}, "uid-e00") {
		t.Error("deleting an Event copy held in full freed nothing")
	}
}

// CountObjects counts the syncer's Event copies (the label selects them; the apiserver gives
// no remainingItemCount for a selected list, so they are paged through) only when all the
// tenant's Events might take the count over the cap: the tenant's own Events are not counted.
func TestCountObjectsCountsEventCopies(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	for i := range 50 {
		if _, err := cs.CoreV1().Events("ns").Create(ctx, forgedEvent(fmt.Sprintf("copy-%02d", i), 10), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		own := forgedEvent(fmt.Sprintf("own-%02d", i), 10)
		own.Labels = nil
		if _, err := cs.CoreV1().Events("ns").Create(ctx, own, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := CountObjects(ctx, cs, 55, nil); err != nil || n != 50 {
		t.Errorf("CountObjects(limit 55) = %d, %v; want the 50 copies, not the tenant's own 10 Events", n, err)
	}
	if n, err := CountObjects(ctx, cs, 30, nil); err != nil || n <= 30 {
		t.Errorf("CountObjects(limit 30) = %d, %v; want over 30", n, err)
	}
	if n, err := CountObjects(ctx, cs, 100, nil); err != nil || n > 100 {
		t.Errorf("CountObjects(limit 100) = %d, %v; want within 100", n, err)
	}
}
