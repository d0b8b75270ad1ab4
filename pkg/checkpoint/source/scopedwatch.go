package source

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// scopeState is the part of a resumeLW that follows a Scope.
type scopeState struct {
	// inject is held while a scopedWatch hands the reflector events of its own (objects listed
	// for values added, deletions of objects of values removed) and the bookmarks that move the
	// reflector's position back to the watch's. Source.checkpoint takes it to read a position
	// and values that belong together.
	inject sync.Mutex

	mu         sync.Mutex
	started    bool                // listed at least once
	storeVals  map[string]struct{} // the values whose objects the reflector has been handed
	appliedGen uint64              // the Scope generation the cache is known to be at
	listVals   map[string]struct{} // the values of the List in progress (its pages)
	listGen    uint64
	fresh      []string // keys just listed for values added, to see in the cache before appliedGen moves
	freshGen   uint64
	// pending holds the values some of whose objects were handed to the reflector but are not
	// yet known to be in the informer's cache (a value listed with no objects is never
	// pending), each with the Scope generation whose awaitVisible confirms them, and the
	// partial values. A checkpoint leaves them out of its values: the cache it saves may lack
	// some of their objects, and a resume lists a value its checkpoint does not name.
	pending map[string]uint64
	// partial holds the values found on the objects of a restored checkpoint that the
	// checkpoint does not name (it was taken while their objects were being handed over or
	// swept): listed again if the Scope holds them, swept otherwise.
	partial map[string]struct{}
}

// resweepDelay is how long after removing values a scopedWatch looks once more for their
// objects in the cache: objects of those values that were still on their way through the
// informer's queue at the first sweep.
const resweepDelay = 2 * time.Second

// visibleTimeout bounds how long a scopedWatch waits for objects it handed the reflector to
// reach the informer's cache before it reports the generation applied anyway.
const visibleTimeout = 5 * time.Second

func (l *resumeLW) scopeApplied() (started bool, gen uint64) {
	l.ss.mu.Lock()
	defer l.ss.mu.Unlock()
	return l.ss.started, l.ss.appliedGen
}

func (l *resumeLW) setApplied(gen uint64) {
	l.ss.mu.Lock()
	if gen > l.ss.appliedGen {
		l.ss.appliedGen = gen
	}
	l.ss.mu.Unlock()
	l.scope.markApplied()
}

// storeValues returns, sorted, the values whose objects the informer's cache is known to hold:
// those the reflector has been handed the objects of, less the pending ones whose objects may
// still be on their way through the informer's queue (nil when the LW follows no Scope). Call
// it with ss.inject held for a consistent pair with the informer's position.
func (l *resumeLW) storeValues() []string {
	if l.scope == nil {
		return nil
	}
	l.ss.mu.Lock()
	defer l.ss.mu.Unlock()
	out := make([]string, 0, len(l.ss.storeVals))
	for _, v := range sortedKeys(l.ss.storeVals) {
		if _, p := l.ss.pending[v]; !p {
			out = append(out, v)
		}
	}
	return out
}

// inSync reports whether the cache was brought to vals: its values are vals and none of them
// is only partly cached. Call it with ss.mu held.
func (l *resumeLW) inSync(vals map[string]struct{}) bool {
	if !sameSet(vals, l.ss.storeVals) {
		return false
	}
	for v := range l.ss.partial {
		if _, in := vals[v]; in {
			return false
		}
	}
	return true
}

// hasKey reports whether m holds k.
func hasKey(m map[string]struct{}, k string) bool {
	_, ok := m[k]
	return ok
}

// setPending records vals (values with listed objects) as pending until awaitVisible confirms
// generation gen. Call it with ss.mu held.
func (l *resumeLW) setPending(vals map[string]struct{}, gen uint64) {
	if len(vals) == 0 {
		return
	}
	if l.ss.pending == nil {
		l.ss.pending = map[string]uint64{}
	}
	for v := range vals {
		l.ss.pending[v] = gen
	}
}

