package source

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

const scopeKey = "example.io/tenant"

func scopedCM(name, tenant, rv string) *corev1.ConfigMap {
	c := cm(name, name+"-uid", rv)
	c.Labels = map[string]string{scopeKey: tenant, "managed": "yes"}
	return c
}

// scopeServer stands in for the apiserver: lists filter by label selector and report rv; every
// watch is a fake the test drives, recorded with its selector and resourceVersion.
type scopeServer struct {
	mu      sync.Mutex
	objects []*corev1.ConfigMap
	rv      string
	lists   []metav1.ListOptions
	watches []*recordedWatch
}

type recordedWatch struct {
	opts metav1.ListOptions
	w    *watch.RaceFreeFakeWatcher
}

func (s *scopeServer) client(t *testing.T) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).ListOptions
		sel, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			t.Errorf("list selector %q: %v", opts.LabelSelector, err)
			return true, nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lists = append(s.lists, opts)
		list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: s.rv}}
		for _, o := range s.objects {
			if sel.Matches(labels.Set(o.Labels)) {
				list.Items = append(list.Items, *o.DeepCopy())
			}
		}
		return true, list, nil
	})
	cs.PrependWatchReactor("configmaps", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w := watch.NewRaceFreeFake()
		s.mu.Lock()
		s.watches = append(s.watches, &recordedWatch{opts: a.(k8stesting.WatchActionImpl).ListOptions, w: w})
		s.mu.Unlock()
		return true, w, nil
	})
	return cs
}

func (s *scopeServer) listCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lists)
}

// waitWatch returns the n-th watch (from 0) once it was opened.
func (s *scopeServer) waitWatch(t *testing.T, n int) *recordedWatch {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		if len(s.watches) > n {
			w := s.watches[n]
			s.mu.Unlock()
			return w
		}
		s.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("watch %d was never opened", n)
	return nil
}

func cachedNames(inf cache.SharedIndexInformer) []string {
	var out []string
	for _, o := range inf.GetStore().List() {
		out = append(out, o.(*corev1.ConfigMap).Name+"@"+o.(*corev1.ConfigMap).ResourceVersion)
	}
	sort.Strings(out)
	return out
}

