package source

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

func cm(name, uid, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), ResourceVersion: rv},
		Data: map[string]string{"k": rv}}
}

func TestDiff(t *testing.T) {
	r := NewRegistry()
	s := r.Source("tenant/a/ConfigMap")
	s.Ack("ns/same", ObjectVersion{UID: "1", ResourceVersion: "5"})
	s.Ack("ns/changed", ObjectVersion{UID: "2", ResourceVersion: "5"})
	s.Ack("ns/reused", ObjectVersion{UID: "3", ResourceVersion: "5"})
	s.Ack("ns/gone", ObjectVersion{UID: "4", ResourceVersion: "5"})
	objs := []any{cm("same", "1", "5"), cm("changed", "2", "9"), cm("reused", "33", "5"), cm("new", "5", "7")}
	changed, vanished := s.Diff(objs, nil, nil)
	var names []string
	for _, m := range changed {
		names = append(names, m.GetName())
	}
	sort.Strings(names)
	// A name reused with a new UID counts as changed even at an equal resourceVersion (R17).
	if want := []string{"changed", "new", "reused"}; !reflect.DeepEqual(names, want) {
		t.Errorf("changed = %v, want %v", names, want)
	}
	if _, ok := vanished["ns/gone"]; !ok || len(vanished) != 1 {
		t.Errorf("vanished = %v, want ns/gone", vanished)
	}
	// Filters: nothing kept, nothing reported.
	changed, vanished = s.Diff(objs, func(metav1.Object) bool { return false }, func(string, ObjectVersion) bool { return false })
	if len(changed) != 0 || len(vanished) != 0 {
		t.Errorf("filtered diff = %v, %v; want empty", changed, vanished)
	}
}

// countingLW is an apiserver stand-in: it counts Lists and serves one list and an idle watch.
type countingLW struct {
	lists atomic.Int32
	items []corev1.ConfigMap
	rv    string
}

func (l *countingLW) lw() *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			l.lists.Add(1)
			return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: l.rv}, Items: l.items}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}
}

func startInformer(t *testing.T, src *Source, api *countingLW) cache.SharedIndexInformer {
	t.Helper()
	k := kinds[reflect.TypeOf(&corev1.ConfigMap{})]
	return runInformer(t, src, &resumeLW{real: api.lw(), src: src, kind: k}, nil)
}

// ackAll acks every object in inf's cache in src, as the syncer's handlers do once they have
// enqueued them.
func ackAll(src *Source, inf cache.SharedIndexInformer) {
	for _, o := range inf.GetStore().List() {
		m := o.(metav1.Object)
		src.Ack(Key(m), VersionOf(m))
	}
}

// runInformer runs a ConfigMap informer over lw as src's (attached with record as its
// list-watch) until the test ends, and waits until it has synced.
func runInformer(t *testing.T, src *Source, lw *resumeLW, record *resumeLW) cache.SharedIndexInformer {
	t.Helper()
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	src.setInformer(inf, record)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	return inf
}

