package handover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/resume"
)

// Drain returns only once the tenant's running reconciles have ended (none of another tenant
// holds it), and with an error when they still run when its context ends.
func TestDrainWaitsForRunningReconciles(t *testing.T) {
	h, _ := newTestShard(t, resume.Options{})
	h.Begin("t1")
	h.Begin("t2")
	done := make(chan error, 1)
	go func() { done <- h.Drain(t.Context(), "t1", false) }()
	select {
	case err := <-done:
		t.Fatalf("Drain returned (%v) while a reconcile of the tenant ran", err)
	case <-time.After(100 * time.Millisecond):
	}
	h.End("t1")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Drain: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Drain still waits after the tenant's last reconcile ended (another tenant's still runs)")
	}

	ctx, cancel := context.WithCancel(t.Context())
	go func() { done <- h.Drain(ctx, "t2", false) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Drain with its context cancelled = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Drain ignores its context")
	}
}

// Without a fence nothing is fenced; with one, a registered tenant is fenced unless claimed and
// owned (no tenant is registered here: nothing to write for, so nothing is fenced).
func TestNotFencedWithoutSharding(t *testing.T) {
	h, _ := newTestShard(t, resume.Options{})
	if h.Fenced("t1") {
		t.Error("fenced without sharding")
	}
	h.fence = ownsNone{}
	if h.Fenced("t1") {
		t.Error("an unregistered tenant is fenced: its requests would wait for ever instead of being dropped")
	}
}

type ownsNone struct{}

func (ownsNone) Owns(string) bool { return false }
