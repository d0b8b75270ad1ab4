package chaos

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
)

func TestSuperRestartRestartsTheSuperAPIServer(t *testing.T) {
	n := 0
	tg := &Target{RestartSuperAPIServer: func(context.Context) error { n++; return nil }}
	if _, err := Injectors[SuperRestart](t.Context(), tg, Fault{Kind: SuperRestart}); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("the super kube-apiserver restarted %d times, want 1", n)
	}
	tg.RestartSuperAPIServer = func(context.Context) error { return errors.New("not ready") }
	if _, err := Injectors[SuperRestart](t.Context(), tg, Fault{Kind: SuperRestart}); err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("a failed restart: %v, want its error", err)
	}
	if _, err := Injectors[SuperRestart](t.Context(), &Target{}, Fault{Kind: SuperRestart}); !errors.Is(err, errNoCandidate) {
		t.Fatalf("a restart without a launcher: %v, want %v", err, errNoCandidate)
	}
}

// superNS is the super namespace of tenant namespace tenantNS of the tenant with uid owner.
func superNS(tenantNS, owner string, deleting bool) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: conversion.SuperNamespace("tenant-1", owner, tenantNS), UID: types.UID("uid-" + tenantNS + "-" + owner[:2])}}
	conversion.Stamp(&ns.ObjectMeta, conversion.Owner{Tenant: "tenant-1", TenantUID: owner, Namespace: tenantNS, Name: tenantNS, UID: "t-" + tenantNS})
	if deleting {
		ns.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		ns.Finalizers = []string{"kubernetes"}
	}
	return ns
}

func TestSuperNamespaceDeletePicksAmongTheTenantsLoadNamespaces(t *testing.T) {
	const other = "99999999-9999-9999-9999-999999999999"
	objs := func() []runtime.Object {
		return []runtime.Object{
			superNS(NamespacePrefix+"b", tenantUID, false), superNS(NamespacePrefix+"a", tenantUID, false),
			superNS(NamespacePrefix+"churn-3", tenantUID, true), // terminating already
			superNS("kube-system", tenantUID, false),            // not the load's
			superNS(NamespacePrefix+"a", other, false),          // another tenant's
		}
	}
	for _, tc := range []struct {
		pick uint64
		want string // the tenant namespace whose super namespace goes
	}{{0, NamespacePrefix + "a"}, {3, NamespacePrefix + "b"}} {
		t.Run(fmt.Sprint(tc.pick), func(t *testing.T) {
			cs := fake.NewClientset(objs()...)
			detail, err := Injectors[SuperNamespaceDelete](t.Context(), &Target{Super: cs, TenantUIDs: []string{other, tenantUID}},
				Fault{Kind: SuperNamespaceDelete, Target: 3, Pick: tc.pick})
			if err != nil {
				t.Fatal(err)
			}
			l, _ := cs.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
			var left []string
			for _, ns := range l.Items {
				left = append(left, ns.Name)
			}
			if gone := conversion.SuperNamespace("tenant-1", tenantUID, tc.want); slices.Contains(left, gone) || len(left) != 4 {
				t.Fatalf("super namespaces left %v, want only %s deleted; %s", left, gone, detail)
			}
		})
	}
	cs := fake.NewClientset(superNS("kube-system", tenantUID, false), superNS(NamespacePrefix+"a", tenantUID, true))
	if _, err := Injectors[SuperNamespaceDelete](t.Context(), &Target{Super: cs, TenantUIDs: []string{tenantUID}}, Fault{}); !errors.Is(err, errNoCandidate) {
		t.Fatalf("no load namespace to delete: %v, want %v", err, errNoCandidate)
	}
}

