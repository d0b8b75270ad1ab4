package syncer

import (
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// A released tenant resumes from its hand-over checkpoint even when the releasing shard's
// periodic checkpoint is newer: that one may have been taken while the tenant was being
// removed there, with part of its super ack entries already forgotten, and every super object
// of a kind whose entries are missing would be reconciled again on the new shard.
func TestAdoptPrefersTheHandoverCheckpointOfAReleasedTenant(t *testing.T) {
	const uid = "uid-1"
	owner := &source.Owner{Tenant: "t1", TenantUID: uid, Namespace: "app", Name: "cm"}
	acked := map[string]source.ObjectVersion{"super-ns/cm": {UID: "s1", ResourceVersion: "10", Owner: owner}}
	tenantState := source.State{ID: tenantSourcePrefix + "t1/ConfigMap", HasObjects: true}
	stores := map[string]*memStore{"shard-b": {name: "shard-b"}, "handover-t1": {name: "handover-t1"}}
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1,
		Checkpoint: CheckpointOptions{Store: &memStore{},
			StoreOf:       func(shard string) (checkpoint.Store, error) { return stores[shard], nil },
			TenantStoreOf: func(tn string) (checkpoint.Store, error) { return stores["handover-"+tn], nil }}})
	if err != nil {
		t.Fatal(err)
	}
	s.SetRegistry(tenant.NewRegistry(t.Context(), s))
	write := func(st *memStore, at time.Time, super map[string]source.ObjectVersion) {
		t.Helper()
		cp := &checkpoint.Checkpoint{Format: checkpoint.Format, Schema: CheckpointSchema, Config: configDigest(s.opts), TakenAt: at,
			Sources: []source.State{{ID: superSourcePrefix + "/ConfigMap", Acked: super}, tenantState}}
		data, err := checkpoint.Encode(cp)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Save(t.Context(), data); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	write(stores["handover-t1"], now, acked)
	write(stores["shard-b"], now.Add(time.Second), map[string]source.ObjectVersion{}) // mid-removal: entries gone

	s.Adopt(t.Context(), "t1", uid, "shard-b", false)
	if !s.sources.Source(superSourcePrefix+"/ConfigMap").IsAcked("super-ns/cm", source.ObjectVersion{UID: "s1", ResourceVersion: "10"}) {
		t.Error("the released tenant's super ack entries were taken from the releasing shard's newer periodic checkpoint, not from its hand-over checkpoint")
	}

	// A tenant taken after its shard's Lease expired resumes from that shard's last periodic
	// checkpoint when it is newer than the hand-over checkpoint (written when it came there).
	stores["shard-c"] = &memStore{name: "shard-c"}
	newer := map[string]source.ObjectVersion{"super-ns/cm": {UID: "s1", ResourceVersion: "11", Owner: owner}}
	write(stores["shard-c"], now.Add(2*time.Second), newer)
	s.sources.Forget(tenantSourcePrefix + "t1/")
	s.Adopt(t.Context(), "t1", uid, "shard-c", true)
	if !s.sources.Source(superSourcePrefix+"/ConfigMap").IsAcked("super-ns/cm", source.ObjectVersion{UID: "s1", ResourceVersion: "11"}) {
		t.Error("a tenant of an expired shard was not resumed from that shard's newer periodic checkpoint")
	}
}
