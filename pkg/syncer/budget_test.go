package syncer

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
	"github.com/vcsyncer/syncer/pkg/resources"
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
	var items []queueItem
	if err := gob.NewDecoder(bytes.NewReader(cp.Queues)).Decode(&items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Req != regular {
		t.Errorf("checkpointed queue items %v, want only %v", items, regular)
	}
	// On resume, the left-out tenant is cold once: ClusterSynced enqueues all its objects.
	s.setColdTenants(cp.LeftOut)
	if !s.takeCold("greedy") || s.takeCold("greedy") || s.takeCold("regular") {
		t.Error("takeCold: want greedy cold once, regular never")
	}
}
