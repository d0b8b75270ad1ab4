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
// Generation, a hash of the resolved spec) whose examination of every object is enqueued:
// recorded at the end of clusterSynced and PolicyChanged, saved in every checkpoint. A resume
// only enqueues what changed since the checkpoint's acks, and a policy set before the
// tenant's Cluster starts is no PolicyChanged, so a policy changed while the syncer was down
// is found by comparing the tenant's generation with the checkpoint's (resumedPolicyChanged).
type policyMarks struct {
	mu sync.Mutex
	// applied is what the next checkpoint saves; resumed what the checkpoint resumed from
	// held, taken (and forgotten) by the tenant's first clusterSynced.
	applied, resumed map[string]string
}

// markApplied records that every object of c is enqueued under its current policy.
func (m *policyMarks) markApplied(c *tenant.Cluster) { m.setApplied(c.Name, c.Policy().Generation) }

func (m *policyMarks) setApplied(tenantName, gen string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.applied == nil {
		m.applied = map[string]string{}
	}
	m.applied[tenantName] = gen
}

// setResumed records the generations of a checkpoint's policyExtra, for the tenants it holds.
func (m *policyMarks) setResumed(gens map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.resumed == nil {
		m.resumed = map[string]string{}
	}
	for name, gen := range gens {
		m.resumed[name] = gen
	}
}

// takeResumed returns (and forgets) the generation the resumed checkpoint holds for tenant;
// ok is false when it holds none (a cold start, or a checkpoint written before policyExtra).
func (m *policyMarks) takeResumed(tenantName string) (gen string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gen, ok = m.resumed[tenantName]
	delete(m.resumed, tenantName)
	return gen, ok
}

// snapshot returns the applied generations of the tenants keep accepts.
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

// resumedPolicyChanged reports whether c's effective policy differs from the one the
// checkpoint it resumed from had examined its objects under (false when the checkpoint held
// none for it). Call it once per clusterSynced.
func (s *Syncer) resumedPolicyChanged(c *tenant.Cluster) bool {
	gen, ok := s.policyMarks.takeResumed(c.Name)
	if !ok || gen == c.Policy().Generation {
		return false
	}
	ctrl.Log.WithName("checkpoint").Info("The tenant's policy changed since the checkpoint; every object of it is examined again",
		"tenant", c.Name, "checkpointed", gen, "now", c.Policy().Generation)
	return true
}

// policyState is policyMarks as a checkpoint.Checkpointable (policyExtra).
type policyState struct{ s *Syncer }

var _ checkpoint.Checkpointable = policyState{}

func (p policyState) Name() string { return policyExtra }

func (p policyState) Checkpoint(context.Context) ([]byte, error) {
	return json.Marshal(p.s.policyMarks.snapshot(func(t string) bool {
		return (p.s.keepTenantState == nil || p.s.keepTenantState(t)) && !p.s.isLeftOut(t)
	}))
}

func (p policyState) Restore(_ context.Context, data []byte) error {
	gens := map[string]string{}
	if err := json.Unmarshal(data, &gens); err != nil {
		return err
	}
	p.s.policyMarks.setResumed(gens)
	return nil
}

// restorePolicyFor takes tenant's generation from a hand-over checkpoint's policyExtra, if any.
func (s *Syncer) restorePolicyFor(cp *checkpoint.Checkpoint, tenantName string) {
	gens := map[string]string{}
	if b, ok := cp.Extras[policyExtra]; !ok || json.Unmarshal(b, &gens) != nil {
		return
	}
	if gen, ok := gens[tenantName]; ok {
		s.policyMarks.setResumed(map[string]string{tenantName: gen})
	}
}
