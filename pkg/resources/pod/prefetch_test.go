package pod

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// prefetchFixture is a tenant whose apiserver answers TokenRequests through answer, with
// cached Pods made by pods.
type prefetchFixture struct {
	c        *tenant.Cluster
	p        *TokenPrefetcher
	inFlight atomic.Int32
	maxIn    atomic.Int32
	calls    atomic.Int32
}

func newPrefetchFixture(t *testing.T, name string, answer func(ctx context.Context, uid types.UID) (string, error)) *prefetchFixture {
	t.Helper()
	f := &prefetchFixture{}
	fn := func(ctx context.Context, _ string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
		f.calls.Add(1)
		n := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for m := f.maxIn.Load(); n > m && !f.maxIn.CompareAndSwap(m, n); m = f.maxIn.Load() {
		}
		tok, err := answer(ctx, tr.Spec.BoundObjectRef.UID)
		if err != nil {
			return nil, err
		}
		out := tr.DeepCopy()
		out.Status.Token = tok
		out.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(time.Hour))
		return out, nil
	}
	f.c = &tenant.Cluster{Name: name, Client: tokenClient{fake.NewClientset(), fn}, Informers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	f.p = NewTokenPrefetcher(&resources.Env{SuperNodes: informers.NewSharedInformerFactory(fake.NewClientset(), 0),
		SuperInformers: informers.NewSharedInformerFactory(fake.NewClientset(), 0),
		SuperPublic:    informers.NewSharedInformerFactory(fake.NewClientset(), 0)})
	t.Cleanup(func() { f.p.Forget(f.c) })
	return f
}

