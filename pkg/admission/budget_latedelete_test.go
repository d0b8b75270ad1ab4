package admission

import "testing"

// A tenant deletes an object and creates it again under the same name: the new super copy is
// reserved and written before the super informer delivers the deletion of the old copy. That
// late delete (Observe with a nil charge, keyed by name) must not drop the new copy's
// reservation, or its room would be handed out again and the tenant would end over its
// budget for good.
func TestLateDeleteOfTheOldCopyKeepsTheNewReservation(t *testing.T) {
	w := &wakes{}
	b := NewBudget(BudgetOptions[string]{Wake: w.wake})
	hard := res("count/secrets", "1")
	one := res("count/secrets", "1")
	b.Observe("t", "Secret/ns/a", one) // the old copy
	if ok, _, _ := b.Reserve("t", "a", "Secret/ns/a", one, hard); !ok {
		t.Fatal("the re-created a was refused")
	}
	b.Created("t", "Secret/ns/a")
	b.Observe("t", "Secret/ns/a", nil) // the old copy's deletion, delivered late
	if ok, _, _ := b.Reserve("t", "b", "Secret/ns/b", one, hard); ok {
		t.Fatalf("a second Secret was admitted under count/secrets=1 (used %s)", qty(b.Used("t"), "count/secrets"))
	}
	b.Observe("t", "Secret/ns/a", one) // the new copy's ADD
	if got := qty(b.Used("t"), "count/secrets"); got != "1" {
		t.Fatalf("used count/secrets=%s after the new copy's ADD, want 1", got)
	}
}
