package trackingqueue_test

import (
	"fmt"

	"k8s.io/client-go/util/workqueue"

	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
)

// Example shows a final checkpoint and the resume: the snapshot taken after ShutDown holds the
// queued item, the one a worker was still reconciling and an add that came after ShutDown;
// Seed hands all three to the next process's queue.
func Example() {
	newQueue := func() *trackingqueue.Queue[string] {
		return trackingqueue.New(trackingqueue.Config[string]{
			Name:        "", // no client-go metrics
			RateLimiter: workqueue.DefaultTypedControllerRateLimiter[string](),
		})
	}

	q := newQueue()
	q.Add("tenant-a/default/web")
	q.Add("tenant-b/default/db")
	_, _ = q.Get() // tenant-a/default/web: still reconciling when the process stops
	q.ShutDown()
	q.Add("tenant-a/default/cache") // dropped by client-go after ShutDown, kept as an orphan
	snap := q.Snapshot()
	fmt.Println("queued:", snap.Queued)
	fmt.Println("processing:", snap.Processing)
	fmt.Println("orphans:", snap.Orphans)

	next := newQueue()
	defer next.ShutDown()
	next.Seed(snap)
	for next.Len() > 0 {
		item, _ := next.Get()
		fmt.Println("reconcile", item)
		next.Done(item)
	}
	// Output:
	// queued: [tenant-b/default/db]
	// processing: [tenant-a/default/web]
	// orphans: [tenant-a/default/cache]
	// reconcile tenant-b/default/db
	// reconcile tenant-a/default/web
	// reconcile tenant-a/default/cache
}
