package admit

import (
	"sync"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// objectLimits is the syncer's side of limits.maxObjects: per tenant Cluster and kind, the set
// of tenant objects (by "namespace/name" key) admitted for syncing, at most the cap, and the
// set of those refused because the cap was reached. It decides which objects are synced; it
// does not hold objects, so it does not bound the tenant informers' own memory.
//
// An object is admitted when it is already, or when fewer than cap objects are; otherwise it
// is refused, once, until it is deleted or a slot frees up (release promotes a refused one).
// Admission is idempotent: whichever path sees an object first (the event handler, the initial
// list, a reconcile that creates its super namespace) decides, the others agree. An admitted
// object stays admitted when the cap is lowered: lowering stops new objects, it never drops
// synced ones. It is safe for concurrent use. The zero value is ready.
type objectLimits struct {
	mu sync.Mutex
	m  map[*tenant.Cluster]map[resources.Kind]*kindLimit
}

// kindLimit is one tenant's and kind's admitted and refused keys.
type kindLimit struct {
	admitted map[string]struct{}
	refused  map[string]struct{}
}

// kindOf returns the state of c and kind, creating it.
func (l *objectLimits) kindOf(c *tenant.Cluster, kind resources.Kind) *kindLimit {
	if l.m == nil {
		l.m = map[*tenant.Cluster]map[resources.Kind]*kindLimit{}
	}
	kinds := l.m[c]
	if kinds == nil {
		kinds = map[resources.Kind]*kindLimit{}
		l.m[c] = kinds
	}
	k := kinds[kind]
	if k == nil {
		k = &kindLimit{admitted: map[string]struct{}{}, refused: map[string]struct{}{}}
		kinds[kind] = k
	}
	return k
}

// admit decides whether the object at key of kind of tenant c is synced, under cap (the
// number of admitted objects allowed; below 0 means no cap). force admits it whatever the
// count (an object the syncer already has a super copy of). newlyRefused is true only the first
// time an object is refused (report then).
func (l *objectLimits) admit(c *tenant.Cluster, kind resources.Kind, key string, capacity int, force bool) (ok, newlyRefused bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.kindOf(c, kind)
	if _, ok := k.admitted[key]; ok {
		return true, false
	}
	if force || capacity < 0 || len(k.admitted) < capacity {
		delete(k.refused, key)
		k.admitted[key] = struct{}{}
		return true, false
	}
	if _, ok := k.refused[key]; ok {
		return false, false
	}
	k.refused[key] = struct{}{}
	return false, true
}

// isRefused reports whether the object at key was refused (and not deleted or promoted since).
func (l *objectLimits) isRefused(c *tenant.Cluster, kind resources.Kind, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	kinds := l.m[c]
	if kinds == nil || kinds[kind] == nil {
		return false
	}
	_, refused := kinds[kind].refused[key]
	return refused
}

// release forgets the deleted object at key and returns the refused keys promoted into the
// freed slots (while fewer than capacity are admitted), for the caller to enqueue.
func (l *objectLimits) release(c *tenant.Cluster, kind resources.Kind, key string, capacity int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.kindOf(c, kind)
	delete(k.refused, key)
	if _, ok := k.admitted[key]; !ok {
		return nil
	}
	delete(k.admitted, key)
	return k.promote(capacity)
}

// raise promotes, for every kind of tenant c, refused keys while fewer than capacity are
// admitted (after a policy change raised the cap), and returns them by kind.
func (l *objectLimits) raise(c *tenant.Cluster, capacity int) map[resources.Kind][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[resources.Kind][]string{}
	for kind, k := range l.m[c] {
		if p := k.promote(capacity); len(p) > 0 {
			out[kind] = p
		}
	}
	return out
}

// promote moves refused keys (in no particular order) to admitted while fewer than capacity
// are admitted. Call with the lock held.
func (k *kindLimit) promote(capacity int) []string {
	var out []string
	for key := range k.refused {
		if capacity >= 0 && len(k.admitted) >= capacity {
			break
		}
		delete(k.refused, key)
		k.admitted[key] = struct{}{}
		out = append(out, key)
	}
	return out
}

// counts returns the numbers of admitted and refused objects of kind of tenant c.
func (l *objectLimits) counts(c *tenant.Cluster, kind resources.Kind) (admitted, refused int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if kinds := l.m[c]; kinds != nil && kinds[kind] != nil {
		return len(kinds[kind].admitted), len(kinds[kind].refused)
	}
	return 0, 0
}

// forget drops tenant c's state (its Cluster stopped, or is starting with new informers).
func (l *objectLimits) forget(c *tenant.Cluster) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, c)
}
