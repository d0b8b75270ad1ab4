package resume

import (
	"testing"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// TestPolicyMarksRoundTrip: the policy generations a checkpoint saves are what a resume
// compares; a restored generation stays in the next checkpoints until the tenant is examined
// again (a tenant slow to sync must not lose it); a restore never overwrites what this process
// marked; a checkpoint without them (written before PolicyExtra, or a hand-over checkpoint of
// such a version) gives none, so nothing is compared, as resumes did before.
func TestPolicyMarksRoundTrip(t *testing.T) {
	s := &State{}
	s.Marks.SetApplied("t1", "g1")
	s.Marks.SetApplied("t2", "g2")
	data, err := policyState{s}.Checkpoint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := &State{}
	r.Marks.SetApplied("t2", "g2-live") // examined in this process before the restore
	if err := (policyState{r}).Restore(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	if gen, ok := r.Marks.Get("t1"); !ok || gen != "g1" {
		t.Errorf("t1 restored %q %t, want g1", gen, ok)
	}
	if gen, _ := r.Marks.Get("t2"); gen != "g2-live" {
		t.Errorf("t2 = %q after the restore, want this process's g2-live", gen)
	}
	if _, ok := r.Marks.Get("t3"); ok {
		t.Error("t3, not in the checkpoint, has a generation")
	}
	// The next checkpoint, before t1 has synced again, still holds t1's generation.
	again, err := policyState{r}.Checkpoint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r2 := &State{}
	if err := (policyState{r2}).Restore(t.Context(), again); err != nil {
		t.Fatal(err)
	}
	if gen, ok := r2.Marks.Get("t1"); !ok || gen != "g1" {
		t.Errorf("t1 in the checkpoint after a resume (not synced yet): %q %t, want g1", gen, ok)
	}
	r.Marks.Forget("t1")
	if _, ok := r.Marks.Get("t1"); ok {
		t.Error("t1 has a generation after forget (its Tenant removed)")
	}

	h := &State{}
	h.RestorePolicyFor(&checkpoint.Checkpoint{Extras: map[string][]byte{PolicyExtra: data}}, "t2")
	if gen, ok := h.Marks.Get("t2"); !ok || gen != "g2" {
		t.Errorf("hand-over of t2 restored %q %t, want g2", gen, ok)
	}
	if _, ok := h.Marks.Get("t1"); ok {
		t.Error("the hand-over of t2 took t1's generation too")
	}
	h.RestorePolicyFor(&checkpoint.Checkpoint{}, "t1")
	if _, ok := h.Marks.Get("t1"); ok {
		t.Error("a checkpoint without PolicyExtra gave t1 a generation")
	}
}

// A checkpoint holds the policy generations as they were when its queues were taken: a
// PolicyChanged that marks its tenant after the queue snapshot (its enqueues not all in it)
// must not be saved as examined.
func TestPolicyMarksTakenWithTheQueues(t *testing.T) {
	s, err := New(testConfig(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	s.Marks.SetApplied("t1", "g1")
	if _, _, err := s.SnapshotQueues(); err != nil {
		t.Fatal(err)
	}
	s.Marks.SetApplied("t1", "g2") // PolicyChanged finished after the queues were taken
	data, err := policyState{s}.Checkpoint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r := &State{}
	if err := (policyState{r}).Restore(t.Context(), data); err != nil {
		t.Fatal(err)
	}
	if gen, _ := r.Marks.Get("t1"); gen != "g1" {
		t.Errorf("checkpointed generation %q, want g1 (the one in force when the queues were taken)", gen)
	}
}

// Every clusterSynced compares the tenant's policy with the one its objects were last
// examined under, not only the first after a resume: a Cluster replaced in this process (a
// kubeconfig rotation, a restart the tenant provoked) whose policy changed while it synced got
// no PolicyChanged (the registry skips unsynced Clusters).
func TestPolicyComparedAtEveryClusterSynced(t *testing.T) {
	s := &State{}
	cluster := func(maxObjects int32) *tenant.Cluster {
		c := &tenant.Cluster{Name: "t1"}
		c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{MaxObjects: &maxObjects}}))
		return c
	}
	first := cluster(100)
	if s.PolicyChangedSince(first, false) {
		t.Error("a tenant never examined (cold start) compared as changed: a cold sync enqueues everything anyway")
	}
	s.Marks.MarkApplied(first)
	if s.PolicyChangedSince(first, false) {
		t.Error("the same policy compared as changed")
	}
	replacement := cluster(10) // the policy changed while the replacement Cluster synced
	if !s.PolicyChangedSince(replacement, false) {
		t.Error("a replacement Cluster under a changed policy compared as unchanged: its unchanged objects keep what the new policy refuses")
	}
	if s.PolicyChangedSince(replacement, true) {
		t.Error("a tenant synced cold (everything enqueued) compared as changed: PolicyChanged would enqueue everything twice")
	}
}
