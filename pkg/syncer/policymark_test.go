package syncer

import (
	"testing"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
)

// TestPolicyMarksRoundTrip: the policy generations a checkpoint saves are what its resume
// compares, once per tenant; a checkpoint without them (written before policyExtra, or a
// hand-over checkpoint of such a version) compares nothing, as resumes did before.
func TestPolicyMarksRoundTrip(t *testing.T) {
	s := &Syncer{}
	s.policyMarks.setApplied("t1", "g1")
	s.policyMarks.setApplied("t2", "g2")
	data, err := policyState{s}.Checkpoint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := &Syncer{}
	if err := (policyState{r}).Restore(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	if gen, ok := r.policyMarks.takeResumed("t1"); !ok || gen != "g1" {
		t.Errorf("t1 resumed %q %t, want g1", gen, ok)
	}
	if gen, ok := r.policyMarks.takeResumed("t1"); ok {
		t.Errorf("t1 resumed twice (%q): a reconnect's ClusterSynced would examine every object again", gen)
	}
	if _, ok := r.policyMarks.takeResumed("t3"); ok {
		t.Error("t3, not in the checkpoint, has a resumed generation")
	}

	h := &Syncer{}
	h.restorePolicyFor(&checkpoint.Checkpoint{Extras: map[string][]byte{policyExtra: data}}, "t2")
	if gen, ok := h.policyMarks.takeResumed("t2"); !ok || gen != "g2" {
		t.Errorf("hand-over of t2 resumed %q %t, want g2", gen, ok)
	}
	if _, ok := h.policyMarks.takeResumed("t1"); ok {
		t.Error("the hand-over of t2 took t1's generation too")
	}
	h.restorePolicyFor(&checkpoint.Checkpoint{}, "t1")
	if _, ok := h.policyMarks.takeResumed("t1"); ok {
		t.Error("a checkpoint without policyExtra gave t1 a generation")
	}
}
