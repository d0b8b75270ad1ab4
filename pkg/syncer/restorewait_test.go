package syncer

import (
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/resources"
)

// A kind the syncer could sync and does not (an opt-in kind not opted in, a disabled kind) is
// counted as 0 without a LIST before a tenant's informers start; a synced kind is not.
func TestUnsyncedKindsAreNotCounted(t *testing.T) {
	for _, tc := range []struct {
		optIn, disabled []resources.Kind
		kind            resources.Kind
		skipped         bool
	}{
		{kind: resources.KindIngress, skipped: true},
		{optIn: []resources.Kind{resources.KindIngress}, kind: resources.KindIngress, skipped: false},
		{disabled: []resources.Kind{resources.KindEvent}, kind: resources.KindEvent, skipped: true},
		{kind: resources.KindEvent, skipped: false},
		{kind: resources.KindConfigMap, skipped: false},
	} {
		s, err := New(Options{Super: fake.NewClientset(), DownwardWorkers: 1, UpwardWorkers: 1, OptInKinds: tc.optIn, DisabledKinds: tc.disabled})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.skipsKind(tc.kind); got != tc.skipped {
			t.Errorf("opt-in %v, disabled %v: skipsKind(%s) = %v, want %v", tc.optIn, tc.disabled, tc.kind, got, tc.skipped)
		}
	}
}
