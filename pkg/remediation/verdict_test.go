package remediation

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// countingChecker is a kind whose Check counts its calls and answers as the kind it wraps; it
// does not declare stable verdicts (embedding the Resource interface hides the wrapped kind's
// other methods).
type countingChecker struct {
	resources.Resource
	calls *int
}

func (r countingChecker) Check(env *resources.Env, c *tenant.Cluster, t, s metav1.Object) resources.Mismatch {
	*r.calls++
	return r.Resource.(resources.Checker).Check(env, c, t, s)
}

// stableCountingChecker is countingChecker declaring stable verdicts.
type stableCountingChecker struct{ countingChecker }

func (stableCountingChecker) StableVerdicts() {}

// TestScanRemembersStableInSyncVerdicts: a kind with stable verdicts is checked once while
// neither object changes; a new resourceVersion on either side, a new super UID or a new
// tenant policy checks it again, and a kind without stable verdicts is checked on every scan.
func TestScanRemembersStableInSyncVerdicts(t *testing.T) {
	for _, stable := range []bool{true, false} {
		f := newFixture(t)
		c := f.addTenant("t1", true, true)
		calls := 0
		var r resources.Resource = countingChecker{Resource: pod.Resource, calls: &calls}
		if stable {
			r = stableCountingChecker{r.(countingChecker)}
		}
		f.sc.o.Resources = []resources.Resource{r}
		tp := tenantPod("web")
		sp := superPodOf(c, tp)
		mustAdd(t, f.tenantStore(c, r), tp)
		mustAdd(t, f.superStore(r), sp)

		scan := func(step string, wantCalls, wantRemembered, wantCandidates int) {
			t.Helper()
			before := calls
			res := f.sc.Scan()
			if !stable {
				wantCalls, wantRemembered = before+1, 0 // every scan checks
			}
			if calls != wantCalls || res.Remembered != wantRemembered || res.Candidates != wantCandidates {
				t.Fatalf("stable=%v, %s: %d checks, %d remembered, %d candidates; want %d, %d, %d",
					stable, step, calls, res.Remembered, res.Candidates, wantCalls, wantRemembered, wantCandidates)
			}
		}
		scan("first scan", 1, 0, 0)
		scan("nothing changed", 1, 1, 0)
		scan("nothing changed again", 1, 1, 0)

		edited := sp.DeepCopy()
		edited.Labels["app"] = "edited-in-super"
		edited.ResourceVersion = "101"
		if err := f.superStore(r).Update(edited); err != nil {
			t.Fatal(err)
		}
		scan("super Pod edited", 2, 0, 1)
		scan("still edited: a mismatch is never remembered", 3, 0, 1)

		fixed := sp.DeepCopy()
		fixed.ResourceVersion = "102"
		if err := f.superStore(r).Update(fixed); err != nil {
			t.Fatal(err)
		}
		scan("super Pod repaired", 4, 0, 0)
		scan("repaired, unchanged", 4, 1, 0)

		c.SetPolicy(policy.Resolve(nil, nil)) // the same rules, a new policy object
		scan("tenant policy installed again, same rules", 4, 1, 0)
		c.SetPolicy(policy.Resolve(&tenancyv1alpha1.TenantPolicySpec{
			Metadata: &tenancyv1alpha1.MetadataPolicy{AllowedLabelPrefixes: []string{"app"}},
		}, nil))
		scan("tenant policy rules changed", 5, 0, 0)
		scan("policy unchanged since", 5, 1, 0)

		moved := tp.DeepCopy()
		moved.ResourceVersion = "6"
		if err := f.tenantStore(c, r).Update(moved); err != nil {
			t.Fatal(err)
		}
		scan("tenant Pod updated", 6, 0, 0)

		if err := f.tenantStore(c, r).Delete(moved); err != nil {
			t.Fatal(err)
		}
		f.sc.Scan()
		if n := len(f.sc.states["t1"].verdicts[resources.KindPod]); n != 0 {
			t.Errorf("stable=%v: %d verdicts kept for a deleted Pod, want 0", stable, n)
		}
	}
}