func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startScoped starts the ConfigMap informer of a Factory on srv that follows scope, resumed
// from states (none: a cold start), after prepare (nil: none) has seen it, and waits until it
// synced and applied the Scope. The informer stops when the test ends.
func startScoped(t *testing.T, srv *scopeServer, scope *Scope, states []State, prepare func(cache.SharedIndexInformer)) (*Registry, cache.SharedIndexInformer) {
	t.Helper()
	reg := NewRegistry()
	reg.Restore(states)
	f := NewFactory(reg, "super", srv.client(t), FactoryOptions{Scope: scope})
	inf := f.Core().V1().ConfigMaps().Informer()
	if prepare != nil {
		prepare(inf)
	}
	f.Start(t.Context().Done())
	if !cache.WaitForCacheSync(t.Context().Done(), inf.HasSynced) {
		t.Fatal("not synced")
	}
	if err := scope.Wait(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	return reg, inf
}

// TestScopeChangeListsOnlyTheAddedValues follows a Scope through an addition and a removal:
// the informer lists only the added value's objects (once, from the watch's position), keeps
// watching with the new selector from the same position, takes from the list only the objects
// not newer than that position (the watch brings the newer ones, in order), drops a removed
// value's objects from its cache without listing, and a checkpoint's position is the last
// event's.
func TestScopeChangeListsOnlyTheAddedValues(t *testing.T) {
	srv := &scopeServer{rv: "10", objects: []*corev1.ConfigMap{
		scopedCM("a1", "A", "5"), scopedCM("a2", "A", "6"), scopedCM("b1", "B", "7"), scopedCM("c1", "C", "8"),
	}}
	scope := NewScope(scopeKey, "A")
	reg := NewRegistry()
	f := NewFactory(reg, "super", srv.client(t), FactoryOptions{
		Tweak: func(o *metav1.ListOptions) { o.LabelSelector = "managed=yes" }, Scope: scope})
	inf := f.Core().V1().ConfigMaps().Informer()
	var deleted, b1Versions []string // b1Versions: b1's resourceVersions in the order the cache took them
	var mu sync.Mutex
	seen := func(o any) {
		if cm := o.(*corev1.ConfigMap); cm.Name == "b1" {
			mu.Lock()
			b1Versions = append(b1Versions, cm.ResourceVersion)
			mu.Unlock()
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { seen(o) }, UpdateFunc: func(_, o any) { seen(o) }, DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			mu.Lock()
			deleted = append(deleted, o.(*corev1.ConfigMap).Name)
			mu.Unlock()
		}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("not synced")
	}
	w0 := srv.waitWatch(t, 0)
	if got, want := w0.opts.LabelSelector, "managed=yes,example.io/tenant in (A)"; got != want {
		t.Errorf("first watch selector %q, want %q", got, want)
	}
	if got, want := cachedNames(inf), []string{"a1@5", "a2@6"}; !slices.Equal(got, want) {
		t.Fatalf("cache %v, want %v", got, want)
	}
	// An event moves the watch's position to 12.
	a1 := scopedCM("a1", "A", "12")
	w0.w.Modify(a1)
	eventually(t, "a1@12 cached", func() bool { return slices.Contains(cachedNames(inf), "a1@12") })

	// Add B: B's objects are listed once, at a resourceVersion not older than 12.
	srv.mu.Lock()
	srv.rv = "15"
	srv.objects[2] = scopedCM("b1", "B", "14")
	srv.mu.Unlock()
	gen := scope.Add("B")
	w1 := srv.waitWatch(t, 1)
	// b1@14 is newer than the watch's position (12): it is not handed over from the list,
	// where it would reach the cache ahead of A's events after 12 and move the cache's
	// position past them; the watch from 12 brings it, after b1@13. The cache takes b1@13
	// and b1@14 in that order, and nothing of b1 before them.
	w1.w.Modify(scopedCM("b1", "B", "13"))
	w1.w.Modify(scopedCM("b1", "B", "14"))
	waitCtx, waitCancel := context.WithTimeout(ctx, 5*time.Second)
	defer waitCancel()
	if err := scope.Wait(waitCtx, gen); err != nil {
		t.Fatal(err)
	}
	if got, want := cachedNames(inf), []string{"a1@12", "a2@6", "b1@14"}; !slices.Equal(got, want) {
		t.Fatalf("after adding B: cache %v, want %v", got, want)
	}
	srv.mu.Lock()
	lists := slices.Clone(srv.lists)
	srv.mu.Unlock()
	if len(lists) != 2 {
		t.Fatalf("%d lists, want 2 (the first, then B's)", len(lists))
	}
	if l := lists[1]; l.LabelSelector != "managed=yes,example.io/tenant in (B)" || l.ResourceVersion != "12" ||
		l.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
		t.Errorf("B's list: %+v, want selector on B only, not older than 12", l)
	}
	if w1.opts.LabelSelector != "managed=yes,example.io/tenant in (A,B)" || w1.opts.ResourceVersion != "12" {
		t.Errorf("second watch: selector %q from %q, want A and B from 12", w1.opts.LabelSelector, w1.opts.ResourceVersion)
	}
	// The position is the last event's (b1@14), which the cache holds. Wait returns once b1
	// is cached, which may be b1@13 still.
	eventually(t, "b1@14 cached", func() bool { return slices.Contains(cachedNames(inf), "b1@14") })
	eventually(t, "b1@14 handed to the handlers", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(b1Versions) > 0 && b1Versions[len(b1Versions)-1] == "14"
	})
	mu.Lock()
	if got := slices.Clone(b1Versions); !slices.Equal(got, []string{"13", "14"}) {
		t.Errorf("b1's versions in the order the cache took them: %v, want [13 14] (a b1 from the list, newer than the position 12, came ahead of the watch's events)", got)
	}
	mu.Unlock()
	st, err := reg.Source("super/ConfigMap").checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if st.Position != "14" || !slices.Equal(st.Scope, []string{"A", "B"}) {
		t.Errorf("checkpoint position %q scope %v, want 14 and [A B]", st.Position, st.Scope)
	}
	w1.w.Modify(scopedCM("a2", "A", "16"))
	eventually(t, "a2@16 cached", func() bool { return slices.Contains(cachedNames(inf), "a2@16") })
	if got, want := cachedNames(inf), []string{"a1@12", "a2@16", "b1@14"}; !slices.Equal(got, want) {
		t.Errorf("after the watch's events: cache %v, want %v", got, want)
	}
	w1.w.Modify(scopedCM("b1", "B", "17"))
	eventually(t, "b1@17 cached", func() bool { return slices.Contains(cachedNames(inf), "b1@17") })

	// Remove A: its objects leave the cache as deletions, and nothing is listed.
	if g := scope.Add("B"); g != gen {
		t.Errorf("adding a value already there moved the generation from %d to %d", gen, g)
	}
	scope.Remove("A")
	eventually(t, "A's objects gone", func() bool { return slices.Equal(cachedNames(inf), []string{"b1@17"}) })
	if n := srv.listCount(); n != 2 {
		t.Errorf("%d lists after removing A, want still 2", n)
	}
	// The handlers hear of a deletion after the cache has dropped the object.
	eventually(t, "a1 and a2 handed to the handlers as deletions", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(deleted) >= 2
	})
	mu.Lock()
	sort.Strings(deleted)
	if !slices.Equal(deleted, []string{"a1", "a2"}) {
		t.Errorf("deletions handed to the handlers: %v, want a1 and a2", deleted)
	}
	mu.Unlock()
	w2 := srv.waitWatch(t, 2)
	if w2.opts.LabelSelector != "managed=yes,example.io/tenant in (B)" || w2.opts.ResourceVersion != "17" {
		t.Errorf("third watch: selector %q from %q, want B from 17", w2.opts.LabelSelector, w2.opts.ResourceVersion)
	}

	// An empty Scope caches nothing and selects nothing.
	scope.Remove("B")
	eventually(t, "cache empty", func() bool { return len(cachedNames(inf)) == 0 })
	if w3 := srv.waitWatch(t, 3); w3.opts.LabelSelector != "managed=yes,example.io/tenant in (none)" {
		t.Errorf("empty scope's watch selector %q", w3.opts.LabelSelector)
	}
}