// add caches a new unbound Pod named name (UID "uid-"+name, one token source, changed by
// mutate when not nil) as the tenant transform does (whole spec) and tells the prefetcher;
// bound caches it trimmed instead.
func (f *prefetchFixture) add(t *testing.T, name string, bound bool, mutate ...func(*corev1.Pod)) types.UID {
	t.Helper()
	p := tenantPod()
	p.Name, p.UID, p.Spec.NodeName = name, types.UID("uid-"+name), ""
	p.Spec.Volumes[0].Projected.Sources = p.Spec.Volumes[0].Projected.Sources[:1]
	p.Spec.PriorityClassName, p.Spec.Priority, p.Spec.PreemptionPolicy = "", nil, nil
	for _, m := range mutate {
		m(p)
	}
	mk := podcache.NewFull
	if bound {
		p.Spec.NodeName = "vnode-1"
		mk = podcache.New
	}
	cp, err := mk(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.Informers.Core().V1().Pods().Informer().GetIndexer().Add(cp); err != nil {
		t.Fatal(err)
	}
	f.p.Added(f.c, cp)
	return p.UID
}

// take is the Pod reconciler's Take of the round of the Pod that add made with UID uid.
func (f *prefetchFixture) take(ctx context.Context, uid types.UID) ([]string, time.Time, bool, error) {
	return f.p.Take(ctx, f.c.Name, "shop", strings.TrimPrefix(string(uid), "uid-"), uid)
}

// held returns how many rounds the tenant holds and how many Pods wait for one.
func (f *prefetchFixture) held() (rounds, pending int) {
	f.p.mu.Lock()
	defer f.p.mu.Unlock()
	if st := f.p.tenants[f.c.Name]; st != nil {
		return len(st.rounds), len(st.pending)
	}
	return 0, 0
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A new Pod's tokens are requested when it is added and handed to its reconcile once; a bound
// Pod (trimmed in the cache), a Pod being deleted and a deleted Pod's round are not.
func TestTokenPrefetcherHandsOverOnce(t *testing.T) {
	f := newPrefetchFixture(t, "prefetch-once", func(_ context.Context, uid types.UID) (string, error) { return "tok-" + string(uid), nil })
	taken, unused := metrics.TokenPrefetches(f.c.Name, prefetchTaken), metrics.TokenPrefetches(f.c.Name, prefetchUnused)
	ctx := context.Background()

	uid := f.add(t, "a", false)
	waitFor(t, "the round", func() bool { r, _ := f.held(); return r == 1 })
	tokens, refresh, ok, err := f.take(ctx, uid)
	if !ok || err != nil || len(tokens) != 1 || tokens[0] != "tok-uid-a" {
		t.Fatalf("Take = %v, %v, %v; want the prefetched token", tokens, ok, err)
	}
	if d := time.Until(refresh); d < 40*time.Minute || d > 50*time.Minute {
		t.Errorf("refresh in %v; want 80%% of the hour-long token's lifetime", d)
	}
	if _, _, ok, _ := f.take(ctx, uid); ok {
		t.Error("a round was handed over twice")
	}
	other := f.add(t, "b", false)
	waitFor(t, "the round of Pod b", func() bool { r, _ := f.held(); return r == 1 })
	if _, _, ok, _ := f.p.Take(ctx, f.c.Name, "shop", "not-b", other); ok {
		t.Error("the round of Pod b handed over to another Pod with its UID")
	}
	if _, _, ok, _ := f.take(ctx, other); !ok {
		t.Error("Pod b's own reconcile found no round")
	}
	if d := metrics.TokenPrefetches(f.c.Name, prefetchTaken) - taken; d != 2 {
		t.Errorf("taken rose by %v, want 2 (Pods a and b)", d)
	}

	f.calls.Store(0)
	boundUID := f.add(t, "bound", true)
	deleting := tenantPod()
	deleting.Name, deleting.UID, deleting.Spec.NodeName = "deleting", "uid-deleting", ""
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	cp, _ := podcache.NewFull(deleting)
	f.p.Added(f.c, cp)
	if r, pending := f.held(); r != 0 || pending != 0 {
		t.Errorf("%d rounds, %d Pods waiting after the Adds of a bound Pod and a Pod being deleted; want none", r, pending)
	}
	if _, _, ok, _ := f.take(ctx, boundUID); ok {
		t.Error("tokens prefetched for a bound Pod")
	}
	refused := f.add(t, "refused", false, func(p *corev1.Pod) { p.Spec.SchedulerName = "not-allowed" })
	manyTokens := f.add(t, "many-tokens", false, func(p *corev1.Pod) {
		for range 8 {
			p.Spec.Volumes[0].Projected.Sources = append(p.Spec.Volumes[0].Projected.Sources, p.Spec.Volumes[0].Projected.Sources[0])
		}
	})
	otherRuntime := f.add(t, "other-runtime", false, func(p *corev1.Pod) { rc := "gvisor"; p.Spec.RuntimeClassName = &rc })
	privatePriority := f.add(t, "private-priority", false, func(p *corev1.Pod) { p.Spec.PriorityClassName = "not-public" })
	waitFor(t, "the refused Pods' turns", func() bool { r, pending := f.held(); return r == 0 && pending == 0 })
	for _, uid := range []types.UID{refused, manyTokens, otherRuntime, privatePriority} {
		if _, _, ok, _ := f.take(ctx, uid); ok {
			t.Errorf("tokens prefetched for Pod %s, which the default policy refuses", uid)
		}
	}

	gone := f.add(t, "gone", false)
	waitFor(t, "the TokenRequest of Pod gone", func() bool { return f.calls.Load() == 1 })
	f.p.Deleted(f.c.Name, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "shop", UID: gone}})
	if _, _, ok, _ := f.take(ctx, gone); ok {
		t.Error("a deleted Pod's round was handed over")
	}
	if d := metrics.TokenPrefetches(f.c.Name, prefetchUnused) - unused; d != 1 {
		t.Errorf("unused rose by %v, want 1 (the deleted Pod's)", d)
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("%d TokenRequests; want 1 (Pod gone's)", n)
	}
}

