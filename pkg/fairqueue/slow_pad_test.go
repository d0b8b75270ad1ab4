package fairqueue

import (
	"testing"
	"time"
)

// The same neighbour as TestSlowNeighbourHoldsNoWorkerANeighbourNeeds, but the "slow"
// tenant pads its slow items (a webhook holding 15-25 s) with no-op items (1 ms: objects it
// touches without a change) so that its moving average of hold times (weight 1/8, per item,
// not per second held) stays under --slow-tenant-threshold most of the time.
func TestSlowTenantCannotPadItsAverage(t *testing.T) {
	for _, pad := range []int{0, 40} {
		c := newFakeClock()
		const workers = 10
		q, waits := neighbourQueue(c, workers)
		regularHold := 150 * time.Millisecond
		slowHold := func(i int) time.Duration { return 15*time.Second + time.Duration(i*7919%1000)*10*time.Millisecond }
		tenants := []simTenant{
			{name: "slow", n: 300 * (pad + 1), hold: func(i int) time.Duration {
				if i%(pad+1) != 0 {
					return time.Millisecond
				}
				return slowHold(i / (pad + 1))
			}},
			{name: "regular", start: 30 * time.Second, every: 100 * time.Millisecond, n: 600, hold: func(int) time.Duration { return regularHold }},
		}
		simulate(t, q, c, workers, tenants)
		mean, p99, worst := waitStats(waits["regular"][250:])
		t.Logf("pad %d no-op items per slow item: regular wait mean %v, p99 %v, max %v", pad, mean, p99, worst)
		if worst > regularHold {
			t.Errorf("pad %d: a regular item waited %v (mean %v) for a worker beside the slow tenant", pad, worst, mean)
		}
	}
}
