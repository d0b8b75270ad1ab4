package source

import (
	"fmt"
	"hash/maphash"
	"sort"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// Resume modes of a Source, as reported by Source.Mode and the vcsyncer_source_resume_mode metric.
const (
	// ModeCold: no checkpoint state; the informer listed everything.
	ModeCold = "cold"
	// ModeWatch: the first List was answered from the checkpoint and the watch resumed from its
	// position: no LIST request.
	ModeWatch = "watch"
	// ModeRelistDiff: the informer listed (the position had expired, or only the ack map was
	// saved), and only objects whose version differs from the ack map are enqueued.
	ModeRelistDiff = "relist-diff"
)

// ObjectVersion is the version of one object as handed to the workqueue.
type ObjectVersion struct {
	UID             types.UID
	ResourceVersion string // compared for equality only (KEP-5504: RVs of one resource only)
	// Owner is set for super-cluster objects owned by a tenant: where the object came from, so
	// a super object deleted while the syncer was away can still be mapped to its tenant
	// request. Empty for tenant objects.
	Owner *Owner `json:",omitempty"`
}

// Owner names the tenant object a super object was synced from.
type Owner struct {
	Tenant, TenantUID, Namespace, Name string
}

// VersionOf returns obj's (UID, resourceVersion).
func VersionOf(obj metav1.Object) ObjectVersion {
	return ObjectVersion{UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
}

// State is one Source's part of a checkpoint.
type State struct {
	// ID identifies the Source ("tenant/<name>/<Kind>", "super/<Kind>", ...).
	ID string
	// Position is the resourceVersion the cached Objects are at; "" when no objects were saved.
	Position string
	// Objects are the cached objects at Position, each protobuf-encoded.
	Objects [][]byte
	// HasObjects tells an empty cache (true, no Objects) from objects not saved.
	HasObjects bool
	// Acked is the ack map: object key ("namespace/name" or "name") → version last enqueued.
	Acked map[string]ObjectVersion
	// Scope holds, for an informer that follows a Scope, the values whose objects Objects
	// are (sorted); nil otherwise.
	Scope []string
	// Identity identifies the cluster the state was read from (its kube-system namespace UID);
	// state of another cluster is discarded (Registry.CheckIdentity).
	Identity string
}

// Source is the resumable state of one informer. Its methods are safe for concurrent use.
type Source struct {
	// ID identifies the Source; see State.ID.
	ID string

	reg *Registry

	mu       sync.Mutex
	acked    map[string]ObjectVersion
	informer cache.SharedIndexInformer // the current informer; nil until one is built
	lw       *resumeLW                 // the current informer's list-watch
	pending  *State                    // restored state whose objects were not served yet
	restored bool                      // state came from a checkpoint
	served   bool                      // the current informer's first List came from the checkpoint
	mode     string
	identity string
	// forgotten: dropped from its Registry (Forget); a checkpoint that read it before leaves
	// it out
	forgotten bool
}

// Ack records that the object under key, at version v, has been enqueued (or needs no work).
// Call it after the enqueue.
func (s *Source) Ack(key string, v ObjectVersion) {
	s.mu.Lock()
	s.acked[key] = v
	s.mu.Unlock()
}

// IsAcked reports whether key's ack entry is v (same UID and resourceVersion): that version
// was enqueued already, or needed no work.
func (s *Source) IsAcked(key string, v ObjectVersion) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.acked[key]
	return ok && a.UID == v.UID && a.ResourceVersion == v.ResourceVersion
}

// Acked returns key's ack entry, if any.
func (s *Source) Acked(key string) (ObjectVersion, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.acked[key]
	return v, ok
}

// Unack forgets key (after the deletion of its object was enqueued).
func (s *Source) Unack(key string) {
	s.mu.Lock()
	delete(s.acked, key)
	s.mu.Unlock()
}

// Diff compares the informer cache's current objects with the ack map. It returns, for the
// objects keep accepts (nil accepts all), the cached objects whose (UID, resourceVersion)
// differs from their ack entry or that have none (changed), and the ack entries with no cached
// object (vanished, by key). It does not change the ack map: call Ack/Unack after enqueueing.
func (s *Source) Diff(objs []any, keep func(obj metav1.Object) bool, keepVanished func(key string, v ObjectVersion) bool) (changed []metav1.Object, vanished map[string]ObjectVersion) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]struct{}, len(objs))
	for _, o := range objs {
		m, ok := o.(metav1.Object)
		if !ok || (keep != nil && !keep(m)) {
			continue
		}
		key := Key(m)
		seen[key] = struct{}{}
		a, ok := s.acked[key]
		if !ok || a.UID != m.GetUID() || a.ResourceVersion != m.GetResourceVersion() {
			changed = append(changed, m)
		}
	}
	for key, v := range s.acked {
		if _, ok := seen[key]; ok {
			continue
		}
		if keepVanished != nil && !keepVanished(key, v) {
			continue
		}
		if vanished == nil {
			vanished = map[string]ObjectVersion{}
		}
		vanished[key] = v
	}
	return changed, vanished
}

