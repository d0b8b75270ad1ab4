package remediation

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/resources/pod"
)

// TestOrphanRequeueSafetyProperty drives the scanner through random sequences of cache states
// (tenant trusted or not, tenant Pod present or not, super Pod present, gone or recreated) and
// checks the safety rule on every re-enqueue of a Pod whose tenant object is absent — the only
// re-enqueue that can lead the downward reconcile to delete a super Pod: the tenant was
// trusted in this scan and in the previous one, and both scans saw the same super Pod (same
// UID) without its tenant Pod.
func TestOrphanRequeueSafetyProperty(t *testing.T) {
	type obs struct {
		trusted, tenantPresent bool
		superUID               string // "" when absent
	}
	orphanRequeues := 0
	for seed := range uint64(200) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			f := newFixture(t)
			c := f.addTenant("t1", true, true)
			p := pod.Resource
			tp := tenantPod("web")
			sp := superPodOf(c, tp)
			tenantPresent, superPresent, gen := false, false, 0
			var prev *obs
			for step := range 40 {
				switch rng.IntN(6) {
				case 0:
					f.ready["t1"] = !f.ready["t1"]
				case 1:
					tenantPresent = !tenantPresent
					if tenantPresent {
						mustAdd(t, f.tenantStore(c, p), tp)
					} else if err := f.tenantStore(c, p).Delete(tp); err != nil {
						t.Fatal(err)
					}
				case 2:
					superPresent = !superPresent
					if superPresent {
						mustAdd(t, f.superStore(p), sp)
					} else if err := f.superStore(p).Delete(sp); err != nil {
						t.Fatal(err)
					}
				case 3: // recreated (new UID) by someone in the super cluster
					gen++
					sp = sp.DeepCopy()
					sp.UID = types.UID(fmt.Sprintf("s-%d", gen))
					if superPresent {
						mustAdd(t, f.superStore(p), sp)
					}
				default: // scan (most steps)
				}
				cur := obs{trusted: f.ready["t1"], tenantPresent: tenantPresent}
				if superPresent {
					cur.superUID = string(sp.UID)
				}
				f.sc.Scan()
				for _, r := range f.q.take() {
					if tenantPresent || r.upward {
						continue
					}
					orphanRequeues++
					ok := cur.trusted && cur.superUID != "" && prev != nil && prev.trusted && !prev.tenantPresent && prev.superUID == cur.superUID
					if !ok {
						t.Fatalf("step %d: orphan re-enqueued %v; previous scan %+v, this scan %+v", step, r, prev, cur)
					}
				}
				prev = &cur
			}
		})
	}
	if orphanRequeues == 0 {
		t.Fatal("no sequence re-enqueued an orphan: the property was never exercised")
	}
	t.Logf("%d orphan re-enqueues checked", orphanRequeues)
}
