package source

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// ScopeNone is the label value a Scope with no values selects: no object carries it (a Scope
// of tenant UIDs never holds it, as a UID is 36 characters), so such informers cache nothing.
const ScopeNone = "none"

// Scope is a changing set of values of one label key that restricts what the informers of a
// Factory cache: only objects whose label Key has one of the values (a sharded syncer replica's
// super-cluster informers hold only the super objects of the tenants it syncs). It is safe for
// concurrent use.
//
// A change does not restart the informers and does not list everything again. Each informer
// applies it within its running watch (scopedWatch): it lists only the objects of the values
// added (one LIST with a label selector on those values, resourceVersion not older than the
// watch's position), hands those not newer than the position to the reflector as Added
// events (the watch, reopened from the position, brings the newer ones), hands the cached objects of
// the values removed to it as Deleted events, and watches on with the new selector from the
// same position. Wait blocks until every running informer has done so.
type Scope struct {
	key string

	mu      sync.Mutex
	values  map[string]struct{}
	gen     uint64
	changed chan struct{} // closed (and replaced) on every change
	applied chan struct{} // closed (and replaced) whenever an informer applied a generation
	lws     []*resumeLW
}

// NewScope returns a Scope on label key holding values.
func NewScope(key string, values ...string) *Scope {
	s := &Scope{key: key, values: map[string]struct{}{}, changed: make(chan struct{}), applied: make(chan struct{})}
	for _, v := range values {
		s.values[v] = struct{}{}
	}
	return s
}

// Key returns the label key the Scope selects on.
func (s *Scope) Key() string { return s.key }

// Add adds v. It returns the generation to Wait for (the current one when v was there already).
func (s *Scope) Add(v string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.values[v]; !ok {
		s.values[v] = struct{}{}
		s.bumpLocked()
	}
	return s.gen
}

// Remove removes v; the informers then drop its objects from their caches.
func (s *Scope) Remove(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.values[v]; ok {
		delete(s.values, v)
		s.bumpLocked()
	}
}

// Has reports whether v is in the Scope.
func (s *Scope) Has(v string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.values[v]
	return ok
}

// Values returns the values, sorted.
func (s *Scope) Values() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.values)
}

func (s *Scope) bumpLocked() {
	s.gen++
	close(s.changed)
	s.changed = make(chan struct{})
}

// snapshot returns a copy of the values, their generation and a channel closed at the next
// change.
func (s *Scope) snapshot() (map[string]struct{}, uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vals := make(map[string]struct{}, len(s.values))
	for v := range s.values {
		vals[v] = struct{}{}
	}
	return vals, s.gen, s.changed
}

func (s *Scope) follow(l *resumeLW) {
	s.mu.Lock()
	s.lws = append(s.lws, l)
	s.mu.Unlock()
}

// markApplied is called by an informer's list-watch after its cache reflects generation gen.
func (s *Scope) markApplied() {
	s.mu.Lock()
	close(s.applied)
	s.applied = make(chan struct{})
	s.mu.Unlock()
}

// ErrScopeWait is returned by Wait when ctx ends first.
var ErrScopeWait = errors.New("scope: the informers did not apply the change in time")

// Wait blocks until every informer of the Scope that has started (listed at least once)
// caches according to generation gen or a later one, or until ctx is done (ErrScopeWait
// joined with ctx's error). Informers that have not started yet list with the current values
// when they do.
func (s *Scope) Wait(ctx context.Context, gen uint64) error {
	for {
		s.mu.Lock()
		lws, ch := slices.Clone(s.lws), s.applied
		s.mu.Unlock()
		done := true
		for _, l := range lws {
			if started, g := l.scopeApplied(); started && g < gen {
				done = false
				break
			}
		}
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return errors.Join(ErrScopeWait, ctx.Err())
		}
	}
}

// selector returns base (a label selector, may be empty) restricted to objects whose key has
// one of vals (ScopeNone when vals is empty).
func scopeSelector(base, key string, vals map[string]struct{}) (string, error) {
	list := sortedKeys(vals)
	if len(list) == 0 {
		list = []string{ScopeNone}
	}
	req, err := labels.NewRequirement(key, selection.In, list)
	if err != nil {
		return "", err
	}
	sel := labels.NewSelector().Add(*req).String()
	if strings.TrimSpace(base) == "" {
		return sel, nil
	}
	return base + "," + sel, nil
}

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}
