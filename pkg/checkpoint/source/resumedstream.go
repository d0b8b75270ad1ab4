package source

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
)

// resumedStream is the watch-list a resumed informer is answered with (the reflector asks for
// a watch with sendInitialEvents, KEP-3157): the checkpointed objects as ADDED events, then
// the bookmark annotated k8s.io/initial-events-end at the checkpoint's position (the reflector
// then replaces its cache with them at that position, as it would with a LIST's answer), then
// the events of a watch on the apiserver from that position. The position is not checked
// before the objects are sent (no request is made for them): a position the apiserver no
// longer holds ends the stream with its 410 error after the bookmark, and the reflector's next
// watch-list is the apiserver's (ModeRelistDiff, streamed, never a LIST).
//
// Opening the apiserver's watch is retried with backoff (1 s doubling to 30 s) while it fails
// with a refused connection or 429, as the reflector retries its own watches; any other error
// ends the stream with that error as an ERROR event.
type resumedStream struct {
	result chan watch.Event
	done   chan struct{}
	stop   sync.Once

	mu   sync.Mutex
	real watch.Interface // the apiserver's watch once open
}

// Retries of opening the apiserver's watch after a resume's objects were sent.
const (
	resumeWatchBackoff    = time.Second
	resumeWatchBackoffMax = 30 * time.Second
)

// resumedWatch returns the stream answering a watch-list request opts with st's objects (see
// resumedStream). objs are st's decoded objects; the apiserver's watch from st.Position is
// opened through l.real with opts less its initial-events fields (bookmarks allowed). ctx
// bounds that watch.
func (l *resumeLW) resumedWatch(ctx context.Context, st *State, objs []runtime.Object, opts metav1.ListOptions) watch.Interface {
	s := &resumedStream{result: make(chan watch.Event), done: make(chan struct{})}
	go s.run(ctx, l, st.Position, objs, opts)
	return s
}

func (s *resumedStream) run(ctx context.Context, l *resumeLW, position string, objs []runtime.Object, opts metav1.ListOptions) {
	defer close(s.result)
	for _, o := range objs {
		if !s.send(watch.Event{Type: watch.Added, Object: o}) {
			return
		}
	}
	bm := l.kind.newObj()
	m, err := meta.Accessor(bm)
	if err != nil {
		s.send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
		return
	}
	m.SetResourceVersion(position)
	m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	if !s.send(watch.Event{Type: watch.Bookmark, Object: bm}) {
		return
	}

	o := opts
	o.SendInitialEvents, o.ResourceVersionMatch = nil, ""
	o.ResourceVersion, o.AllowWatchBookmarks = position, true
	delay := resumeWatchBackoff
	var w watch.Interface
	for {
		w, err = l.real.WatchWithContext(ctx, o)
		if err == nil {
			break
		}
		if !utilnet.IsConnectionRefused(err) && !apierrors.IsTooManyRequests(err) {
			s.send(watch.Event{Type: watch.Error, Object: statusOf(err)})
			return
		}
		select {
		case <-s.done:
			return
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, resumeWatchBackoffMax)
	}
	s.mu.Lock()
	s.real = w
	s.mu.Unlock()
	select {
	case <-s.done: // stopped while the watch opened: Stop did not see it
		w.Stop()
		return
	default:
	}
	for ev := range w.ResultChan() {
		if !s.send(ev) {
			return
		}
	}
}

// send hands ev to the reflector; false once the stream is stopped.
func (s *resumedStream) send(ev watch.Event) bool {
	select {
	case s.result <- ev:
		return true
	case <-s.done:
		return false
	}
}

// Stop ends the stream and the apiserver's watch under it.
func (s *resumedStream) Stop() {
	s.stop.Do(func() {
		close(s.done)
		s.mu.Lock()
		w := s.real
		s.mu.Unlock()
		if w != nil {
			w.Stop()
		}
	})
}

// ResultChan returns the stream's events; closed when the stream ends.
func (s *resumedStream) ResultChan() <-chan watch.Event { return s.result }
