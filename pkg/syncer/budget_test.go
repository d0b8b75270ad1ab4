package syncer

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// TestCheckpointBudgetIsPerTenant: a tenant with more unfinished requests than
// --checkpoint-max-items is left out of the checkpoint (its requests and sources; recorded in
// LeftOut) instead of stopping the checkpoints of every tenant.
func TestCheckpointBudgetIsPerTenant(t *testing.T) {
	st, err := store.NewFile(filepath.Join(t.TempDir(), "ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1,
		Checkpoint: CheckpointOptions{Store: st, MaxItems: 10}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		s.down.addHigh(resources.Request{Tenant: "greedy", Kind: resources.KindConfigMap, Namespace: "ns", Name: fmt.Sprint(i)})
	}
	regular := resources.Request{Tenant: "regular", Kind: resources.KindConfigMap, Namespace: "ns", Name: "cm"}
	s.down.addHigh(regular)
	if err := s.ckpt.Save(t.Context()); err != nil {
		t.Fatalf("Save = %v, want a checkpoint of the tenants within budget", err)
	}
	cp := s.ckpt.Load(t.Context())
	if cp == nil {
		t.Fatal("no checkpoint saved")
	}
	if diff := cmp.Diff([]string{"greedy"}, cp.LeftOut); diff != "" {
		t.Errorf("LeftOut (-want +got):\n%s", diff)
	}
	var items []resume.QueueItem
	if err := gob.NewDecoder(bytes.NewReader(cp.Queues)).Decode(&items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Req != regular {
		t.Errorf("checkpointed queue items %v, want only %v", items, regular)
	}
	// On resume, the left-out tenant is cold once: ClusterSynced enqueues all its objects.
	s.resume.SetColdTenants(cp.LeftOut)
	if !s.resume.TakeCold("greedy") || s.resume.TakeCold("greedy") || s.resume.TakeCold("regular") {
		t.Error("takeCold: want greedy cold once, regular never")
	}
}

// TestColdTenantEnqueuesEverything: on ClusterSynced, a tenant whose objects are all acked
// (unchanged since the checkpoint) gets nothing enqueued, unless the resumed checkpoint left
// it out: then every object is enqueued, as its queued requests were not saved.
func TestColdTenantEnqueuesEverything(t *testing.T) {
	for _, cold := range []bool{false, true} {
		t.Run(fmt.Sprint("cold=", cold), func(t *testing.T) {
			s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1})
			if err != nil {
				t.Fatal(err)
			}
			s.SetRegistry(tenant.NewRegistry(t.Context(), s))
			cs := fake.NewClientset()
			c := &tenant.Cluster{Name: "greedy", UID: "uid-greedy", Client: cs,
				Informers: s.tenantInformers("greedy", cs, nil), Recorder: record.NewFakeRecorder(100)}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "u1", ResourceVersion: "5"}}
			if err := s.resources[resources.KindConfigMap].TenantInformer(c).GetIndexer().Add(cm); err != nil {
				t.Fatal(err)
			}
			src := s.tenantSource(c, resources.KindConfigMap)
			if src == nil {
				t.Fatal("no resumable source for the tenant's ConfigMaps")
			}
			src.Ack(source.Key(cm), source.VersionOf(cm))
			if cold {
				s.resume.SetColdTenants([]string{"greedy"})
			}
			s.markReady() // the super caches have synced (Start)
			s.ClusterSynced(c)
			want := resources.Request{Tenant: "greedy", Kind: resources.KindConfigMap, Namespace: "ns", Name: "cm"}
			found := false
			for _, r := range s.down.Snapshot().Queued {
				found = found || r == want
			}
			if found != cold {
				t.Errorf("acked ConfigMap enqueued: %v, want %v", found, cold)
			}
		})
	}
}