// TestScopeResumeFromCheckpoint: an informer resumed from a checkpoint of a Scope's informer
// watches from the checkpoint's position without listing when the Scope holds the same
// values, and lists only the value the checkpoint lacks otherwise.
func TestScopeResumeFromCheckpoint(t *testing.T) {
	b1 := scopedCM("b1", "B", "7")
	enc, err := b1.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	st := State{ID: "super/ConfigMap", Position: "20", Objects: [][]byte{enc}, HasObjects: true, Scope: []string{"B"}}
	for _, tc := range []struct {
		name      string
		scope     []string
		wantLists int
		wantCache []string
	}{
		{"same values", []string{"B"}, 0, []string{"b1@7"}},
		{"one value more", []string{"B", "C"}, 1, []string{"b1@7", "c1@8"}},
		{"one value fewer", []string{"C"}, 1, []string{"c1@8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &scopeServer{rv: "25", objects: []*corev1.ConfigMap{b1, scopedCM("c1", "C", "8")}}
			_, inf := startScoped(t, srv, NewScope(scopeKey, tc.scope...), []State{st}, nil)
			eventually(t, "the expected cache", func() bool { return slices.Equal(cachedNames(inf), tc.wantCache) })
			if n := srv.listCount(); n != tc.wantLists {
				t.Errorf("%d lists, want %d", n, tc.wantLists)
			}
			if w := srv.waitWatch(t, 0); w.opts.ResourceVersion != "20" {
				t.Errorf("watch from %q, want the checkpoint's 20", w.opts.ResourceVersion)
			}
		})
	}
}

// laggingInformer is an informer as the hand-over of a Scope change and a checkpoint see it
// while the informer is still applying a value's objects to its cache: while hide is set, its
// store hides the objects whose label key has the value value. The informer itself (its
// reflector, queue and real store) runs on unchanged.
type laggingInformer struct {
	cache.SharedIndexInformer
	store *laggingStore
}

func (l *laggingInformer) GetStore() cache.Store     { return l.store }
func (l *laggingInformer) GetIndexer() cache.Indexer { return l.store }

type laggingStore struct {
	cache.Indexer
	key, value string
	hide       atomic.Bool
}

func (s *laggingStore) hidden(o any) bool {
	m, ok := o.(metav1.Object)
	return ok && s.hide.Load() && m.GetLabels()[s.key] == s.value
}

func (s *laggingStore) List() []any {
	var out []any
	for _, o := range s.Indexer.List() {
		if !s.hidden(o) {
			out = append(out, o)
		}
	}
	return out
}

func (s *laggingStore) ListKeys() []string {
	var out []string
	for _, o := range s.List() {
		if k, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			out = append(out, k)
		}
	}
	return out
}

func (s *laggingStore) Get(obj any) (any, bool, error) {
	o, ok, err := s.Indexer.Get(obj)
	if ok && s.hidden(o) {
		return nil, false, nil
	}
	return o, ok, err
}

func (s *laggingStore) GetByKey(key string) (any, bool, error) {
	o, ok, err := s.Indexer.GetByKey(key)
	if ok && s.hidden(o) {
		return nil, false, nil
	}
	return o, ok, err
}