// TestResumeFromCheckpointWithoutList checks the fast path: a restored Source answers its
// informer's first List from the checkpoint (no List reaches the apiserver), the cache holds
// the checkpointed objects at the checkpointed position, and the resume mode is "watch".
func TestResumeFromCheckpointWithoutList(t *testing.T) {
	var modes []string
	avoided := 0
	r := NewRegistry()
	r.OnMode = func(_, m string) { modes = append(modes, m) }
	r.OnListAvoided = func(string) { avoided++ }

	// First process: cold start from the apiserver.
	api := &countingLW{items: []corev1.ConfigMap{*cm("a", "1", "3"), *cm("b", "2", "4")}, rv: "10"}
	src := r.Source("tenant/x/ConfigMap")
	inf := startInformer(t, src, api)
	if got := api.lists.Load(); got != 1 || src.Mode() != ModeCold {
		t.Fatalf("cold start: %d lists, mode %q; want 1, cold", got, src.Mode())
	}
	ackAll(src, inf)
	states, err := r.Checkpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].Position != "10" || len(states[0].Objects) != 2 || len(states[0].Acked) != 2 {
		t.Fatalf("checkpoint = %+v", states)
	}

	// Second process: resumed.
	r2 := NewRegistry()
	r2.OnMode = r.OnMode
	r2.OnListAvoided = r.OnListAvoided
	r2.Restore(states)
	api2 := &countingLW{rv: "99"} // a List would return nothing: the cache must come from the checkpoint
	src2 := r2.Source("tenant/x/ConfigMap")
	inf2 := startInformer(t, src2, api2)
	if got := api2.lists.Load(); got != 0 {
		t.Errorf("resume within the watch window listed %d times, want 0", got)
	}
	if src2.Mode() != ModeWatch || avoided != 1 {
		t.Errorf("mode %q, lists avoided %d; want watch, 1", src2.Mode(), avoided)
	}
	if got := inf2.LastSyncResourceVersion(); got != "10" {
		t.Errorf("resumed position %q, want 10", got)
	}
	obj, ok, _ := inf2.GetStore().GetByKey("ns/b")
	if !ok || obj.(*corev1.ConfigMap).Data["k"] != "4" {
		t.Errorf("checkpointed object ns/b not restored: %v", obj)
	}
	changed, vanished := src2.Diff(inf2.GetStore().List(), nil, nil)
	if len(changed) != 0 || len(vanished) != 0 {
		t.Errorf("nothing changed, yet the diff found %d changed and %d vanished", len(changed), len(vanished))
	}

	// A later List (after a 410) goes to the apiserver and is a relist-diff.
	if _, err := (&resumeLW{real: api2.lw(), src: src2, kind: kinds[reflect.TypeOf(&corev1.ConfigMap{})]}).List(metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if api2.lists.Load() != 1 || src2.Mode() != ModeRelistDiff {
		t.Errorf("after a relist: %d lists, mode %q; want 1, relist-diff", api2.lists.Load(), src2.Mode())
	}
	if want := []string{ModeCold, ModeWatch, ModeRelistDiff}; !reflect.DeepEqual(modes, want) {
		t.Errorf("mode changes %v, want %v", modes, want)
	}
}

// TestCheckIdentity checks that restored state of another cluster is discarded.
func TestCheckIdentity(t *testing.T) {
	r := NewRegistry()
	r.Restore([]State{
		{ID: "tenant/a/Pod", Position: "5", HasObjects: true, Acked: map[string]ObjectVersion{"ns/p": {UID: "1"}}, Identity: "old"},
		{ID: "tenant/b/Pod", Position: "5", HasObjects: true, Acked: map[string]ObjectVersion{"ns/p": {UID: "1"}}, Identity: "same"},
	})
	if n := r.CheckIdentity("tenant/a/", "new"); n != 1 {
		t.Errorf("CheckIdentity discarded %d sources, want 1", n)
	}
	if n := r.CheckIdentity("tenant/b/", "same"); n != 0 {
		t.Errorf("CheckIdentity discarded %d sources of the same cluster, want 0", n)
	}
	a, _ := r.Lookup("tenant/a/Pod")
	if p := a.takePending(); p != nil || a.Mode() != ModeCold {
		t.Errorf("discarded source still resumes: pending %v, mode %q", p, a.Mode())
	}
	b, _ := r.Lookup("tenant/b/Pod")
	if p := b.takePending(); p == nil {
		t.Error("source of the same cluster lost its state")
	}
	states, _ := r.Checkpoint(nil)
	for _, s := range states {
		if s.ID == "tenant/a/Pod" && (len(s.Acked) != 0 || s.Identity != "new") {
			t.Errorf("discarded source checkpoints %+v", s)
		}
	}
}