// Key is the cache key of obj: "namespace/name", or "name" for cluster-scoped objects.
func Key(obj metav1.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// SplitKey splits a Key into namespace and name.
func SplitKey(key string) (namespace, name string) {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

// Mode returns how the current informer started: ModeWatch, ModeRelistDiff or ModeCold.
func (s *Source) Mode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// setInformer attaches the informer built for this Source.
func (s *Source) setInformer(inf cache.SharedIndexInformer, lw *resumeLW) {
	s.mu.Lock()
	s.informer, s.lw, s.served = inf, lw, false
	s.mu.Unlock()
}

// takePending returns the restored state to answer the first List with, or nil, and records
// the resume mode of this List.
func (s *Source) takePending() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	switch {
	case p != nil && p.Position != "" && p.HasObjects && !s.served:
		s.pending, s.served = nil, true
		s.setMode(ModeWatch)
		s.reg.listAvoided(s.ID)
		return p
	case s.served || s.restored || len(s.acked) > 0:
		s.pending = nil
		s.setMode(ModeRelistDiff)
	default:
		s.setMode(ModeCold)
	}
	return nil
}

func (s *Source) setMode(m string) {
	if s.mode == m {
		return
	}
	s.mode = m
	if s.reg.OnMode != nil {
		s.reg.OnMode(s.ID, m)
	}
}

// checkpoint captures the Source's State: position and objects first, then the ack map.
func (s *Source) checkpoint() (State, error) {
	s.mu.Lock()
	inf, lw, pending := s.informer, s.lw, s.pending
	s.mu.Unlock()
	st := State{ID: s.ID}
	switch {
	case inf != nil && inf.HasSynced():
		// The position is read before the objects: the objects are then at or after it, and
		// watching from it replays what came in between (checkpointing.md 3.4 pitfall 4). It
		// is the position of the cache itself (cachePosition), not the reflector's, which runs
		// ahead of the cache by the events still in the informer's queue. A stopped informer
		// (the final checkpoint at shutdown) still holds a consistent pair: its cache and the
		// resourceVersion of the last event applied to it. An informer that follows a Scope is
		// read between the hand-overs of a change of the Scope, never among them; the objects
		// handed over are never newer than the watch's position, so applying them never moves
		// the cache's position past events it does not hold, and the values saved are only
		// those whose objects the cache is known to hold (storeValues): a value whose objects
		// are still in the informer's queue is left out, and a resume lists it again.
		if lw != nil && lw.scope != nil {
			lw.ss.inject.Lock()
			st.Position, st.Scope = cachePosition(inf), lw.storeValues()
			lw.ss.inject.Unlock()
		} else {
			st.Position = cachePosition(inf)
		}
		st.HasObjects = true
		objs := inf.GetStore().List()
		st.Objects = make([][]byte, 0, len(objs))
		for _, o := range objs {
			b, err := marshal(o)
			if err != nil {
				return State{}, fmt.Errorf("source %s: %w", s.ID, err)
			}
			st.Objects = append(st.Objects, b)
		}
	case pending != nil:
		st.Position, st.Objects, st.HasObjects, st.Scope = pending.Position, pending.Objects, pending.HasObjects, pending.Scope
	}
	s.mu.Lock()
	st.Identity = s.identity
	st.Acked = make(map[string]ObjectVersion, len(s.acked))
	for k, v := range s.acked {
		st.Acked[k] = v
	}
	s.mu.Unlock()
	return st, nil
}

// cachePosition returns the resourceVersion that informer inf's cache is at: that of the last
// event, bookmark or list applied to the cache (client-go's Store.LastStoreSyncResourceVersion,
// kept with the AtomicFIFO feature, on by default since client-go 1.36). The reflector's
// position (LastSyncResourceVersion) is not that: the reflector sets it when it queues an
// event, before the informer applies the event to the cache. Paired with the cache's objects,
// it could say "a deletion was seen" of an object still cached; a resumed watch would start
// after the deletion and the object would stay cached, its delete never delivered. When the
// cache reports no position (AtomicFIFO turned off), the reflector's is returned.
func cachePosition(inf cache.SharedIndexInformer) string {
	if rv := inf.GetStore().LastStoreSyncResourceVersion(); rv != "" {
		return rv
	}
	return inf.LastSyncResourceVersion()
}

// digest returns a hash of what checkpoint would save, without encoding any object: the
// identity, whether objects are saved, the (key, UID, resourceVersion) of every cached object,
// and every ack entry. The position is left out: a watch event that changes no object (a
// bookmark) moves it, and resuming from the earlier position replays the same objects. Entries
// are combined by addition, so the hash does not depend on the cache's or the map's order.
func (s *Source) digest() uint64 {
	s.mu.Lock()
	inf, lw, pending := s.informer, s.lw, s.pending
	s.mu.Unlock()
	var sum uint64
	switch {
	case inf != nil && inf.HasSynced():
		sum = hashStrings("objects")
		if lw != nil && lw.scope != nil {
			sum += hashStrings(append([]string{"scope"}, lw.storeValues()...)...)
		}
		for _, o := range inf.GetStore().List() {
			if m, ok := o.(metav1.Object); ok {
				sum += hashStrings(m.GetNamespace(), m.GetName(), string(m.GetUID()), m.GetResourceVersion())
			}
		}
	case pending != nil:
		sum = hashStrings("pending", pending.Position, fmt.Sprint(len(pending.Objects), pending.HasObjects))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sum += hashStrings("identity", s.identity)
	for k, v := range s.acked {
		e := hashStrings("ack", k, string(v.UID), v.ResourceVersion)
		if v.Owner != nil {
			e += hashStrings("owner", k, v.Owner.Tenant, v.Owner.TenantUID, v.Owner.Namespace, v.Owner.Name)
		}
		sum += e
	}
	return sum
}

// digestSeed keys the digests of this process (they are only ever compared within it).
var digestSeed = maphash.MakeSeed()

// hashStrings returns the hash of parts (hash/maphash under digestSeed), each followed by a
// zero byte so that ("ab", "c") and ("a", "bc") differ. The seed is random per process, so
// names chosen by a tenant cannot be made to collide on purpose.
func hashStrings(parts ...string) uint64 {
	var h maphash.Hash
	h.SetSeed(digestSeed)
	for _, p := range parts {
		_, _ = h.WriteString(p)
		_ = h.WriteByte(0)
	}
	return h.Sum64()
}

// Digest returns a hash of the states Checkpoint(keep) would return, computed without encoding
// any object: equal digests mean equal cached objects (by key, UID and resourceVersion), ack
// maps and identities for the same set of Sources. Positions are left out (see
// Source.digest). The checkpointer uses it to skip writing a checkpoint that would hold what
// the last one holds.
func (r *Registry) Digest(keep func(id string) bool) uint64 {
	srcs := r.kept(keep)
	var sum uint64
	for _, s := range srcs {
		sum += hashStrings("source", s.ID) ^ s.digest()
	}
	return sum
}

// Registry holds the Sources of one syncer process. It is safe for concurrent use.
type Registry struct {
	// OnMode, if set, is called when a Source's resume mode changes (for metrics).
	OnMode func(id, mode string)
	// OnListAvoided, if set, is called when a List is answered from a checkpoint.
	OnListAvoided func(id string)

	mu      sync.Mutex
	sources map[string]*Source
	read    func(id string) // test hook: called after Checkpoint reads each Source
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{sources: map[string]*Source{}} }

// Source returns the Source with the given ID, creating it (with no state) if needed.
func (r *Registry) Source(id string) *Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sources[id]
	if !ok {
		s = &Source{ID: id, reg: r, acked: map[string]ObjectVersion{}}
		r.sources[id] = s
	}
	return s
}

// Lookup returns the Source with the given ID, if any.
func (r *Registry) Lookup(id string) (*Source, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sources[id]
	return s, ok
}

// Pending returns the number of objects the restored state of Source id holds for its
// informer's first List, and true when that List will be answered from it (a position and
// objects were saved, and no List has been served yet); 0 and false otherwise.
func (r *Registry) Pending(id string) (int, bool) {
	s, ok := r.Lookup(id)
	if !ok {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pending; p != nil && p.Position != "" && p.HasObjects && !s.served {
		return len(p.Objects), true
	}
	return 0, false
}

// Restore loads checkpointed states. Call it before the informers start: each state's objects
// answer its informer's first List, and its ack map becomes the Source's.
func (r *Registry) Restore(states []State) {
	for i := range states {
		st := states[i]
		s := r.Source(st.ID)
		s.mu.Lock()
		s.pending, s.restored, s.identity = &st, true, st.Identity
		s.acked = st.Acked
		if s.acked == nil {
			s.acked = map[string]ObjectVersion{}
		}
		s.mu.Unlock()
	}
}

// RestoreAcks replaces only the ack maps of the given states' Sources (whose informers already
// run): a replica that resumed its caches earlier takes the newer ack maps of the latest
// checkpoint. States of another cluster identity are ignored.
func (r *Registry) RestoreAcks(states []State) {
	for i := range states {
		s := r.Source(states[i].ID)
		s.mu.Lock()
		if s.identity == "" || s.identity == states[i].Identity {
			s.acked = states[i].Acked
			if s.acked == nil {
				s.acked = map[string]ObjectVersion{}
			}
		}
		s.mu.Unlock()
	}
}

// MergeAcks replaces, in the ack maps of the given states' Sources (whose informers may
// already run), the entries match accepts by the state's entries match accepts, leaving the
// others alone: a shard that takes a tenant over takes the ack entries of that tenant's super
// objects from the checkpoint of the shard that synced it. States of another cluster identity
// are ignored.
func (r *Registry) MergeAcks(states []State, match func(key string, v ObjectVersion) bool) {
	for i := range states {
		s := r.Source(states[i].ID)
		s.mu.Lock()
		if s.identity == "" || s.identity == states[i].Identity {
			for k, v := range s.acked {
				if match(k, v) {
					delete(s.acked, k)
				}
			}
			for k, v := range states[i].Acked {
				if match(k, v) {
					s.acked[k] = v
				}
			}
		}
		s.mu.Unlock()
	}
}

// CheckIdentity records that the Sources whose ID starts with prefix read the cluster with
// the given identity (its kube-system namespace UID), and discards the restored state of those
// that read another cluster (a tenant control plane or super cluster rebuilt under the same
// name): their positions and objects mean nothing there. It returns the number of Sources
// whose state was discarded. Call it before their informers start.
func (r *Registry) CheckIdentity(prefix, identity string) int {
	r.mu.Lock()
	srcs := make([]*Source, 0)
	for id, s := range r.sources {
		if strings.HasPrefix(id, prefix) {
			srcs = append(srcs, s)
		}
	}
	r.mu.Unlock()
	n := 0
	for _, s := range srcs {
		s.mu.Lock()
		if s.identity != "" && s.identity != identity {
			s.pending, s.restored, s.acked = nil, false, map[string]ObjectVersion{}
			n++
		}
		s.identity = identity
		s.mu.Unlock()
	}
	return n
}

// Forget drops every Source whose ID starts with prefix (a removed tenant: "tenant/<name>/").
// A Checkpoint running meanwhile leaves them out (see Checkpoint).
func (r *Registry) Forget(prefix string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, s := range r.sources {
		if strings.HasPrefix(id, prefix) {
			delete(r.sources, id)
			s.mu.Lock()
			s.forgotten = true
			s.mu.Unlock()
		}
	}
}

// kept returns the Sources whose ID keep accepts (nil accepts all), in no particular order.
func (r *Registry) kept(keep func(id string) bool) []*Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	srcs := make([]*Source, 0, len(r.sources))
	for id, s := range r.sources {
		if keep == nil || keep(id) {
			srcs = append(srcs, s)
		}
	}
	return srcs
}

// Checkpoint returns the State of every Source, sorted by ID. keep (nil keeps all) filters by
// ID, e.g. to drop tenants that are no longer registered. Sources forgotten while it runs are
// left out: a removed tenant's Sources are forgotten before its entries in the super Sources'
// ack maps (syncer.ClusterStopped), so super Sources read after that may lack part of them,
// and the tenant must not be resumed from such a checkpoint.
func (r *Registry) Checkpoint(keep func(id string) bool) ([]State, error) {
	srcs := r.kept(keep)
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].ID < srcs[j].ID })
	out := make([]State, 0, len(srcs))
	for _, s := range srcs {
		st, err := s.checkpoint()
		if err != nil {
			return nil, err
		}
		if r.read != nil {
			r.read(s.ID)
		}
		out = append(out, st)
	}
	kept := out[:0]
	for i, s := range srcs {
		s.mu.Lock()
		gone := s.forgotten
		s.mu.Unlock()
		if !gone {
			kept = append(kept, out[i])
		}
	}
	return kept, nil
}

// Modes returns each Source's resume mode by ID.
func (r *Registry) Modes() map[string]string {
	r.mu.Lock()
	srcs := make([]*Source, 0, len(r.sources))
	for _, s := range r.sources {
		srcs = append(srcs, s)
	}
	r.mu.Unlock()
	out := make(map[string]string, len(srcs))
	for _, s := range srcs {
		if m := s.Mode(); m != "" {
			out[s.ID] = m
		}
	}
	return out
}

func (r *Registry) listAvoided(id string) {
	if r.OnListAvoided != nil {
		r.OnListAvoided(id)
	}
}

// UnackWhere forgets the ack entries match accepts (a removed tenant's super objects).
func (s *Source) UnackWhere(match func(key string, v ObjectVersion) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.acked {
		if match(k, v) {
			delete(s.acked, k)
		}
	}
}
