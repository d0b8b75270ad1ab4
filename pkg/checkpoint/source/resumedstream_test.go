package source

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// streamingLW is an apiserver stand-in that serves watch-lists (KEP-3157): a watch with
// sendInitialEvents streams items and the initial-events-end bookmark at rv. It counts Lists
// and streams, records the positions of plain watches, and answers a plain watch from a
// position in expired with 410.
type streamingLW struct {
	lists, streams atomic.Int32
	items          []corev1.ConfigMap
	rv             string
	expired        map[string]bool

	mu      sync.Mutex
	watched []string // positions of plain watches
}

func (l *streamingLW) lw() *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			l.lists.Add(1)
			return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: l.rv}, Items: l.items}, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents == nil || !*o.SendInitialEvents {
				l.mu.Lock()
				l.watched = append(l.watched, o.ResourceVersion)
				l.mu.Unlock()
				if l.expired[o.ResourceVersion] {
					return nil, apierrors.NewResourceExpired("too old resource version")
				}
				return watch.NewFake(), nil
			}
			l.streams.Add(1)
			w := watch.NewFakeWithChanSize(len(l.items)+1, false)
			for i := range l.items {
				w.Add(l.items[i].DeepCopy())
			}
			w.Action(watch.Bookmark, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: l.rv,
				Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
			return w, nil
		},
	}
}

func (l *streamingLW) plainWatches() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.watched...)
}

// streamClient is a real clientset (never called: the LW's real calls go to a streamingLW),
// so that the reflector streams its lists.
func streamClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func startStreamingInformer(t *testing.T, src *Source, api *streamingLW) cache.SharedIndexInformer {
	t.Helper()
	k := kinds[reflect.TypeOf(&corev1.ConfigMap{})]
	lw := &resumeLW{real: api.lw(), src: src, kind: k, client: streamClient(t)}
	if lw.IsWatchListSemanticsUnSupported() {
		t.Fatal("an unscoped informer with a real client lists with LIST requests")
	}
	return runInformer(t, src, lw, lw)
}

// TestResumeByStreamWithoutList: an informer that streams its lists (watch-list) is resumed
// from the checkpoint with no request for its objects (the checkpointed objects are streamed
// to it, then it watches from the checkpoint's position, mode "watch"), and when that position
// has expired it lists again by a stream, never by a LIST (mode "relist-diff").
func TestResumeByStreamWithoutList(t *testing.T) {
	r := NewRegistry()
	var mu sync.Mutex
	var modes []string
	r.OnMode = func(_, m string) { mu.Lock(); modes = append(modes, m); mu.Unlock() }
	var avoided atomic.Int32
	r.OnListAvoided = func(string) { avoided.Add(1) }

	// First process: cold, streamed.
	api := &streamingLW{items: []corev1.ConfigMap{*cm("a", "1", "3"), *cm("b", "2", "4")}, rv: "10"}
	src := r.Source("tenant/x/ConfigMap")
	inf := startStreamingInformer(t, src, api)
	if l, s := api.lists.Load(), api.streams.Load(); l != 0 || s != 1 || src.Mode() != ModeCold {
		t.Fatalf("cold start: %d lists, %d streams, mode %q; want 0, 1, cold", l, s, src.Mode())
	}
	ackAll(src, inf)
	states, err := r.Checkpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].Position != "10" || len(states[0].Objects) != 2 {
		t.Fatalf("checkpoint = %+v", states)
	}

	// Second process: resumed within the watch window. The apiserver's answer would be
	// different objects: the cache must come from the checkpoint.
	r2 := NewRegistry()
	r2.OnMode, r2.OnListAvoided = r.OnMode, r.OnListAvoided
	r2.Restore(states)
	api2 := &streamingLW{items: []corev1.ConfigMap{*cm("z", "9", "99")}, rv: "99"}
	src2 := r2.Source("tenant/x/ConfigMap")
	inf2 := startStreamingInformer(t, src2, api2)
	if l, s := api2.lists.Load(), api2.streams.Load(); l != 0 || s != 0 {
		t.Errorf("resume within the watch window: %d lists, %d streams from the apiserver; want 0, 0", l, s)
	}
	if src2.Mode() != ModeWatch || avoided.Load() != 1 {
		t.Errorf("mode %q, lists avoided %d; want watch, 1", src2.Mode(), avoided.Load())
	}
	if got, want := cachedNames(inf2), []string{"a@3", "b@4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("resumed cache %v, want the checkpoint's %v", got, want)
	}
	if got := inf2.LastSyncResourceVersion(); got != "10" {
		t.Errorf("resumed position %q, want 10", got)
	}
	eventually(t, "a watch from the checkpoint's position", func() bool {
		return reflect.DeepEqual(api2.plainWatches(), []string{"10"})
	})

	// Third process: the checkpoint's position has expired. The watch from it ends with a
	// 410 after the checkpoint's objects, and the informer lists again by a stream.
	r3 := NewRegistry()
	r3.OnMode, r3.OnListAvoided = r.OnMode, r.OnListAvoided
	r3.Restore(states)
	api3 := &streamingLW{items: []corev1.ConfigMap{*cm("c", "5", "20")}, rv: "20", expired: map[string]bool{"10": true}}
	src3 := r3.Source("tenant/x/ConfigMap")
	inf3 := startStreamingInformer(t, src3, api3)
	eventually(t, "the apiserver's objects after the 410", func() bool {
		return reflect.DeepEqual(cachedNames(inf3), []string{"c@20"})
	})
	if l, s := api3.lists.Load(), api3.streams.Load(); l != 0 || s != 1 {
		t.Errorf("after the 410: %d lists, %d streams; want 0, 1", l, s)
	}
	if src3.Mode() != ModeRelistDiff {
		t.Errorf("mode %q after the 410, want relist-diff", src3.Mode())
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{ModeCold, ModeWatch, ModeWatch, ModeRelistDiff}; !reflect.DeepEqual(modes, want) {
		t.Errorf("mode changes %v, want %v", modes, want)
	}
}

// TestResumedStreamStops: a resumed stream stopped before the reflector reads it ends, and
// stops the apiserver's watch it opened.
func TestResumedStreamStops(t *testing.T) {
	r := NewRegistry()
	r.Restore([]State{{ID: "tenant/x/ConfigMap", Position: "10", HasObjects: true, Objects: nil}})
	src := r.Source("tenant/x/ConfigMap")
	inner := watch.NewFake()
	lw := &resumeLW{src: src, kind: kinds[reflect.TypeOf(&corev1.ConfigMap{})], real: &cache.ListWatch{
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return inner, nil },
	}}
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: func() *bool { b := true; return &b }()})
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Bookmark {
		t.Fatalf("first event of an empty checkpoint %v, want the bookmark", ev.Type)
	}
	// The inner watch opens after the bookmark is read; wait until it is held.
	eventually(t, "the apiserver's watch opened", func() bool {
		s := w.(*resumedStream)
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.real != nil
	})
	w.Stop()
	eventually(t, "the apiserver's watch stopped", inner.IsStopped)
	if _, open := <-w.ResultChan(); open {
		t.Error("the stream is still open after Stop")
	}
}
