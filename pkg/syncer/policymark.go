package syncer

import (
	"context"
	"encoding/json"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// policyExtra is the name of the checkpoint's extra state that holds, per tenant, the
// generation of the effective policy its objects were last examined under.
const policyExtra = "tenant-policies"

// policyMarks remembers, per tenant, the effective policy generation (policy.Effective.
// Generation, a hash of the resolved spec) under which every object of the tenant was last
// enqueued for examination: recorded at the end of clusterSynced and PolicyChanged, saved in
// every checkpoint, restored from one. A resume only enqueues what changed since the
// checkpoint's acks, a policy set before a Cluster starts is no PolicyChanged, and the
// registry skips PolicyChanged for a Cluster that has not synced (one replaced in this
// process included), so every clusterSynced compares the tenant's generation with its mark
// (policyChangedSince) and runs PolicyChanged when they differ.
//
// Lock rules: mu is a leaf lock; nothing is called while it is held.
type policyMarks struct {
	mu sync.Mutex
	// applied is each tenant's mark; marked the tenants marked by this process (a restore
	// does not overwrite those); captured the marks as they were when the last checkpoint's
	// queues were taken (what that checkpoint saves: a mark set after the queue snapshot may
	// stand for enqueues the snapshot does not hold).
	applied  map[string]string
	marked   map[string]bool
	captured map[string]string
}

// markApplied records that every object of c is enqueued under its current policy.
func (m *policyMarks) markApplied(c *tenant.Cluster) { m.setApplied(c.Name, c.Policy().Generation) }

func (m *policyMarks) setApplied(tenantName, gen string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.applied == nil {
		m.applied, m.marked = map[string]string{}, map[string]bool{}
	}
	m.applied[tenantName], m.marked[tenantName] = gen, true
}

// restore takes the marks of a checkpoint's policyExtra, except for tenants this process has
// marked since it started (its own marks are newer).
func (m *policyMarks) restore(gens map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.applied == nil {
		m.applied, m.marked = map[string]string{}, map[string]bool{}
	}
	for name, gen := range gens {
		if !m.marked[name] {
			m.applied[name] = gen
		}
	}
}

// get returns tenant's mark; ok is false when it has none (never examined since a cold
// start, or resumed from a checkpoint written before policyExtra).
func (m *policyMarks) get(tenantName string) (gen string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gen, ok = m.applied[tenantName]
	return gen, ok
}

// forget drops tenant's mark (its Tenant was removed).
func (m *policyMarks) forget(tenantName string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.applied, tenantName)
	delete(m.marked, tenantName)
}

// snapshot returns the marks of the tenants keep accepts.
func (m *policyMarks) snapshot(keep func(string) bool) map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for name, gen := range m.applied {
		if keep(name) {
			out[name] = gen
		}
	}
	return out
}

// capture keeps snapshot(keep) for the next takeCaptured: SnapshotQueues calls it before it
// takes the queues.
func (m *policyMarks) capture(keep func(string) bool) {
	c := m.snapshot(keep)
	m.mu.Lock()
	m.captured = c
	m.mu.Unlock()
}

// takeCaptured returns (and forgets) the marks capture kept, or snapshot(keep) when none.
func (m *policyMarks) takeCaptured(keep func(string) bool) map[string]string {
	m.mu.Lock()
	c := m.captured
	m.captured = nil
	m.mu.Unlock()
	if c == nil {
		return m.snapshot(keep)
	}
	return c
}

// policyChangedSince reports whether c's effective policy differs from its mark: false when it
// has none, and for a tenant synced cold (every object enqueued anyway). Call it in
// clusterSynced before markApplied.
func (s *Syncer) policyChangedSince(c *tenant.Cluster, cold bool) bool {
	gen, ok := s.policyMarks.get(c.Name)
	if !ok || cold || gen == c.Policy().Generation {
		return false
	}
	ctrl.Log.WithName("checkpoint").Info("The tenant's policy changed since its objects were last examined; every object of it is examined again",
		"tenant", c.Name, "examinedUnder", gen, "now", c.Policy().Generation)
	return true
}

// policyState is policyMarks as a checkpoint.Checkpointable (policyExtra).
type policyState struct{ s *Syncer }

var _ checkpoint.Checkpointable = policyState{}

func (p policyState) Name() string { return policyExtra }

// Checkpoint returns the marks as they were when SnapshotQueues took the queues.
func (p policyState) Checkpoint(context.Context) ([]byte, error) {
	return json.Marshal(p.s.policyMarks.takeCaptured(p.s.keepTenantForCheckpoint))
}

func (p policyState) Restore(_ context.Context, data []byte) error {
	gens := map[string]string{}
	if err := json.Unmarshal(data, &gens); err != nil {
		return err
	}
	p.s.policyMarks.restore(gens)
	return nil
}

// restorePolicyFor takes tenant's generation from a hand-over checkpoint's policyExtra, if any.
func (s *Syncer) restorePolicyFor(cp *checkpoint.Checkpoint, tenantName string) {
	gens := map[string]string{}
	if b, ok := cp.Extras[policyExtra]; !ok || json.Unmarshal(b, &gens) != nil {
		return
	}
	if gen, ok := gens[tenantName]; ok {
		s.policyMarks.restore(map[string]string{tenantName: gen})
	}
}
