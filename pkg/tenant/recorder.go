package tenant

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// lazyRecorder is the record.EventRecorder of a tenant Cluster. It starts its event
// broadcaster (client-go's: a 1000-event queue, a watcher and the goroutines that write to the
// tenant, about 100 KB) at the first Event, so a tenant the syncer never reports anything to
// costs none of it. After shutdown, Events are dropped, as client-go's recorder drops them once
// its broadcaster is shut down.
type lazyRecorder struct {
	// start builds and starts the broadcaster and returns it with its recorder.
	start func() (record.EventBroadcaster, record.EventRecorder)

	mu      sync.Mutex
	b       record.EventBroadcaster
	r       record.EventRecorder
	stopped bool
}

var _ record.EventRecorder = (*lazyRecorder)(nil)

// recorder returns the started recorder, starting it first if needed; nil after shutdown.
func (l *lazyRecorder) recorder() record.EventRecorder {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r == nil && !l.stopped {
		l.b, l.r = l.start()
	}
	return l.r
}

// Event implements record.EventRecorder.
func (l *lazyRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	if r := l.recorder(); r != nil {
		r.Event(object, eventtype, reason, message)
	}
}

// Eventf implements record.EventRecorder.
func (l *lazyRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	if r := l.recorder(); r != nil {
		r.Eventf(object, eventtype, reason, messageFmt, args...)
	}
}

// AnnotatedEventf implements record.EventRecorder.
func (l *lazyRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	if r := l.recorder(); r != nil {
		r.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
	}
}

// shutdown stops the broadcaster if it was started; later Events are dropped.
func (l *lazyRecorder) shutdown() {
	l.mu.Lock()
	b := l.b
	l.stopped, l.r = true, nil
	l.mu.Unlock()
	if b != nil {
		b.Shutdown()
	}
}