// A tenant's apiserver that does not answer holds at most prefetchConcurrency requests and
// prefetchHeld rounds; the rest wait, in order, and each taken round lets the next start.
// Another tenant's rounds do not wait for it. Forget ends the requests in flight.
func TestTokenPrefetcherBoundsASlowTenant(t *testing.T) {
	release := make(chan struct{})
	var cancelled atomic.Int32
	slow := newPrefetchFixture(t, "prefetch-slow", func(ctx context.Context, uid types.UID) (string, error) {
		select {
		case <-release:
			return "tok-" + string(uid), nil
		case <-ctx.Done():
			cancelled.Add(1)
			return "", ctx.Err()
		}
	})
	var uids []types.UID
	for i := range prefetchHeld + 10 {
		uids = append(uids, slow.add(t, fmt.Sprintf("p%02d", i), false))
	}
	waitFor(t, "requests in flight", func() bool { return slow.inFlight.Load() == prefetchConcurrency })
	time.Sleep(20 * time.Millisecond)
	if n := slow.maxIn.Load(); n != prefetchConcurrency {
		t.Errorf("%d TokenRequests in flight at once; want %d", n, prefetchConcurrency)
	}

	other := newPrefetchFixture(t, "prefetch-other", func(_ context.Context, uid types.UID) (string, error) { return "tok-" + string(uid), nil })
	ouid := other.add(t, "o", false)
	waitFor(t, "the other tenant's round", func() bool { r, _ := other.held(); return r == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, ok, err := other.take(ctx, ouid); !ok || err != nil {
		t.Errorf("the other tenant's round: ok %v, %v", ok, err)
	}

	close(release)
	waitFor(t, "the held rounds", func() bool { r, _ := slow.held(); return r == prefetchHeld })
	time.Sleep(20 * time.Millisecond)
	if r, pending := slow.held(); r != prefetchHeld || pending != 10 {
		t.Errorf("%d rounds held, %d Pods waiting; want %d and 10", r, pending, prefetchHeld)
	}
	if _, _, ok, err := slow.take(ctx, uids[0]); !ok || err != nil {
		t.Fatalf("first Pod's round: ok %v, %v", ok, err)
	}
	waitFor(t, "the next Pod's round", func() bool { r, pending := slow.held(); return r == prefetchHeld && pending == 9 })
	if _, _, ok, _ := slow.take(ctx, uids[prefetchHeld]); !ok {
		t.Error("the Pod after the held ones got no round once one was taken")
	}

	blocked := newPrefetchFixture(t, "prefetch-forgotten", func(ctx context.Context, _ types.UID) (string, error) {
		<-ctx.Done()
		cancelled.Add(1)
		return "", ctx.Err()
	})
	blocked.add(t, "x", false)
	waitFor(t, "a request in flight", func() bool { return blocked.inFlight.Load() == 1 })
	before := cancelled.Load()
	blocked.p.Forget(blocked.c)
	waitFor(t, "the request to end", func() bool { return cancelled.Load() == before+1 })
}

// A Pod whose reconcile comes before its round started gets none later (no second
// TokenRequest for it), and a round whose TokenRequest failed is not handed over: the
// reconcile requests its own tokens.
func TestTokenPrefetcherNoRoundAfterItsReconcile(t *testing.T) {
	release := make(chan struct{})
	f := newPrefetchFixture(t, "prefetch-late", func(ctx context.Context, uid types.UID) (string, error) {
		if uid == "uid-fails" {
			return "", errors.New("serviceaccounts \"default\" not found")
		}
		<-release
		return "tok-" + string(uid), nil
	})
	failed := metrics.TokenPrefetches(f.c.Name, prefetchFailed)
	f.add(t, "a", false)
	f.add(t, "b", false)
	waitFor(t, "2 requests in flight", func() bool { return f.inFlight.Load() == prefetchConcurrency })
	late := f.add(t, "late", false)
	ctx := context.Background()
	if _, _, ok, _ := f.take(ctx, late); ok {
		t.Fatal("a round handed over for a Pod still waiting for its turn")
	}
	close(release)
	waitFor(t, "the two rounds", func() bool { r, pending := f.held(); return r == 2 && pending == 0 && f.inFlight.Load() == 0 })
	if n := f.calls.Load(); n != 2 {
		t.Errorf("%d TokenRequests; want 2 (none for the Pod reconciled before its turn)", n)
	}

	fails := f.add(t, "fails", false)
	waitFor(t, "the failed round", func() bool { return metrics.TokenPrefetches(f.c.Name, prefetchFailed)-failed == 1 })
	if _, _, ok, err := f.take(ctx, fails); ok || err != nil {
		t.Errorf("a failed round: ok %v, %v; want none handed over", ok, err)
	}
}

// A round older than prefetchTTL is not handed over: the reconcile requests fresh tokens.
func TestTokenPrefetcherDropsOldRounds(t *testing.T) {
	f := newPrefetchFixture(t, "prefetch-old", func(_ context.Context, uid types.UID) (string, error) { return "tok-" + string(uid), nil })
	var mu sync.Mutex
	now := time.Now()
	f.p.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	unused := metrics.TokenPrefetches(f.c.Name, prefetchUnused)
	uid := f.add(t, "late", false)
	waitFor(t, "the round", func() bool { r, _ := f.held(); return r == 1 })
	mu.Lock()
	now = now.Add(prefetchTTL + time.Second)
	mu.Unlock()
	if _, _, ok, _ := f.take(context.Background(), uid); ok {
		t.Error("a round older than prefetchTTL was handed over")
	}
	if d := metrics.TokenPrefetches(f.c.Name, prefetchUnused) - unused; d != 1 {
		t.Errorf("unused rose by %v, want 1", d)
	}
}

// A tenant apiserver that answers a TokenRequest with a token longer than maxTokenBytes gets
// an error, not a super Pod (or a round) holding it.
func TestRequestTokensRefusesHugeTokens(t *testing.T) {
	f := newPrefetchFixture(t, "prefetch-huge", func(context.Context, types.UID) (string, error) {
		return strings.Repeat("x", maxTokenBytes+1), nil
	})
	failed := metrics.TokenPrefetches(f.c.Name, prefetchFailed)
	uid := f.add(t, "huge", false)
	waitFor(t, "the failed round", func() bool { return metrics.TokenPrefetches(f.c.Name, prefetchFailed)-failed == 1 })
	if _, _, ok, _ := f.take(context.Background(), uid); ok {
		t.Error("a round with a huge token handed over")
	}
	p := tenantPod()
	srcs, _ := tokenSources(&p.Spec)
	if _, _, err := requestTokens(context.Background(), f.c, p, srcs); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("requestTokens = %v; want the refusal of the token", err)
	}
}

// A tenant's Pods in flight grow with its weight (its share of the workers), up to a bound.
func TestTokenPrefetcherConcurrencyFollowsWeight(t *testing.T) {
	for w, want := range map[int32]int{0: 2, 1: 2, 2: 4, 3: 6, 4: 8, 1000: prefetchMaxConcurrency} {
		if got := concurrencyFor(w); got != want {
			t.Errorf("weight %d: %d Pods in flight, want %d", w, got, want)
		}
	}
}

// When the slots shared by all tenants are held by one tenant's slow requests, another
// tenant's Pod gets no round and its reconcile does not wait: Take answers at once, and the
// reconcile requests its own tokens. A freed slot goes to the tenant with a Pod waiting.
func TestTokenPrefetcherSharedSlotsDoNotHoldOtherTenants(t *testing.T) {
	release := make(chan struct{})
	slow := newPrefetchFixture(t, "prefetch-slots-slow", func(ctx context.Context, uid types.UID) (string, error) {
		select {
		case <-release:
			return "tok-" + string(uid), nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	slow.p.sem = make(chan struct{}, prefetchConcurrency) // every slot for the slow tenant's Pods
	other := newPrefetchFixture(t, "prefetch-slots-other", func(_ context.Context, uid types.UID) (string, error) { return "tok-" + string(uid), nil })
	other.p = slow.p
	slow.add(t, "s1", false)
	slow.add(t, "s2", false)
	waitFor(t, "the slow tenant's requests", func() bool { return slow.inFlight.Load() == prefetchConcurrency })

	uid := other.add(t, "o1", false)
	if r, pending := other.held(); r != 0 || pending != 1 {
		t.Fatalf("other tenant: %d rounds, %d Pods waiting; want 0 and 1 while no slot is free", r, pending)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, ok, err := other.take(ctx, uid); ok || err != nil {
		t.Errorf("Take of a Pod without a round: ok %v, %v; want none at once", ok, err)
	}
	later := other.add(t, "o2", false)
	close(release)
	waitFor(t, "the other tenant's round", func() bool { r, pending := other.held(); return r == 1 && pending == 0 })
	if _, _, ok, err := other.take(context.Background(), later); !ok || err != nil {
		t.Errorf("the other tenant's Pod after a slot freed: ok %v, %v", ok, err)
	}
	if n := other.calls.Load(); n != 1 {
		t.Errorf("%d TokenRequests for the other tenant; want 1 (none for the Pod its reconcile took first)", n)
	}
}
