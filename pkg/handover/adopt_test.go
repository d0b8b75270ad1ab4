package handover

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/tenant"
	"github.com/vcsyncer/syncer/pkg/vnode"
)

// nopHooks are tenant.Hooks that do nothing (no tenant is registered in these tests).
type nopHooks struct{}

func (nopHooks) ClusterStarting(*tenant.Cluster) {}
func (nopHooks) ClusterSynced(*tenant.Cluster)   {}
func (nopHooks) ClusterStopped(*tenant.Cluster)  {}
func (nopHooks) PolicyChanged(*tenant.Cluster)   {}

// testSchema and testDigest are what the test checkpoints are written and read with.
const (
	testSchema = 1
	testDigest = "test"
)

// newTestShard returns a Shard over a resume.State with options o, empty pipelines and an
// empty tenant registry.
func newTestShard(t *testing.T, o resume.Options) (*Shard, *resume.State) {
	t.Helper()
	st, err := resume.New(resume.Config{Options: o, Schema: testSchema, Digest: testDigest,
		Sources: source.NewRegistry(), Super: fake.NewClientset(), VNodes: vnode.NewBindings(),
		Pipelines: resume.Pipelines{
			Snapshots: func() (down, up trackingqueue.Snapshot[resources.Request]) { return down, up },
			Size:      func() int { return 0 },
		},
		StartSuper: func(context.Context) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := tenant.NewRegistry(t.Context(), nopHooks{})
	st.SetRegistry(reg)
	h := New(nil, st)
	h.SetRegistry(reg)
	return h, st
}

// A released tenant resumes from its hand-over checkpoint even when the releasing shard's
// periodic checkpoint is newer: that one may have been taken while the tenant was being
// removed there, with part of its super ack entries already forgotten, and every super object
// of a kind whose entries are missing would be reconciled again on the new shard.
func TestAdoptPrefersTheHandoverCheckpointOfAReleasedTenant(t *testing.T) {
	const uid = "uid-1"
	owner := &source.Owner{Tenant: "t1", TenantUID: uid, Namespace: "app", Name: "cm"}
	acked := map[string]source.ObjectVersion{"super-ns/cm": {UID: "s1", ResourceVersion: "10", Owner: owner}}
	tenantState := source.State{ID: resume.TenantPrefix + "t1/ConfigMap", HasObjects: true}
	stores := map[string]*store.Memory{"shard-b": {Name: "shard-b"}, "handover-t1": {Name: "handover-t1"}}
	s, st := newTestShard(t, resume.Options{Store: &store.Memory{},
		StoreOf:       func(shard string) (checkpoint.Store, error) { return stores[shard], nil },
		TenantStoreOf: func(tn string) (checkpoint.Store, error) { return stores["handover-"+tn], nil }})
	write := func(st *store.Memory, at time.Time, super map[string]source.ObjectVersion) {
		t.Helper()
		cp := &checkpoint.Checkpoint{Format: checkpoint.Format, Schema: testSchema, Config: testDigest, TakenAt: at,
			Sources: []source.State{{ID: resume.SuperPrefix + "/ConfigMap", Acked: super}, tenantState}}
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
	if !st.Sources().Source(resume.SuperPrefix+"/ConfigMap").IsAcked("super-ns/cm", source.ObjectVersion{UID: "s1", ResourceVersion: "10"}) {
		t.Error("the released tenant's super ack entries were taken from the releasing shard's newer periodic checkpoint, not from its hand-over checkpoint")
	}

	// A tenant taken after its shard's Lease expired resumes from that shard's last periodic
	// checkpoint when it is newer than the hand-over checkpoint (written when it came there).
	stores["shard-c"] = &store.Memory{Name: "shard-c"}
	newer := map[string]source.ObjectVersion{"super-ns/cm": {UID: "s1", ResourceVersion: "11", Owner: owner}}
	write(stores["shard-c"], now.Add(2*time.Second), newer)
	st.Sources().Forget(resume.TenantPrefix + "t1/")
	s.Adopt(t.Context(), "t1", uid, "shard-c", true)
	if !st.Sources().Source(resume.SuperPrefix+"/ConfigMap").IsAcked("super-ns/cm", source.ObjectVersion{UID: "s1", ResourceVersion: "11"}) {
		t.Error("a tenant of an expired shard was not resumed from that shard's newer periodic checkpoint")
	}
}
