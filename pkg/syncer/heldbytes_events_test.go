package syncer

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/eventcache"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The syncer's Event copies in a tenant are held like any bounded kind: a copy beyond
// limits.maxCachedBytes is a stub, it is readmitted (read from the tenant apiserver, cached as
// its record, nothing enqueued for it) once the cap is raised, and deleting a copy (the
// tenant's --event-ttl) frees its bytes through the tenant Event informer's handler.
func TestEventCopiesHeldReadmittedAndReleased(t *testing.T) {
	ctx := context.Background()
	s, c := capFixture(t, "held-events", 100)
	heldPolicy(c, "600")
	inf := s.resources[resources.KindEvent].TenantInformer(c)
	idx := inf.GetIndexer()
	mk := func(name string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1",
			Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue}},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "app", Name: "web"}, Reason: "Scheduled", Count: 1}
	}
	var names []string
	for i := range 3 {
		e := mk(fmt.Sprintf("web.%d", i))
		names = append(names, e.Name)
		if _, err := c.Client.CoreV1().Events("app").Create(ctx, e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := idx.Add(c.Readmit(e)); err != nil {
			t.Fatal(err)
		}
	}
	last, _, _ := idx.GetByKey("app/" + names[2])
	if !tenant.IsHeldOut(last) {
		t.Fatalf("three Event copies fit in 600 bytes: the fixture is wrong (%T)", last)
	}
	heldPolicy(c, "64Ki")
	before := s.down.Size() + s.up.Size()
	s.gate.ReadmitOnce(c)
	got, _, _ := idx.GetByKey("app/" + names[2])
	if cp, ok := got.(*eventcache.Copy); !ok || tenant.IsHeldOut(cp) || cp.Digest != eventcache.ShownDigest(mk(names[2])) {
		t.Fatalf("the Event copy is not cached as its record after the cap was raised: %+v", got)
	}
	if after := s.down.Size() + s.up.Size(); after != before {
		t.Errorf("readmitting an Event copy enqueued %d requests, want none (the Event pipeline compares on the next change)", after-before)
	}
	held, _ := c.Held.Totals()
	h := s.gate.ReleaseEventsHandler(c)
	first, _, _ := idx.GetByKey("app/" + names[0])
	h.OnDelete(first)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "app/" + names[1], Obj: func() any { o, _, _ := idx.GetByKey("app/" + names[1]); return o }()})
	if after, _ := c.Held.Totals(); after >= held || c.Held.Entries() != 1 {
		t.Errorf("deleting two copies: held %d → %d bytes, %d entries left; want bytes freed and one entry", held, after, c.Held.Entries())
	}
}
