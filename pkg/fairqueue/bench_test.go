package fairqueue

import (
	"fmt"
	"testing"

	"k8s.io/client-go/util/workqueue"
)

// BenchmarkAddGetDone measures one Add+Get+Done cycle through a client-go queue with the fair
// ordering, with every tenant holding queued items. The ratio between 10 and 1000 tenants
// shows the cost does not grow with the number of tenants. Mode "capped" runs the fair ordering
// with an in-flight cap of 20 workers (Options.Workers) and calls its Done, as the syncer does.
func BenchmarkAddGetDone(b *testing.B) {
	for _, tenants := range []int{10, 1000} {
		for _, mode := range []string{"fair", "capped", "fifo"} {
			b.Run(fmt.Sprintf("%s/tenants=%d", mode, tenants), func(b *testing.B) {
				names := make([]string, tenants)
				for i := range names {
					names[i] = fmt.Sprintf("tenant-%d", i)
				}
				var wq workqueue.TypedInterface[item]
				var fq *Queue[item]
				switch mode {
				case "fair":
					wq = newWorkqueue(New(Options[item]{TenantOf: tenantOf}))
				case "capped":
					fq = New(Options[item]{TenantOf: tenantOf, Workers: 20})
					wq = newWorkqueue(fq)
				default:
					wq = workqueue.NewTyped[item]()
				}
				defer wq.ShutDown()
				// Backlog: 10 items per tenant.
				for i := range 10 * tenants {
					wq.Add(item{names[i%tenants], -1 - i})
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					wq.Add(item{names[i%tenants], i})
					it, _ := wq.Get()
					if fq != nil {
						fq.Done(it)
					}
					wq.Done(it)
				}
			})
		}
	}
}
