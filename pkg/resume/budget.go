package resume

import (
	"sort"

	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// budget implements checkpoint.Options.Budget: it counts each tenant's unfinished requests
// (queued, processing, delayed and parked, both pipelines; O(items)) and leaves out of the
// checkpoint being taken the tenants with more than maxItems.
func (st *State) budget(maxItems int) []string {
	out, names := st.OverBudget(maxItems)
	st.budgetMu.Lock()
	st.leftOut = out
	st.budgetMu.Unlock()
	return names
}

// OverBudget returns the tenants with more than maxItems unfinished requests (see budget), as
// a set and sorted, without changing what the checkpoint being taken leaves out.
func (st *State) OverBudget(maxItems int) (map[string]bool, []string) {
	counts := map[string]int{}
	down, up := st.cfg.Pipelines.Snapshots()
	for _, snap := range []trackingqueue.Snapshot[resources.Request]{down, up} {
		seen := map[resources.Request]bool{}
		for _, l := range [][]resources.Request{snap.Queued, snap.Processing, snap.Orphans} {
			for _, r := range l {
				if !seen[r] {
					seen[r] = true
					counts[r.Tenant]++
				}
			}
		}
		for r := range snap.Delayed {
			if !seen[r] {
				seen[r] = true
				counts[r.Tenant]++
			}
		}
	}
	st.parkMu.Lock()
	for name, p := range st.parked {
		counts[name] += len(p.down) + len(p.up)
	}
	st.parkMu.Unlock()
	if st.cfg.Pipelines.Window != nil {
		for _, r := range st.cfg.Pipelines.Window() {
			counts[r.Tenant]++ // waiting in the admission window
		}
	}
	out := map[string]bool{}
	var names []string
	for name, n := range counts {
		if n > maxItems {
			out[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return out, names
}

// isLeftOut reports whether the checkpoint being taken leaves tenant out.
func (st *State) isLeftOut(tenant string) bool {
	st.budgetMu.Lock()
	defer st.budgetMu.Unlock()
	return st.leftOut[tenant]
}

// SetColdTenants records the tenants the checkpoint resumed from left out.
func (st *State) SetColdTenants(names []string) {
	st.budgetMu.Lock()
	defer st.budgetMu.Unlock()
	st.coldTenants = map[string]bool{}
	for _, n := range names {
		st.coldTenants[n] = true
	}
}

// MarkCold records that tenant was left out of the checkpoint it was adopted from.
func (st *State) MarkCold(tenant string) {
	st.budgetMu.Lock()
	defer st.budgetMu.Unlock()
	if st.coldTenants == nil {
		st.coldTenants = map[string]bool{}
	}
	st.coldTenants[tenant] = true
}

// TakeCold reports whether tenant was left out of the checkpoint resumed from, and forgets it
// (its next ClusterSynced, after a reconnect, uses its ack maps again).
func (st *State) TakeCold(tenant string) bool {
	st.budgetMu.Lock()
	defer st.budgetMu.Unlock()
	cold := st.coldTenants[tenant]
	delete(st.coldTenants, tenant)
	return cold
}