// scopedList lists with the Scope's values added to the selector. The pages of one List share
// the values of its first page.
func (l *resumeLW) scopedList(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l.ss.mu.Lock()
	if opts.Continue == "" || l.ss.listVals == nil {
		l.ss.listVals, l.ss.listGen, _ = l.scope.snapshot()
	}
	vals, gen := l.ss.listVals, l.ss.listGen
	l.ss.started = true
	l.ss.mu.Unlock()
	o, err := l.scopedOptions(opts, vals)
	if err != nil {
		return nil, err
	}
	list, err := l.kind.list(l.client, ctx, o)
	if err != nil {
		return nil, err
	}
	if lm, err := meta.ListAccessor(list); err == nil && lm.GetContinue() == "" {
		l.listed(list, vals, gen)
	}
	return list, nil
}

// listed records that the reflector is handed list (the objects of vals at generation gen).
func (l *resumeLW) listed(list runtime.Object, vals map[string]struct{}, gen uint64) {
	l.ss.mu.Lock()
	defer l.ss.mu.Unlock()
	// The objects of a value the cache did not hold, or held pending or partly, are fresh:
	// the value is known to be cached once they are visible.
	unsure := map[string]struct{}{}
	for v := range vals {
		_, had := l.ss.storeVals[v]
		_, pending := l.ss.pending[v]
		_, partial := l.ss.partial[v]
		if !had || pending || partial {
			unsure[v] = struct{}{}
		}
	}
	var fresh []string
	listedVals := map[string]struct{}{}
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		if m, err := meta.Accessor(o); err == nil {
			if v := m.GetLabels()[l.scope.key]; hasKey(unsure, v) {
				fresh = append(fresh, Key(m))
				listedVals[v] = struct{}{}
			}
		}
		return nil
	})
	l.ss.storeVals, l.ss.listVals, l.ss.pending, l.ss.partial = vals, nil, nil, nil
	l.setPending(listedVals, gen)
	l.ss.fresh, l.ss.freshGen = fresh, gen
}

// restoredValues records, for a list answered from a checkpoint, the values its objects
// belong to: the State's values and the values found on the objects; those the State does not
// name are partial.
func (l *resumeLW) restoredValues(st *State, list runtime.Object) {
	vals := map[string]struct{}{}
	for _, v := range st.Scope {
		vals[v] = struct{}{}
	}
	partial, pending := map[string]struct{}{}, map[string]uint64{}
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		if m, err := meta.Accessor(o); err == nil {
			if v := m.GetLabels()[l.scope.key]; !slices.Contains(st.Scope, v) {
				vals[v], partial[v], pending[v] = struct{}{}, struct{}{}, 0
			}
		}
		return nil
	})
	l.ss.mu.Lock()
	l.ss.started, l.ss.storeVals, l.ss.fresh, l.ss.pending, l.ss.partial = true, vals, nil, pending, partial
	l.ss.mu.Unlock()
}

// scopedWatchStart opens a watch that follows the Scope. When the cache holds the Scope's
// current values, the apiserver watch is opened here and its error returned as is (the
// reflector's retry rules apply); otherwise the change is applied first, in the watch.
func (l *resumeLW) scopedWatchStart(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	vals, gen, changed := l.scope.snapshot()
	l.ss.mu.Lock()
	same := l.inSync(vals)
	fresh, freshGen := l.ss.fresh, l.ss.freshGen
	l.ss.fresh = nil
	l.ss.mu.Unlock()
	w := &scopedWatch{lw: l, opts: opts, rv: opts.ResourceVersion, out: make(chan watch.Event), stopped: make(chan struct{})}
	var real watch.Interface
	if same {
		var err error
		if real, err = l.watchReal(ctx, w.rv, opts, vals); err != nil {
			return nil, err
		}
		if fresh != nil {
			go l.awaitVisible(ctx, fresh, max(gen, freshGen))
		} else {
			l.setApplied(gen)
		}
	}
	go w.run(ctx, real, changed)
	return w, nil
}