func TestForgetAndUnackWhere(t *testing.T) {
	r := NewRegistry()
	r.Source("tenant/a/Pod")
	r.Source("tenant/ab/Pod")
	s := r.Source("super/Pod")
	s.Ack("x/1", ObjectVersion{Owner: &Owner{TenantUID: "a"}})
	s.Ack("x/2", ObjectVersion{Owner: &Owner{TenantUID: "b"}})
	r.Forget("tenant/a/")
	if _, ok := r.Lookup("tenant/a/Pod"); ok {
		t.Error("tenant/a/Pod not forgotten")
	}
	if _, ok := r.Lookup("tenant/ab/Pod"); !ok {
		t.Error("tenant/ab/Pod forgotten with tenant a")
	}
	s.UnackWhere(func(_ string, v ObjectVersion) bool { return v.Owner.TenantUID == "a" })
	_, vanished := s.Diff(nil, nil, nil)
	if _, ok := vanished["x/2"]; !ok || len(vanished) != 1 {
		t.Errorf("after UnackWhere the ack map holds %v, want only x/2", vanished)
	}
}

func TestMergeAcksReplacesOnlyMatchingEntries(t *testing.T) {
	r := NewRegistry()
	src := r.Source("super/Pod")
	mine := &Owner{Tenant: "a", TenantUID: "uid-a"}
	other := &Owner{Tenant: "b", TenantUID: "uid-b"}
	src.Ack("ns-a/stale", ObjectVersion{UID: "1", ResourceVersion: "1", Owner: mine})
	src.Ack("ns-b/kept", ObjectVersion{UID: "2", ResourceVersion: "2", Owner: other})
	r.MergeAcks([]State{{ID: "super/Pod", Acked: map[string]ObjectVersion{
		"ns-a/new":   {UID: "3", ResourceVersion: "3", Owner: mine},
		"ns-b/wrong": {UID: "4", ResourceVersion: "4", Owner: other},
	}}}, func(_ string, v ObjectVersion) bool { return v.Owner != nil && v.Owner.TenantUID == "uid-a" })
	changed, vanished := src.Diff(nil, nil, nil)
	if len(changed) != 0 {
		t.Fatalf("changed = %v", changed)
	}
	want := []string{"ns-a/new", "ns-b/kept"}
	if len(vanished) != len(want) {
		t.Fatalf("ack map after merge = %v, want keys %v", vanished, want)
	}
	for _, k := range want {
		if _, ok := vanished[k]; !ok {
			t.Errorf("ack map after merge lacks %s: %v", k, vanished)
		}
	}
}

func TestIsAcked(t *testing.T) {
	src := NewRegistry().Source("super/Pod")
	v := ObjectVersion{UID: "u", ResourceVersion: "5"}
	if src.IsAcked("ns/a", v) {
		t.Error("IsAcked before any Ack")
	}
	src.Ack("ns/a", v)
	if !src.IsAcked("ns/a", v) {
		t.Error("not IsAcked after Ack of that version")
	}
	for _, other := range []ObjectVersion{{UID: "u", ResourceVersion: "6"}, {UID: "w", ResourceVersion: "5"}} {
		if src.IsAcked("ns/a", other) {
			t.Errorf("IsAcked(%v) after Ack of %v", other, v)
		}
	}
}

