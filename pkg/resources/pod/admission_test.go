package pod

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeAdmission admits while open, and records calls.
type fakeAdmission struct {
	open, counted           bool // counted: the window counts the Pod already (Admit takes no slot)
	admits, aborts, creates []string
}

func (a *fakeAdmission) Admit(tenant, namespace, name, superNamespace string) (ok, took bool) {
	a.admits = append(a.admits, superNamespace+"/"+name)
	return a.open, a.open && !a.counted
}

func (a *fakeAdmission) Created(superNamespace, name string) {
	a.creates = append(a.creates, superNamespace+"/"+name)
}

func (a *fakeAdmission) Abort(superNamespace, name string) {
	a.aborts = append(a.aborts, superNamespace+"/"+name)
}

// A Pod the admission window keeps waiting is not read from the tenant, gets no tokens and no
// super Pod, and the reconcile succeeds (the window runs it again); once admitted, it is created
// and its slot kept. A Pod admitted and then not created gives its slot back.
func TestPodWaitsForAdmission(t *testing.T) {
	ctx := context.Background()
	f := newPodBounds(t)
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web") // super namespace and bounds
	f.syncCaches(t)
	adm := &fakeAdmission{}
	f.env.PodAdmission = adm
	f.tenant.ClearActions()
	f.super.ClearActions()

	if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err != nil {
		t.Fatalf("reconcile of a waiting Pod = %v, want nil (it is run again when admitted)", err)
	}
	if len(adm.admits) != 1 {
		t.Fatalf("admission asked %d times, want 1", len(adm.admits))
	}
	if n := len(f.tenant.Actions()); n != 0 {
		t.Errorf("tenant calls for a waiting Pod: %v", f.tenant.Actions())
	}
	if n := len(f.super.Actions()); n != 0 {
		t.Errorf("super calls for a waiting Pod: %v", f.super.Actions())
	}

	adm.open = true
	if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err != nil {
		t.Fatalf("reconcile of an admitted Pod: %v", err)
	}
	if got := f.superCreates(); len(got) == 0 || got[len(got)-1] != "pods" {
		t.Fatalf("super creates = %v, want the Pod", got)
	}
	if len(adm.aborts) != 0 {
		t.Errorf("slot of a created Pod given back: %v", adm.aborts)
	}
	if len(adm.creates) != 1 {
		t.Errorf("creations reported: %v, want one", adm.creates)
	}

	// The super Pod exists now but is not cached: a second create fails (AlreadyExists) and the
	// second slot is given back.
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web") // its result is the conflict path's
	if len(adm.aborts) != 1 {
		t.Errorf("aborts after a failed create = %v, want one", adm.aborts)
	}

	// A Pod the window counted already (this run took no slot) gives nothing back when its
	// create fails: the slot is the live Pod's.
	adm.counted = true
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web")
	if len(adm.aborts) != 1 {
		t.Errorf("aborts after a failed create of a counted Pod = %v, want still one", adm.aborts)
	}
}

// A tenant that binds its own Pod (posts a Binding) between the cached read and the full read
// does not get the live spec.nodeName copied without the preset-node check: the reconcile
// waits for the cache.
func TestNodeNameSetAfterCachedReadIsNotCopied(t *testing.T) {
	ctx := context.Background()
	f := newPodBounds(t)
	_ = reconcileDownward(ctx, f.env, f.c, "app", "web")
	f.syncCaches(t)
	live, err := f.tenant.CoreV1().Pods("app").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Spec.NodeName = "super-system-node"
	if _, err := f.tenant.CoreV1().Pods("app").Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.super.ClearActions()
	if err := reconcileDownward(ctx, f.env, f.c, "app", "web"); err == nil {
		t.Fatal("reconcile succeeded although spec.nodeName changed after the cached read")
	}
	for _, got := range f.superCreates() {
		if got == "pods" {
			t.Fatal("super Pod created with a nodeName that skipped the preset-node check")
		}
	}
}