// watchReal opens the apiserver watch from rv with the selector of vals.
func (l *resumeLW) watchReal(ctx context.Context, rv string, opts metav1.ListOptions, vals map[string]struct{}) (watch.Interface, error) {
	opts.ResourceVersion = rv
	o, err := l.scopedOptions(opts, vals)
	if err != nil {
		return nil, err
	}
	return l.kind.watch(l.client, ctx, o)
}

// scopedOptions returns opts with the factory's Tweak applied and its label selector
// restricted to objects of vals.
func (l *resumeLW) scopedOptions(opts metav1.ListOptions, vals map[string]struct{}) (metav1.ListOptions, error) {
	if l.tweak != nil {
		l.tweak(&opts)
	}
	sel, err := scopeSelector(opts.LabelSelector, l.scope.key, vals)
	opts.LabelSelector = sel
	return opts, err
}

// awaitVisible waits (up to visibleTimeout) until the informer's cache holds every key, then
// marks gen applied. When the cache was seen to hold them all, the values pending until gen
// (or an earlier generation) are confirmed; otherwise (the timeout, or a key deleted before
// it was seen) they stay pending, and checkpoints leave them out until a later hand-over or
// list confirms them.
func (l *resumeLW) awaitVisible(ctx context.Context, keys []string, gen uint64) {
	defer l.setApplied(gen)
	l.src.mu.Lock()
	inf := l.src.informer
	l.src.mu.Unlock()
	if inf == nil {
		return
	}
	deadline := time.Now().Add(visibleTimeout)
	for len(keys) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		if _, ok, _ := inf.GetIndexer().GetByKey(keys[0]); ok {
			keys = keys[1:]
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(keys) > 0 {
		return
	}
	l.ss.mu.Lock()
	for v, g := range l.ss.pending {
		if g <= gen {
			delete(l.ss.pending, v)
		}
	}
	l.ss.mu.Unlock()
}

// scopedWatch is the watch a Scope-following resumeLW hands the reflector: the apiserver's
// watch with the Scope's selector, reopened from the same position when the Scope changes, with
// the objects of values added (listed once) and deletions of objects of values removed handed
// over in between.
type scopedWatch struct {
	lw   *resumeLW
	opts metav1.ListOptions
	rv   string // resourceVersion of the last apiserver event handed on
	out  chan watch.Event

	// After values were added to a watch that had no position yet: their objects' events up
	// to dropUntil (the resourceVersion they were listed at) are older than the listed
	// objects and are not handed on. With a position, nothing is dropped: only objects not
	// newer than it are handed over, and the watch sends only what is newer.
	dropVals  map[string]struct{}
	dropUntil uint64

	stopOnce sync.Once
	stopped  chan struct{}
}

var _ watch.Interface = (*scopedWatch)(nil)

func (w *scopedWatch) Stop()                          { w.stopOnce.Do(func() { close(w.stopped) }) }
func (w *scopedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *scopedWatch) send(ctx context.Context, ev watch.Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.stopped:
	case <-ctx.Done():
	}
	return false
}

func (w *scopedWatch) run(ctx context.Context, real watch.Interface, changed <-chan struct{}) {
	defer close(w.out)
	defer func() {
		if real != nil {
			real.Stop()
		}
	}()
	var resweep <-chan time.Time
	for {
		if real == nil {
			var swept bool
			var err error
			real, changed, swept, err = w.apply(ctx)
			if err != nil {
				w.send(ctx, watch.Event{Type: watch.Error, Object: statusOf(err)})
				return
			}
			if real == nil {
				return // stopped
			}
			if swept {
				resweep = time.After(resweepDelay)
			}
		}
		select {
		case ev, ok := <-real.ResultChan():
			if !ok {
				return // the reflector watches again from its position
			}
			if ev.Type == watch.Error {
				w.send(ctx, ev)
				return
			}
			if w.dropped(ev) {
				continue
			}
			if m, err := meta.Accessor(ev.Object); err == nil {
				w.rv = m.GetResourceVersion()
			}
			if !w.send(ctx, ev) {
				return
			}
		case <-changed:
			vals, gen, ch := w.lw.scope.snapshot()
			w.lw.ss.mu.Lock()
			same := w.lw.inSync(vals)
			w.lw.ss.mu.Unlock()
			changed = ch
			if same {
				w.lw.setApplied(gen) // changed back before this watch saw it
				continue
			}
			real.Stop()
			real = nil
		case <-resweep:
			// Against the values the cache was brought to, not the Scope's current ones: a
			// value added since is listed by the apply its change brings.
			resweep = nil
			w.lw.ss.mu.Lock()
			vals := w.lw.ss.storeVals
			w.lw.ss.mu.Unlock()
			if !w.handOver(ctx, nil, vals) {
				return
			}
		case <-w.stopped:
			return
		case <-ctx.Done():
			return
		}
	}
}

