package admission

import (
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func res(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

type wakes struct {
	mu sync.Mutex
	l  []string
}

func (w *wakes) wake(s string) { w.mu.Lock(); w.l = append(w.l, s); w.mu.Unlock() }
func (w *wakes) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.l
	w.l = nil
	return out
}

func qty(l corev1.ResourceList, k string) string {
	q := l[corev1.ResourceName(k)]
	return q.String()
}

// TestBudgetCountsTenantWideAndParks: the budget counts every namespace of a tenant together;
// a Pod over it is parked (not retried) and woken once room appears; another tenant is apart.
func TestBudgetCountsTenantWideAndParks(t *testing.T) {
	w := &wakes{}
	b := NewBudget(BudgetOptions[string]{Wake: w.wake})
	hard := res("pods", "3", "requests.cpu", "2")
	one := res("pods", "1", "requests.cpu", "500m")
	for _, key := range []string{"ns1/a", "ns1/b", "ns2/c"} {
		ok, over, err := b.Reserve("t1", key, key, one, hard)
		if !ok || err != nil || len(over) > 0 {
			t.Fatalf("Reserve(%s) = %v %v %v, want admitted", key, ok, over, err)
		}
	}
	// Another tenant's budget is its own.
	if ok, _, _ := b.Reserve("t2", "x", "ns9/x", one, hard); !ok {
		t.Fatal("tenant t2 refused: budgets are not per tenant")
	}
	ok, over, err := b.Reserve("t1", "ns2/d", "ns2/d", one, hard)
	if ok || err != nil || len(over) != 1 || over[0].Name != "pods" || over[0].Used.String() != "3" || over[0].Hard.String() != "3" || over[0].Requested.String() != "1" {
		t.Fatalf("Reserve(ns2/d) = %v %+v %v, want refused on pods (used 3, limited 3)", ok, over, err)
	}
	if n := b.Waiting("t1"); n != 1 {
		t.Fatalf("Waiting = %d, want 1", n)
	}
	// Asking again (the Pod's own status write re-enqueues it) parks it once.
	_, _, _ = b.Reserve("t1", "ns2/d", "ns2/d", one, hard)
	if n := b.Waiting("t1"); n != 1 {
		t.Fatalf("Waiting = %d after a second refusal, want 1", n)
	}
	// The super Pods are observed (charges from their annotations) and replace reservations.
	for _, key := range []string{"ns1/a", "ns1/b", "ns2/c"} {
		b.Created("t1", key)
		b.Observe("t1", key, one)
	}
	if got := qty(b.Used("t1"), "pods"); got != "3" {
		t.Fatalf("used pods = %s after observing the reserved Pods, want 3 (not double counted)", got)
	}
	if got := w.take(); len(got) != 0 {
		t.Fatalf("woken %v while nothing left", got)
	}
	// A Pod of another namespace ends: the parked Pod is woken, once.
	b.Observe("t1", "ns1/a", nil)
	if got := w.take(); len(got) != 1 || got[0] != "ns2/d" {
		t.Fatalf("woken %v, want [ns2/d]", got)
	}
	if n := b.Waiting("t1"); n != 0 {
		t.Fatalf("Waiting = %d after the wake, want 0", n)
	}
	if ok, _, _ := b.Reserve("t1", "ns2/d", "ns2/d", one, hard); !ok {
		t.Fatal("woken Pod refused")
	}
	// Its create fails: the reservation is returned.
	b.Release("t1", "ns2/d")
	if got := qty(b.Used("t1"), "pods"); got != "2" {
		t.Fatalf("used pods = %s after the release, want 2", got)
	}
}

// TestBudgetWakesOnlyWhatFits: woken Pods are those the room fits, first come first.
func TestBudgetWakesOnlyWhatFits(t *testing.T) {
	w := &wakes{}
	b := NewBudget(BudgetOptions[string]{Wake: w.wake})
	hard := res("requests.cpu", "4")
	_, _, _ = b.Reserve("t", "a", "a", res("requests.cpu", "3"), hard)
	b.Observe("t", "a", res("requests.cpu", "3"))
	_, _, _ = b.Reserve("t", "big", "big", res("requests.cpu", "4"), hard)
	_, _, _ = b.Reserve("t", "s1", "s1", res("requests.cpu", "2"), hard)
	_, _, _ = b.Reserve("t", "s2", "s2", res("requests.cpu", "2"), hard)
	if n := b.Waiting("t"); n != 3 {
		t.Fatalf("Waiting = %d, want 3", n)
	}
	b.Observe("t", "a", res("requests.cpu", "1")) // a charge that went down
	if got := w.take(); len(got) != 1 || got[0] != "s1" {
		t.Fatalf("woken %v, want [s1] (3 cpu free: big does not fit, s2 not after s1)", got)
	}
}

// TestBudgetRaceLastRoom: two workers asking at once for the last room: one gets it.
func TestBudgetRaceLastRoom(t *testing.T) {
	b := NewBudget(BudgetOptions[string]{Wake: func(string) {}})
	hard := res("pods", "1")
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for _, key := range []string{"a", "b", "c", "d"} {
		wg.Go(func() {
			if ok, _, _ := b.Reserve("t", key, key, res("pods", "1"), hard); ok {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if admitted != 1 {
		t.Fatalf("%d Pods admitted for the last room, want 1", admitted)
	}
}

// TestBudgetNotSyncedAndExpiry: nothing is admitted before the super cache is observed (a
// restart counts from the cache), and a created reservation the informer never delivers
// expires.
func TestBudgetNotSyncedAndExpiry(t *testing.T) {
	synced := false
	now := time.Unix(1000, 0)
	b := NewBudget(BudgetOptions[string]{Wake: func(string) {}, Synced: func() bool { return synced }, Now: func() time.Time { return now }})
	hard := res("pods", "1")
	if _, _, err := b.Reserve("t", "a", "a", res("pods", "1"), hard); !errors.Is(err, ErrBudgetNotSynced) {
		t.Fatalf("Reserve before sync: err %v, want ErrBudgetNotSynced", err)
	}
	// The super cache, as a restarted syncer lists it, holds one Pod of the tenant.
	b.Observe("t", "old", res("pods", "1"))
	synced = true
	if ok, _, _ := b.Reserve("t", "a", "a", res("pods", "1"), hard); ok {
		t.Fatal("admitted over a budget the super cache fills")
	}
	b.Observe("t", "old", nil)
	if ok, _, _ := b.Reserve("t", "a", "a", res("pods", "1"), hard); !ok {
		t.Fatal("refused after the old Pod left")
	}
	b.Created("t", "a")
	b.Observe("t", "other-generation-of-a", nil) // an unrelated deletion does not touch it
	now = now.Add(DefaultReservationTTL + time.Second)
	if ok, _, _ := b.Reserve("t", "b", "b", res("pods", "1"), hard); !ok {
		t.Fatal("a created reservation never observed did not expire")
	}
}

// TestBudgetUpdateThatCostsMore: a super object being updated to cost more (a claim resized)
// reserves the new charge in place of its observed one; a failed update gives the observed
// charge back (Release), a done one is replaced by what the informer sees (Observe), and an
// object deleted meanwhile leaves nothing to give back.
func TestBudgetUpdateThatCostsMore(t *testing.T) {
	w := &wakes{}
	b := NewBudget(BudgetOptions[string]{Wake: w.wake})
	hard := res("requests.storage", "3Gi")
	b.Observe("t1", "PVC/ns1/a", res("requests.storage", "1Gi"))
	b.Observe("t1", "PVC/ns2/b", res("requests.storage", "1Gi"))
	// a grows to 3Gi: 3Gi + 1Gi of b is over.
	if ok, over, _ := b.Reserve("t1", "a", "PVC/ns1/a", res("requests.storage", "3Gi"), hard); ok || len(over) != 1 || over[0].Used.String() != "1Gi" {
		t.Fatalf("Reserve(a, 3Gi) = %v %+v, want refused with used 1Gi (b's; a's own 1Gi replaced)", ok, over)
	}
	if got := qty(b.Used("t1"), "requests.storage"); got != "2Gi" {
		t.Fatalf("used %s after a refused update, want 2Gi (a keeps its observed 1Gi)", got)
	}
	b.Leave("t1", "PVC/ns1/a")
	// a grows to 2Gi: fits; its update fails; 1Gi again.
	if ok, _, _ := b.Reserve("t1", "a", "PVC/ns1/a", res("requests.storage", "2Gi"), hard); !ok {
		t.Fatal("Reserve(a, 2Gi) refused")
	}
	if got := qty(b.Used("t1"), "requests.storage"); got != "3Gi" {
		t.Fatalf("used %s while a's update is under way, want 3Gi", got)
	}
	b.Release("t1", "PVC/ns1/a")
	if got := qty(b.Used("t1"), "requests.storage"); got != "2Gi" {
		t.Fatalf("used %s after a's update failed, want 2Gi (a's observed 1Gi counts again)", got)
	}
	// Again, and this time it is done: the informer's 2Gi replaces the reservation.
	if ok, _, _ := b.Reserve("t1", "a", "PVC/ns1/a", res("requests.storage", "2Gi"), hard); !ok {
		t.Fatal("Reserve(a, 2Gi) refused")
	}
	b.Created("t1", "PVC/ns1/a")
	b.Observe("t1", "PVC/ns1/a", res("requests.storage", "2Gi"))
	b.Release("t1", "PVC/ns1/a") // a no-op once observed
	if got := qty(b.Used("t1"), "requests.storage"); got != "3Gi" {
		t.Fatalf("used %s after a's update, want 3Gi", got)
	}
	// b grows while it is deleted: its update fails, nothing is given back.
	b.Observe("t1", "PVC/ns2/b", res("requests.storage", "500Mi"))
	if ok, _, _ := b.Reserve("t1", "b", "PVC/ns2/b", res("requests.storage", "1Gi"), hard); !ok {
		t.Fatal("Reserve(b, 1Gi) refused")
	}
	b.Observe("t1", "PVC/ns2/b", nil)
	b.Release("t1", "PVC/ns2/b")
	if got := qty(b.Used("t1"), "requests.storage"); got != "2Gi" {
		t.Fatalf("used %s after b was deleted during its update, want 2Gi (a's alone)", got)
	}
}

// Fits answers as Reserve would, for a new key and for one counted already, and neither
// reserves nor parks.
func TestBudgetFitsReservesNothing(t *testing.T) {
	b := NewBudget(BudgetOptions[string]{Wake: (&wakes{}).wake})
	hard := res("pods", "2")
	one := res("pods", "1")
	if !b.Fits("t1", "ns/a", one, hard) {
		t.Fatal("an empty budget has no room for one Pod")
	}
	for _, key := range []string{"ns/a", "ns/b"} {
		if ok, _, _ := b.Reserve("t1", key, key, one, hard); !ok {
			t.Fatalf("Reserve(%s) refused", key)
		}
	}
	if b.Fits("t1", "ns/c", one, hard) {
		t.Error("Fits a third Pod in a budget of 2")
	}
	if !b.Fits("t1", "ns/a", one, hard) {
		t.Error("a Pod counted already does not fit in its own place")
	}
	if n := b.Waiting("t1"); n != 0 {
		t.Errorf("Waiting = %d after Fits, want 0 (Fits parks nothing)", n)
	}
	if got := qty(b.Used("t1"), "pods"); got != "2" {
		t.Errorf("used pods %s after Fits, want 2 (Fits reserves nothing)", got)
	}
	nb := NewBudget(BudgetOptions[string]{Wake: (&wakes{}).wake, Synced: func() bool { return false }})
	if nb.Fits("t1", "ns/a", one, hard) {
		t.Error("Fits before the super cache was observed")
	}
}

// TestBudgetStoppedKeepsCounts: a tenant whose syncing stops (paused, kubeconfig unusable)
// keeps its super Pods' counts, so once it syncs again it cannot start another budget's worth
// beside them; its parked items go, and its entry goes once it counts nothing.
func TestBudgetStoppedKeepsCounts(t *testing.T) {
	w := &wakes{}
	b := NewBudget(BudgetOptions[string]{Wake: w.wake})
	hard := res("pods", "2")
	b.Observe("t", "Pod/ns/a", res("pods", "1"))
	b.Observe("t", "Pod/ns/b", res("pods", "1"))
	if ok, _, _ := b.Reserve("t", "c", "Pod/ns/c", res("pods", "1"), hard); ok {
		t.Fatal("c fits in a full budget")
	}
	b.Stopped("t")
	if got := qty(b.Used("t"), "pods"); got != "2" {
		t.Errorf("pods used after the tenant stopped = %s, want 2 (its super Pods still run)", got)
	}
	if n := b.Waiting("t"); n != 0 {
		t.Errorf("%d parked items after the tenant stopped, want 0", n)
	}
	if ok, _, _ := b.Reserve("t", "d", "Pod/ns/d", res("pods", "1"), hard); ok {
		t.Error("d fits after the tenant stopped and started again: the stop forgot the running Pods")
	}
	b.Stopped("t")
	b.Observe("t", "Pod/ns/a", nil)
	b.Observe("t", "Pod/ns/b", nil)
	b.mu.Lock()
	_, kept := b.tenants["t"]
	b.mu.Unlock()
	if kept {
		t.Error("the tenant's entry is kept though it counts nothing and nothing waits")
	}
	if got := w.take(); len(got) != 0 {
		t.Errorf("woken %v: the parked items went with the stop", got)
	}
}

// TestBudgetRetryKeepsAWrittenReservation: a create whose outcome was unknown leaves a
// written reservation (Created); the object's retry reserves the key again and finds the
// object there already (AlreadyExists: Release). The first write's reservation counts again,
// so a parked Pod is not woken into room the maybe-written object holds, until it expires.
func TestBudgetRetryKeepsAWrittenReservation(t *testing.T) {
	now := time.Unix(1000, 0)
	var w wakes
	b := NewBudget(BudgetOptions[string]{Wake: w.wake, Now: func() time.Time { return now },
		AfterFunc: func(time.Duration, func()) {}})
	hard := res("pods", "1")
	if ok, _, _ := b.Reserve("t", "a", "a", res("pods", "1"), hard); !ok {
		t.Fatal("a refused")
	}
	b.Created("t", "a") // the create timed out: its outcome is unknown
	if ok, _, _ := b.Reserve("t", "b", "b", res("pods", "1"), hard); ok {
		t.Fatal("b admitted beside a's written reservation")
	}
	now = now.Add(time.Second)
	if ok, _, _ := b.Reserve("t", "a", "a", res("pods", "1"), hard); !ok { // a's retry
		t.Fatal("a's retry refused")
	}
	b.Release("t", "a") // AlreadyExists: the first create did write it
	if got := qty(b.Used("t"), "pods"); got != "1" {
		t.Fatalf("used pods %s after the retry's release, want 1 (the first write's reservation)", got)
	}
	if woken := w.take(); len(woken) != 0 {
		t.Fatalf("woken %v into room a's object holds", woken)
	}
	now = now.Add(DefaultReservationTTL)
	if ok, _, _ := b.Reserve("t", "b", "b", res("pods", "1"), hard); !ok {
		t.Fatal("the written reservation never observed did not expire")
	}
}

// TestBudgetExpiryWakesParked: a written reservation that nothing replaces ends after the
// ReservationTTL by itself (a scheduled expiry, not the next Reserve), waking the Pods parked
// behind it, and a tenant left with nothing is dropped.
func TestBudgetExpiryWakesParked(t *testing.T) {
	now := time.Unix(1000, 0)
	var w wakes
	var scheduled []func()
	var delays []time.Duration
	b := NewBudget(BudgetOptions[string]{Wake: w.wake, Now: func() time.Time { return now },
		AfterFunc: func(d time.Duration, f func()) { delays, scheduled = append(delays, d), append(scheduled, f) }})
	hard := res("pods", "1")
	if ok, _, _ := b.Reserve("t", "a", "a", res("pods", "1"), hard); !ok {
		t.Fatal("a refused")
	}
	b.Created("t", "a")
	if ok, _, _ := b.Reserve("t", "b", "b", res("pods", "1"), hard); ok {
		t.Fatal("b admitted beside a's written reservation")
	}
	if len(scheduled) != 1 || delays[0] <= DefaultReservationTTL {
		t.Fatalf("expiries scheduled %v, want one after the TTL", delays)
	}
	now = now.Add(DefaultReservationTTL / 2)
	scheduled[0]() // early: nothing expires; the next one is scheduled for a's end
	if woken := w.take(); len(woken) != 0 {
		t.Fatalf("woken %v before a's reservation ended", woken)
	}
	if len(scheduled) != 2 || delays[1] > DefaultReservationTTL/2+time.Second {
		t.Fatalf("expiries scheduled %v, want a second one at a's end", delays)
	}
	now = now.Add(DefaultReservationTTL/2 + time.Second)
	scheduled[1]()
	if woken := w.take(); len(woken) != 1 || woken[0] != "b" {
		t.Fatalf("woken %v after a's reservation ended, want [b]", woken)
	}
	b.Leave("t", "b")
	b.mu.Lock()
	_, kept := b.tenants["t"]
	b.mu.Unlock()
	if kept {
		t.Error("a tenant that counts nothing and has nothing parked was kept")
	}
}

// TestBudgetExpiryOfAKeptWrittenReservation: a written reservation kept behind a retry's
// reservation that is not written yet expires at its time; the expiry then has nothing left to
// wait for and schedules no other (it does not fire again at once for the expired one).
func TestBudgetExpiryOfAKeptWrittenReservation(t *testing.T) {
	now := time.Unix(1000, 0)
	var delays []time.Duration
	var scheduled []func()
	b := NewBudget(BudgetOptions[string]{Wake: func(string) {}, Now: func() time.Time { return now },
		AfterFunc: func(d time.Duration, f func()) { delays, scheduled = append(delays, d), append(scheduled, f) }})
	hard := res("pods", "1")
	if ok, _, _ := b.Reserve("t", "a", "a", res("pods", "1"), hard); !ok {
		t.Fatal("a refused")
	}
	b.Created("t", "a") // outcome unknown
	now = now.Add(time.Minute)
	if ok, _, _ := b.Reserve("t", "a", "a", res("pods", "1"), hard); !ok { // the retry, still writing
		t.Fatal("a's retry refused")
	}
	now = now.Add(DefaultReservationTTL)
	scheduled[0]()
	if len(scheduled) != 1 {
		t.Fatalf("expiries scheduled %v after the kept reservation ended, want none more", delays)
	}
	b.Release("t", "a") // the retry's write refused
	if got := qty(b.Used("t"), "pods"); got != "0" {
		t.Errorf("used pods %s, want 0: the kept reservation has expired", got)
	}
}

// TestBudgetOlderEventsKeepAnUpdatesReservation: while an update to cost more (1 → 2 cpu) is
// being written, the informer still delivers the object's older events (a status change, at
// 1 cpu): the reservation of 2 stays, so a parked Pod is not woken into room the update is about
// to take; the update's own event replaces it, and a refused update gives back the last seen.
func TestBudgetOlderEventsKeepAnUpdatesReservation(t *testing.T) {
	var w wakes
	b := NewBudget(BudgetOptions[string]{Wake: w.wake, AfterFunc: func(time.Duration, func()) {}})
	hard := res("requests.cpu", "3")
	b.Observe("t", "a", res("requests.cpu", "1"))
	b.Observe("t", "other", res("requests.cpu", "1"))
	if ok, _, _ := b.Reserve("t", "a", "a", res("requests.cpu", "2"), hard); !ok {
		t.Fatal("a's update refused")
	}
	if ok, _, _ := b.Reserve("t", "b", "b", res("requests.cpu", "1"), hard); ok {
		t.Fatal("b admitted beside a's update")
	}
	b.Observe("t", "a", res("requests.cpu", "1")) // a's status changed before the update landed
	if got := qty(b.Used("t"), "requests.cpu"); got != "3" {
		t.Fatalf("used cpu %s after an older event of a, want 3 (a's reservation of 2 stays)", got)
	}
	if woken := w.take(); len(woken) != 0 {
		t.Fatalf("woken %v into room a's update takes", woken)
	}
	b.Release("t", "a") // the update was refused: a costs what was last seen
	if got := qty(b.Used("t"), "requests.cpu"); got != "2" {
		t.Fatalf("used cpu %s after the refused update, want 2", got)
	}
	if woken := w.take(); len(woken) != 1 || woken[0] != "b" {
		t.Fatalf("woken %v, want [b]", woken)
	}
	b.Observe("t", "a", res("requests.cpu", "2")) // an update by someone else landed
	if got := qty(b.Used("t"), "requests.cpu"); got != "3" {
		t.Fatalf("used cpu %s, want 3", got)
	}
}
