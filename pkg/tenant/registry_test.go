package tenant

import (
	"context"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// stopHooks records, for each ClusterStopped, whether the tenant was still registered.
type stopHooks struct {
	reg *Registry

	mu      sync.Mutex
	stopped []stopCall
}

type stopCall struct {
	uid        string
	registered bool
}

func (h *stopHooks) ClusterStarting(*Cluster) {}
func (h *stopHooks) ClusterSynced(*Cluster)   {}
func (h *stopHooks) PolicyChanged(*Cluster)   {}
func (h *stopHooks) ClusterStopped(c *Cluster) {
	_, ok := h.reg.Get(c.Name)
	h.mu.Lock()
	h.stopped = append(h.stopped, stopCall{c.UID, ok})
	h.mu.Unlock()
}

// TestRegistryPutNewUID: a Cluster for a re-created Tenant (same name, new UID) replaces the
// old one as a removal followed by an addition: the old Cluster's ClusterStopped sees the
// tenant unregistered, so the syncer drops all of the old Tenant's state (checkpoint sources,
// parked requests, ack maps) instead of handing it to the new one; a Cluster for the same
// Tenant (a rotated kubeconfig) keeps the tenant registered throughout.
func TestRegistryPutNewUID(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &stopHooks{}
	r := NewRegistry(ctx, h)
	h.reg = r
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	mk := func(uid, hash string) *Cluster {
		c, err := newCluster("t", uid, cfg, hash, 1, 0, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	r.put(mk("uid-1", "h1"))
	r.put(mk("uid-1", "h2")) // rotated kubeconfig
	r.put(mk("uid-2", "h2")) // re-created Tenant
	r.remove("t")
	h.mu.Lock()
	defer h.mu.Unlock()
	want := []stopCall{{"uid-1", true}, {"uid-1", false}, {"uid-2", false}}
	if len(h.stopped) != len(want) {
		t.Fatalf("ClusterStopped calls = %+v, want %+v", h.stopped, want)
	}
	for i := range want {
		if h.stopped[i] != want[i] {
			t.Errorf("ClusterStopped #%d = %+v, want %+v", i, h.stopped[i], want[i])
		}
	}
}
