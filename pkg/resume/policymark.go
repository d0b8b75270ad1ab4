package resume

import (
	"context"
	"encoding/json"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// PolicyExtra is the name of the checkpoint's extra state that holds, per tenant, the
// generation of the effective policy its objects were last examined under.
const PolicyExtra = "tenant-policies"

// PolicyMarks remembers, per tenant, the effective policy generation (policy.Effective.
// Generation, a hash of the resolved spec) under which every object of the tenant was last
// enqueued for examination: recorded at the end of clusterSynced and PolicyChanged, saved in
// every checkpoint, restored from one. A resume only enqueues what changed since the
// checkpoint's acks, a policy set before a Cluster starts is no PolicyChanged, and the
// registry skips PolicyChanged for a Cluster that has not synced (one replaced in this
// process included), so every clusterSynced compares the tenant's generation with its mark
// (PolicyChangedSince) and runs PolicyChanged when they differ.
//
// Lock rules: mu is a leaf lock; nothing is called while it is held.
type PolicyMarks struct {
	mu sync.Mutex
	// applied is each tenant's mark; marked the tenants marked by this process (a restore
	// does not overwrite those); captured the marks as they were when the last checkpoint's
	// queues were taken (what that checkpoint saves: a mark set after the queue snapshot may
	// stand for enqueues the snapshot does not hold).
	applied  map[string]string
	marked   map[string]bool
	captured map[string]string
}

// MarkApplied records that every object of c is enqueued under its current policy.
func (m *PolicyMarks) MarkApplied(c *tenant.Cluster) { m.SetApplied(c.Name, c.Policy().Generation) }

// SetApplied records gen as tenantName's mark, set by this process (Restore keeps it).
func (m *PolicyMarks) SetApplied(tenantName, gen string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.applied == nil {
		m.applied, m.marked = map[string]string{}, map[string]bool{}
	}
	m.applied[tenantName], m.marked[tenantName] = gen, true
}

// Restore takes the marks of a checkpoint's PolicyExtra, except for tenants this process has
// marked since it started (its own marks are newer).
func (m *PolicyMarks) Restore(gens map[string]string) {
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

// Get returns tenant's mark; ok is false when it has none (never examined since a cold
// start, or resumed from a checkpoint written before PolicyExtra).
func (m *PolicyMarks) Get(tenantName string) (gen string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gen, ok = m.applied[tenantName]
	return gen, ok
}

// Forget drops tenant's mark (its Tenant was removed).
func (m *PolicyMarks) Forget(tenantName string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.applied, tenantName)
	delete(m.marked, tenantName)
}

// Snapshot returns the marks of the tenants keep accepts.
func (m *PolicyMarks) Snapshot(keep func(string) bool) map[string]string {
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

// capture keeps Snapshot(keep) for the next takeCaptured: SnapshotQueues calls it before it
// takes the queues.
func (m *PolicyMarks) capture(keep func(string) bool) {
	c := m.Snapshot(keep)
	m.mu.Lock()
	m.captured = c
	m.mu.Unlock()
}

// takeCaptured returns (and forgets) the marks capture kept, or Snapshot(keep) when none.
func (m *PolicyMarks) takeCaptured(keep func(string) bool) map[string]string {
	m.mu.Lock()
	c := m.captured
	m.captured = nil
	m.mu.Unlock()
	if c == nil {
		return m.Snapshot(keep)
	}
	return c
}

// PolicyChangedSince reports whether c's effective policy differs from its mark: false when it
// has none, and for a tenant synced cold (every object enqueued anyway). Call it in
// clusterSynced before MarkApplied.
func (st *State) PolicyChangedSince(c *tenant.Cluster, cold bool) bool {
	gen, ok := st.Marks.Get(c.Name)
	if !ok || cold || gen == c.Policy().Generation {
		return false
	}
	ctrl.Log.WithName("checkpoint").Info("The tenant's policy changed since its objects were last examined; every object of it is examined again",
		"tenant", c.Name, "examinedUnder", gen, "now", c.Policy().Generation)
	return true
}

// policyState is PolicyMarks as a checkpoint.Checkpointable (PolicyExtra).
type policyState struct{ st *State }

var _ checkpoint.Checkpointable = policyState{}

func (p policyState) Name() string { return PolicyExtra }

// Checkpoint returns the marks as they were when SnapshotQueues took the queues.
func (p policyState) Checkpoint(context.Context) ([]byte, error) {
	return json.Marshal(p.st.Marks.takeCaptured(p.st.keepTenantForCheckpoint))
}

func (p policyState) Restore(_ context.Context, data []byte) error {
	gens := map[string]string{}
	if err := json.Unmarshal(data, &gens); err != nil {
		return err
	}
	p.st.Marks.Restore(gens)
	return nil
}

// RestorePolicyFor takes tenant's generation from a hand-over checkpoint's PolicyExtra, if any.
func (st *State) RestorePolicyFor(cp *checkpoint.Checkpoint, tenantName string) {
	gens := map[string]string{}
	if b, ok := cp.Extras[PolicyExtra]; !ok || json.Unmarshal(b, &gens) != nil {
		return
	}
	if gen, ok := gens[tenantName]; ok {
		st.Marks.Restore(map[string]string{tenantName: gen})
	}
}

// PolicyExtraState returns the policy marks as the checkpoint's extra state PolicyExtra (tests
// save and restore it alone).
func (st *State) PolicyExtraState() checkpoint.Checkpointable { return policyState{st} }