// apply brings the reflector's cache to the Scope's current values: it lists the objects of
// the values added (resourceVersion not older than the watch's position), opens the apiserver
// watch with the new selector from that position, and hands the reflector the listed objects
// not newer than that position (the watch brings the others) and deletions of the cached
// objects of other values. swept reports whether objects of
// removed values may remain (a second sweep follows). A nil watch and nil error: stopped.
func (w *scopedWatch) apply(ctx context.Context) (real watch.Interface, changed <-chan struct{}, swept bool, err error) {
	l := w.lw
	vals, gen, changed := l.scope.snapshot()
	l.ss.mu.Lock()
	old, partial := l.ss.storeVals, l.ss.partial
	l.ss.mu.Unlock()
	gained := map[string]struct{}{}
	for v := range vals {
		_, had := old[v]
		_, part := partial[v]
		if !had || part {
			gained[v] = struct{}{}
		}
	}
	for v := range old {
		if _, ok := vals[v]; !ok {
			swept = true
		}
	}
	var items []runtime.Object
	var listRV uint64
	if len(gained) > 0 {
		o := metav1.ListOptions{ResourceVersion: w.rv}
		if w.rv != "" {
			o.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
		}
		if o, err = l.scopedOptions(o, gained); err != nil {
			return nil, nil, false, err
		}
		list, err := l.kind.list(l.client, ctx, o)
		if err != nil {
			return nil, nil, false, err
		}
		if items, err = meta.ExtractList(list); err != nil {
			return nil, nil, false, err
		}
		if lm, err := meta.ListAccessor(list); err == nil {
			listRV, _ = strconv.ParseUint(lm.GetResourceVersion(), 10, 64)
		}
	}
	real, err = l.watchReal(ctx, w.rv, w.opts, vals)
	if err != nil {
		return nil, nil, false, err
	}
	keys := make([]string, 0, len(items))
	listedVals := map[string]struct{}{}
	for _, o := range items {
		if m, err := meta.Accessor(o); err == nil {
			keys = append(keys, Key(m))
			listedVals[m.GetLabels()[l.scope.key]] = struct{}{}
		}
	}
	handed := items
	if pos, err := strconv.ParseUint(w.rv, 10, 64); err == nil {
		// Only the objects unchanged since the watch's position are handed over; the newer
		// ones come from the watch, which replays every change after that position in order.
		// A listed object newer than the position, applied to the cache before the events of
		// the values already watched that precede it, would move the cache's position
		// (which checkpoints save) past events the cache does not hold yet.
		handed = notNewerThan(items, pos)
		listRV = 0
	}
	l.ss.mu.Lock()
	for v := range gained {
		if !hasKey(listedVals, v) {
			delete(l.ss.pending, v) // no objects to wait for (an entry left by an earlier hand-over)
		}
	}
	l.setPending(listedVals, gen)
	l.ss.mu.Unlock()
	if !w.handOver(ctx, handed, vals) {
		real.Stop()
		return nil, nil, false, nil
	}
	w.dropVals, w.dropUntil = gained, listRV
	go l.awaitVisible(ctx, keys, gen)
	return real, changed, swept, nil
}

// notNewerThan returns the objects of items whose resourceVersion is at most rv (objects
// whose resourceVersion is not a number are kept).
func notNewerThan(items []runtime.Object, rv uint64) []runtime.Object {
	out := make([]runtime.Object, 0, len(items))
	for _, o := range items {
		m, err := meta.Accessor(o)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64); err == nil && v > rv {
			continue
		}
		out = append(out, o)
	}
	return out
}

