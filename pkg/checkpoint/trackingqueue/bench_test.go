//go:build unix

package trackingqueue

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/vcsyncer/syncer/pkg/fairqueue"
)

type benchItem struct {
	tenant string
	n      int
}

// BenchmarkAddGetDone measures one Add+Get+Done cycle through the plain client-go stack
// (rate limiting → delaying → Typed) and through the tracking stack, both over the per-tenant
// fair queue with 10 tenants holding 10 queued items each, without and with 100 delayed items
// pending (windows make Add read the clock and take the tracker lock).
//
// Besides wall time (sec/op) it reports cpu-ns/op, the process's user+system CPU time per
// cycle from getrusage: on a machine shared with other work, wall time also counts the time
// the benchmark waits for a CPU, CPU time does not.
// Results and the benchstat command: docs/bench/trackingqueue/README.md.
func BenchmarkAddGetDone(b *testing.B) {
	const tenants = 10
	names := make([]string, tenants)
	for i := range names {
		names[i] = fmt.Sprintf("tenant-%d", i)
	}
	for _, delayed := range []int{0, 100} {
		for _, stack := range []string{"client-go", "tracking"} {
			b.Run(fmt.Sprintf("delayed=%d/stack=%s", delayed, stack), func(b *testing.B) {
				storage := fairqueue.New(fairqueue.Options[benchItem]{TenantOf: func(x benchItem) string { return x.tenant }})
				rl := workqueue.DefaultTypedControllerRateLimiter[benchItem]()
				var q workqueue.TypedRateLimitingInterface[benchItem]
				if stack == "tracking" {
					q = New(Config[benchItem]{RateLimiter: rl, Storage: storage})
				} else {
					base := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[benchItem]{Queue: storage})
					dq := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[benchItem]{Queue: base})
					q = workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[benchItem]{DelayingQueue: dq})
				}
				defer q.ShutDown()
				for i := range 10 * tenants {
					q.Add(benchItem{names[i%tenants], -1 - i})
				}
				for i := range delayed {
					q.AddAfter(benchItem{names[i%tenants], -1_000_000 - i}, time.Hour)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					q.Add(benchItem{names[i%tenants], i})
					it, _ := q.Get()
					q.Done(it)
				}
				b.StopTimer()
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTime returns the user+system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