// TestDigestFollowsObjectsAndAcks checks that Registry.Digest changes when a cached object's
// resourceVersion, an ack entry or the set of Sources changes, does not depend on the order of
// the cache or of the ack map, and comes back when the state does.
func TestDigestFollowsObjectsAndAcks(t *testing.T) {
	r := NewRegistry()
	r.OnMode = func(string, string) {}
	src := r.Source("tenant/x/ConfigMap")
	inf := startInformer(t, src, &countingLW{items: []corev1.ConfigMap{*cm("a", "1", "3"), *cm("b", "2", "4")}, rv: "10"})
	src.Ack("ns/a", ObjectVersion{UID: "1", ResourceVersion: "3"})
	d0 := r.Digest(nil)
	if d := r.Digest(nil); d != d0 {
		t.Fatalf("digest of the same state changed: %x, then %x", d0, d)
	}
	store := inf.GetStore()
	if err := store.Update(cm("b", "2", "5")); err != nil {
		t.Fatal(err)
	}
	d1 := r.Digest(nil)
	if d1 == d0 {
		t.Error("a cached object's new resourceVersion left the digest unchanged")
	}
	if err := store.Update(cm("b", "2", "4")); err != nil {
		t.Fatal(err)
	}
	if d := r.Digest(nil); d != d0 {
		t.Errorf("the state came back but the digest did not: %x, want %x", d, d0)
	}
	src.Ack("ns/b", ObjectVersion{UID: "2", ResourceVersion: "4"})
	d2 := r.Digest(nil)
	if d2 == d0 {
		t.Error("a new ack entry left the digest unchanged")
	}
	src.Ack("ns/b", ObjectVersion{UID: "2", ResourceVersion: "4", Owner: &Owner{Tenant: "x", Name: "b"}})
	if d := r.Digest(nil); d == d2 {
		t.Error("an ack entry's new owner left the digest unchanged")
	}
	src.Unack("ns/b")
	if d := r.Digest(nil); d != d0 {
		t.Errorf("after the Unack the digest is %x, want %x", d, d0)
	}
	r.Source("tenant/y/ConfigMap").Ack("ns/a", ObjectVersion{UID: "1", ResourceVersion: "3"})
	if d := r.Digest(nil); d == d0 {
		t.Error("a new Source left the digest unchanged")
	}
	if d := r.Digest(func(id string) bool { return id == "tenant/x/ConfigMap" }); d != d0 {
		t.Errorf("the filtered digest is %x, want the one of tenant/x alone, %x", d, d0)
	}
}

// A tenant removed while a checkpoint is being taken (its Sources forgotten, then its entries
// in the super Sources' ack maps) is left out of that checkpoint: the super Sources may have
// been read after part of its entries went, and a shard resuming the tenant from such a
// checkpoint would reconcile every super object of those kinds again.
func TestCheckpointLeavesOutSourcesForgottenWhileItRuns(t *testing.T) {
	r := NewRegistry()
	owned := func(_ string, v ObjectVersion) bool { return v.Owner != nil && v.Owner.TenantUID == "uid-1" }
	for _, kind := range []string{"ConfigMap", "Secret"} {
		r.Source("super/"+kind).Ack("ns/x", ObjectVersion{UID: "u", ResourceVersion: "1", Owner: &Owner{TenantUID: "uid-1"}})
		r.Source("tenant/t1/"+kind).Ack("app/x", ObjectVersion{UID: "t", ResourceVersion: "1"})
	}
	// The removal runs between the reads of the two super Sources.
	r.read = func(id string) {
		if id == "super/ConfigMap" {
			r.Forget("tenant/t1/")
			r.Source("super/Secret").UnackWhere(owned)
		}
	}
	states, err := r.Checkpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		if strings.HasPrefix(st.ID, "tenant/t1/") {
			t.Errorf("checkpoint holds %s of the tenant removed while it ran (its super Secret entries are gone)", st.ID)
		}
	}
}

// aheadInformer is an informer whose reflector has queued events its cache has not applied
// yet: its LastSyncResourceVersion runs ahead of the cache, as a real informer's does while
// events wait in its queue.
type aheadInformer struct {
	cache.SharedIndexInformer
	reflectorRV string
}

func (a aheadInformer) LastSyncResourceVersion() string { return a.reflectorRV }

// TestCheckpointPositionIsTheCaches checks that a checkpoint pairs the cached objects with the
// cache's own position. The reflector has queued the deletion of a cached ConfigMap (at 9) that
// the cache has not applied: a checkpoint at 9 holding the ConfigMap would resume watching
// after its deletion and keep it cached for good.
func TestCheckpointPositionIsTheCaches(t *testing.T) {
	reg := NewRegistry()
	src := reg.Source("super/ConfigMap")
	api := &countingLW{rv: "5", items: []corev1.ConfigMap{*cm("a", "uid-a", "3")}}
	inf := startInformer(t, src, api)
	src.setInformer(aheadInformer{SharedIndexInformer: inf, reflectorRV: "9"}, nil)
	st, err := src.checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Objects) != 1 {
		t.Fatalf("checkpoint holds %d objects, want the cached one", len(st.Objects))
	}
	if st.Position != "5" {
		t.Errorf("checkpoint position %q, want the cache's 5 (the list it applied), not the reflector's 9", st.Position)
	}
}