// handOver hands the reflector items as Added events and the cached objects whose value is not
// in vals as Deleted events, then a bookmark at the watch's position (twice: the second is
// received only once the first was processed, so the reflector's position is the watch's again
// before the inject lock is released), and records vals as the cache's values.
func (w *scopedWatch) handOver(ctx context.Context, items []runtime.Object, vals map[string]struct{}) bool {
	l := w.lw
	l.ss.inject.Lock()
	defer l.ss.inject.Unlock()
	for _, o := range items {
		if !w.send(ctx, watch.Event{Type: watch.Added, Object: o}) {
			return false
		}
	}
	l.src.mu.Lock()
	inf := l.src.informer
	l.src.mu.Unlock()
	if inf != nil {
		for _, o := range inf.GetIndexer().List() {
			m, err := meta.Accessor(o)
			if err != nil {
				continue
			}
			if _, in := vals[m.GetLabels()[l.scope.key]]; in {
				continue
			}
			if !w.send(ctx, watch.Event{Type: watch.Deleted, Object: w.deletedObject(o, m)}) {
				return false
			}
		}
	}
	if w.rv != "" {
		for range 2 {
			b := l.kind.newObj()
			m, err := meta.Accessor(b)
			if err != nil {
				break
			}
			m.SetResourceVersion(w.rv)
			if !w.send(ctx, watch.Event{Type: watch.Bookmark, Object: b}) {
				return false
			}
		}
	}
	l.ss.mu.Lock()
	l.ss.storeVals, l.ss.partial = vals, nil
	for v := range l.ss.pending {
		if !hasKey(vals, v) {
			delete(l.ss.pending, v)
		}
	}
	l.ss.mu.Unlock()
	return true
}

// deletedObject returns the object of a Deleted event for cached object o (metadata m): o
// itself when it is of the informer's type, else (a cached form such as podcache.Pod, which the
// reflector would refuse) a new object of that type with o's metadata, which is what the
// handlers of a deletion read.
func (w *scopedWatch) deletedObject(o any, m metav1.Object) runtime.Object {
	want := w.lw.kind.newObj()
	if obj, ok := o.(runtime.Object); ok && reflect.TypeOf(obj) == reflect.TypeOf(want) {
		return obj
	}
	if wm, err := meta.Accessor(want); err == nil {
		wm.SetNamespace(m.GetNamespace())
		wm.SetName(m.GetName())
		wm.SetUID(m.GetUID())
		wm.SetResourceVersion(m.GetResourceVersion())
		wm.SetGeneration(m.GetGeneration())
		wm.SetCreationTimestamp(m.GetCreationTimestamp())
		wm.SetDeletionTimestamp(m.GetDeletionTimestamp())
		wm.SetLabels(m.GetLabels())
		wm.SetAnnotations(m.GetAnnotations())
		wm.SetOwnerReferences(m.GetOwnerReferences())
		wm.SetFinalizers(m.GetFinalizers())
	}
	return want
}

// dropped reports whether ev is an event of an object of a value just added that is not newer
// than the list its objects came from.
func (w *scopedWatch) dropped(ev watch.Event) bool {
	if w.dropUntil == 0 {
		return false
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return false
	}
	rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return false
	}
	if rv > w.dropUntil {
		w.dropUntil, w.dropVals = 0, nil // events come in resourceVersion order: none older follows
		return false
	}
	if ev.Type == watch.Bookmark {
		return false
	}
	_, gained := w.dropVals[m.GetLabels()[w.lw.scope.key]]
	return gained
}

// statusOf returns the Status of err for a watch.Error event.
func statusOf(err error) runtime.Object {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		st := s.Status()
		return &st
	}
	return &apierrors.NewInternalError(err).ErrStatus
}

func sameSet(a, b map[string]struct{}) bool {
	if len(a) != len(b) {
		return false
	}
	for v := range a {
		if _, ok := b[v]; !ok {
			return false
		}
	}
	return true
}
