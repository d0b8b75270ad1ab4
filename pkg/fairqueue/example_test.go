package fairqueue_test

import (
	"fmt"

	"k8s.io/client-go/util/workqueue"

	"github.com/vcsyncer/syncer/pkg/fairqueue"
)

type request struct{ Tenant, Name string }

func Example() {
	weights := map[string]int{"gold": 2, "bronze": 1}
	fq := fairqueue.New(fairqueue.Options[request]{
		TenantOf: func(r request) string { return r.Tenant },
		Weight:   func(t string) int { return weights[t] },
	})
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[request]{Queue: fq})
	for i := range 4 {
		q.Add(request{"gold", fmt.Sprint("g", i)})
		q.Add(request{"bronze", fmt.Sprint("b", i)})
	}
	// A resync is low priority: it waits behind live events, but at least one in every four
	// items served from a tenant comes from its low lane, so it is never starved.
	fq.MarkLow(request{"bronze", "resync"})
	q.Add(request{"bronze", "resync"})
	for q.Len() > 0 {
		r, _ := q.Get()
		fmt.Print(r.Name, " ")
		q.Done(r)
	}
	// Output: g0 g1 b0 g2 g3 b1 b2 resync b3
}