// TestTenantRemoveReaddWaitsUntilGone: the Tenant is deleted, registered again only once it is
// gone (its finalizer, the syncer's cleanup of its super namespaces, removed meanwhile) and the
// hold later, and its new UID replaces the old one; the re-registration also runs when the
// soak's context ends during the hold.
func TestTenantRemoveReaddWaitsUntilGone(t *testing.T) {
	for _, cancelDuringHold := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled=%t", cancelDuringHold), func(t *testing.T) {
			tn := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "tenant-2", UID: "old-uid", Finalizers: []string{"tenancy.vcsyncer.io/cleanup"}}}
			cl := crfake.NewClientBuilder().WithScheme(app.Scheme()).WithObjects(tn).Build()
			var mu sync.Mutex
			var finalizerRemoved, addedAt time.Time
			var addedWhileThere bool
			tg := &Target{Tenancy: cl, TenantNames: []string{"tenant-1", "tenant-2"}, TenantUIDs: []string{"a", "old-uid"},
				AddTenant: func(ctx context.Context, i int) (string, error) {
					if i != 1 {
						return "", fmt.Errorf("registered tenant %d, want 1", i)
					}
					mu.Lock()
					defer mu.Unlock()
					addedAt = time.Now()
					addedWhileThere = !apierrors.IsNotFound(cl.Get(ctx, client.ObjectKey{Name: "tenant-2"}, &tenancyv1alpha1.Tenant{}))
					return "new-uid", nil
				}}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			// The syncer's finalizer: removed once the Tenant is terminating.
			go func() {
				_ = pollUntil(t.Context(), func() bool {
					cur := &tenancyv1alpha1.Tenant{}
					if cl.Get(t.Context(), client.ObjectKey{Name: "tenant-2"}, cur) != nil || cur.DeletionTimestamp == nil {
						return false
					}
					cur.Finalizers = nil
					mu.Lock()
					finalizerRemoved = time.Now()
					mu.Unlock()
					return cl.Update(t.Context(), cur) == nil
				})
				if cancelDuringHold {
					cancel()
				}
			}()
			hold := 300 * time.Millisecond
			detail, err := Injectors[TenantRemoveReadd](ctx, tg, Fault{Kind: TenantRemoveReadd, Target: 3, HoldMillis: hold.Milliseconds()})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if addedAt.IsZero() || addedWhileThere {
				t.Fatalf("registered again: %t, while the old Tenant was still there: %t; %s", !addedAt.IsZero(), addedWhileThere, detail)
			}
			if d := addedAt.Sub(finalizerRemoved); !cancelDuringHold && d < hold {
				t.Errorf("registered again %s after the old Tenant was gone, want the hold %s", d, hold)
			}
			if tg.TenantUIDs[1] != "new-uid" || tg.TenantUIDs[0] != "a" {
				t.Errorf("TenantUIDs %v, want [a new-uid]", tg.TenantUIDs)
			}
		})
	}
	if _, err := Injectors[TenantRemoveReadd](t.Context(), &Target{TenantNames: []string{"x"}}, Fault{}); !errors.Is(err, errNoCandidate) {
		t.Fatalf("without a Tenant client and AddTenant: %v, want %v", err, errNoCandidate)
	}
}

// pollUntil calls cond every 10 ms until it holds or ctx ends.
func pollUntil(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// spare returns a replica (a sleep process) that is not started.
func spare(t *testing.T, id string) *Replica {
	t.Helper()
	bin, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	r := &Replica{ID: id, bin: bin, args: []string{"300"}, Log: filepath.Join(t.TempDir(), "log")}
	t.Cleanup(func() { r.Signal(syscall.SIGKILL) })
	return r
}

// TestSyncerScaleOneThreeTwo: two replicas and a spare go to 1 (the target kept), 3 and 2
// running, then back to the two replicas running and the spare stopped; the kept replica (not
// the one removed at 2 here: pick 2 removes the spare) is never stopped and no stop counts as a
// crash.
func TestSyncerScaleOneThreeTwo(t *testing.T) {
	r0, r1, r2 := spare(t, "shard-0"), spare(t, "shard-1"), spare(t, "shard-2")
	for _, r := range []*Replica{r0, r1} {
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
	}
	kept := r1.PID()
	tg := &Target{Replicas: []*Replica{r0, r1}, Spares: []*Replica{r2}}
	running := func() int {
		n := 0
		for _, r := range []*Replica{r0, r1, r2} {
			if r.PID() != 0 {
				n++
			}
		}
		return n
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var counts []int // the running counts seen, consecutive repeats collapsed
	wg.Go(func() {
		for {
			if n := running(); len(counts) == 0 || counts[len(counts)-1] != n {
				counts = append(counts, n)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	detail, err := Injectors[SyncerScale](t.Context(), tg, Fault{Kind: SyncerScale, Target: 1, Pick: 2, HoldMillis: 300})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !containsInOrder(counts, []int{1, 3, 2}) {
		t.Errorf("running counts %v, want 1, 3, 2 in that order; %s", counts, detail)
	}
	if r0.PID() == 0 || r1.PID() != kept || r2.PID() != 0 {
		t.Errorf("after the fault: shard-0 pid %d, shard-1 pid %d (kept %d), spare pid %d; want the replicas running, the kept one the same process, the spare stopped; %s",
			r0.PID(), r1.PID(), kept, r2.PID(), detail)
	}
	for _, r := range []*Replica{r0, r1, r2} {
		if c := r.Crashes(); len(c) != 0 {
			t.Errorf("a scale's stop counted as a crash: %v", c)
		}
	}
	if _, err := Injectors[SyncerScale](t.Context(), &Target{Replicas: []*Replica{r0}}, Fault{Kind: SyncerScale}); !errors.Is(err, errNoCandidate) {
		t.Fatalf("scaling one unsharded replica without spares: %v, want %v", err, errNoCandidate)
	}
}

// containsInOrder reports whether want is a subsequence of got.
func containsInOrder(got, want []int) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
