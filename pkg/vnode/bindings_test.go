package vnode

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBindings(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	b := NewBindings()
	b.AddPod("a", "n1", "ns/p1", t0)
	b.AddPod("a", "n1", "ns/p2", t0)
	b.AddPod("a", "n1", "ns/p2", t0.Add(time.Minute)) // idempotent: lastActive unchanged
	b.AddPod("b", "n1", "ns/p1", t0)
	b.Touch("a", "n2", t0)

	if pods, last, vn, ok := b.Get("a", "n1"); !ok || pods != 2 || !last.Equal(t0) || vn {
		t.Errorf("a/n1: pods %d last %v vnode %v ok %v", pods, last, vn, ok)
	}
	if _, _, vn, _ := b.Get("a", "n2"); !vn {
		t.Error("a/n2: Touch did not mark the vNode as created")
	}
	if got := b.Counts(); !cmp.Equal(got, map[string]int{"a": 1, "b": 0}) {
		t.Errorf("Counts() = %v", got)
	}
	if got := b.TenantsOf("n1"); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("TenantsOf(n1) = %v", got)
	}
	if got := b.Nodes("a"); !cmp.Equal(got, []string{"n1", "n2"}) {
		t.Errorf("Nodes(a) = %v", got)
	}
	// A node with Pods is never forgotten as idle.
	if b.ForgetIdle("a", "n1", t0.Add(time.Hour)) {
		t.Error("forgot a node with Pods")
	}
	b.RemovePod("a", "n1", "ns/p1", t0.Add(time.Second))
	b.RemovePod("a", "n1", "ns/p2", t0.Add(2*time.Second))
	b.RemovePod("a", "n1", "ns/unknown", t0.Add(time.Hour)) // no effect
	if pods, last, _, _ := b.Get("a", "n1"); pods != 0 || !last.Equal(t0.Add(2*time.Second)) {
		t.Errorf("after removal: pods %d last %v", pods, last)
	}
	// Idle, but active after notAfter: kept.
	if b.ForgetIdle("a", "n1", t0.Add(time.Second)) {
		t.Error("forgot a node active after notAfter")
	}
	if !b.ForgetIdle("a", "n1", t0.Add(2*time.Second)) {
		t.Error("did not forget an idle node")
	}
	if _, _, _, ok := b.Get("a", "n1"); ok {
		t.Error("a/n1 still recorded")
	}
	if got := b.TenantsOf("n1"); !cmp.Equal(got, []string{"b"}) {
		t.Errorf("TenantsOf(n1) = %v", got)
	}
	b.ForgetTenant("b")
	if got := b.TenantsOf("n1"); len(got) != 0 {
		t.Errorf("TenantsOf(n1) after ForgetTenant = %v", got)
	}
}

func TestBindingsSnapshotRestore(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	b := NewBindings()
	b.AddPod("a", "n1", "ns/p2", t0)
	b.AddPod("a", "n1", "ns/p1", t0)
	b.Touch("a", "n2", t0.Add(time.Second))
	b.AddPod("b", "n3", "x/y", t0)
	snap := b.Snapshot()
	want := Snapshot{Tenants: map[string]map[string]NodeBinding{
		"a": {"n1": {Pods: []string{"ns/p1", "ns/p2"}, LastActive: t0}, "n2": {LastActive: t0.Add(time.Second), VNode: true}},
		"b": {"n3": {Pods: []string{"x/y"}, LastActive: t0}},
	}}
	if diff := cmp.Diff(want, snap); diff != "" {
		t.Fatalf("snapshot (-want +got):\n%s", diff)
	}
	// Through JSON, as a checkpoint would store it.
	data, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var decoded Snapshot
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	r := NewBindings()
	r.AddPod("stale", "n9", "p", t0) // replaced by Restore
	r.Restore(decoded)
	if diff := cmp.Diff(want, r.Snapshot()); diff != "" {
		t.Errorf("restored (-want +got):\n%s", diff)
	}
	// The copy is deep: changing the original changes neither.
	b.RemovePod("a", "n1", "ns/p1", t0)
	if pods, _, _, _ := r.Get("a", "n1"); pods != 2 {
		t.Errorf("restored shares state with the original: %d Pods", pods)
	}
}