// TestScopeCheckpointDuringHandOver takes a checkpoint right after a Scope gained a value,
// while the informer's cache does not hold the value's objects yet (a busy informer applies
// them well after the watch handed them over; here its store hides them until the test lets
// them through): the checkpoint names the value only when it holds all of the value's
// objects, so a resume from it lists the value again rather than watching on with a cache
// that lacks some. Once the objects show, the value is confirmed and checkpointed.
func TestScopeCheckpointDuringHandOver(t *testing.T) {
	const n = 5
	srv := &scopeServer{rv: "10", objects: []*corev1.ConfigMap{scopedCM("a1", "A", "5")}}
	for i := range n {
		srv.objects = append(srv.objects, scopedCM(fmt.Sprintf("b%d", i), "B", "7"))
	}
	scope := NewScope(scopeKey, "A")
	reg, inf := startScoped(t, srv, scope, nil, nil)
	ctx := t.Context()
	w0 := srv.waitWatch(t, 0)
	w0.w.Modify(scopedCM("a1", "A", "12"))
	eventually(t, "a1@12 cached", func() bool { return slices.Contains(cachedNames(inf), "a1@12") })
	src := reg.Source("super/ConfigMap")
	lw := src.lw
	lag := &laggingInformer{SharedIndexInformer: inf, store: &laggingStore{Indexer: inf.GetIndexer(), key: scopeKey, value: "B"}}
	lag.store.hide.Store(true)
	src.mu.Lock()
	src.informer = lag
	src.mu.Unlock()

	gen := scope.Add("B")
	// The hand-over is over (the reflector has every object of B) and the informer's real
	// store holds them all; only the view the hand-over and the checkpoint read lacks them.
	eventually(t, "B handed over", func() bool {
		lw.ss.mu.Lock()
		defer lw.ss.mu.Unlock()
		return hasKey(lw.ss.storeVals, "B")
	})
	eventually(t, "B's objects in the informer's store", func() bool { return len(inf.GetStore().List()) == n+1 })
	st, err := src.checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(st.Scope, "B") {
		t.Fatalf("checkpoint scope %v with %d of the %d objects of A and B: a resume would watch B on without listing the missing ones", st.Scope, len(st.Objects), n+1)
	}
	lag.store.hide.Store(false)
	if err := scope.Wait(ctx, gen); err != nil {
		t.Fatal(err)
	}
	st, err = src.checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Scope, []string{"A", "B"}) || len(st.Objects) != n+1 {
		t.Errorf("checkpoint once B is cached: scope %v, %d objects; want [A B] and %d", st.Scope, len(st.Objects), n+1)
	}
}

// TestScopeResumeListsAPartlyCachedValue resumes from a checkpoint whose cache holds some
// objects of a value the checkpoint does not name (taken while they were being handed over):
// the value, being in the Scope, is listed again, so its other objects reach the cache.
func TestScopeResumeListsAPartlyCachedValue(t *testing.T) {
	var enc [][]byte
	for _, o := range []*corev1.ConfigMap{scopedCM("a1", "A", "5"), scopedCM("b1", "B", "7")} {
		b, err := o.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, b)
	}
	st := State{ID: "super/ConfigMap", Position: "20", Objects: enc, HasObjects: true, Scope: []string{"A"}}
	srv := &scopeServer{rv: "25", objects: []*corev1.ConfigMap{
		scopedCM("a1", "A", "5"), scopedCM("b1", "B", "7"), scopedCM("b2", "B", "8"),
	}}
	_, inf := startScoped(t, srv, NewScope(scopeKey, "A", "B"), []State{st}, nil)
	want := []string{"a1@5", "b1@7", "b2@8"}
	deadline := time.Now().Add(2 * time.Second)
	for !slices.Equal(cachedNames(inf), want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := cachedNames(inf); !slices.Equal(got, want) {
		t.Fatalf("cache %v, want %v: B, partly cached and not named by the checkpoint, was not listed again", got, want)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.lists) != 1 || srv.lists[0].LabelSelector != "example.io/tenant in (B)" {
		t.Errorf("lists %+v, want one, of B only", srv.lists)
	}
}

// TestRestoredPartialValueIsNotCheckpointed: until a value found on restored objects but not
// named by the checkpoint has been listed again, a new checkpoint does not name it either.
func TestRestoredPartialValueIsNotCheckpointed(t *testing.T) {
	l := &resumeLW{scope: NewScope(scopeKey, "A", "B")}
	list := &corev1.ConfigMapList{Items: []corev1.ConfigMap{*scopedCM("a1", "A", "5"), *scopedCM("b1", "B", "7")}}
	l.restoredValues(&State{Scope: []string{"A"}}, list)
	if got := l.storeValues(); !slices.Equal(got, []string{"A"}) {
		t.Errorf("values a checkpoint would save %v, want [A] (B is only partly cached)", got)
	}
	l.ss.mu.Lock()
	inSync := l.inSync(map[string]struct{}{"A": {}, "B": {}})
	l.ss.mu.Unlock()
	if inSync {
		t.Error("the cache counts as brought to [A B] with B only partly cached: B would not be listed")
	}
}
