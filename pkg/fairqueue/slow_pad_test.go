package fairqueue

import (
	"sort"
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
		waits := map[string][]time.Duration{}
		const workers = 10
		q := New(Options[item]{TenantOf: tenantOf, Workers: workers, Reserve: 1, SlowAfter: 500 * time.Millisecond, Now: c.Now, AfterFunc: c.AfterFunc,
			Observe: func(tenant string, d time.Duration) { waits[tenant] = append(waits[tenant], d) }})
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
		steady := waits["regular"][250:]
		s := append([]time.Duration(nil), steady...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		var sum time.Duration
		for _, d := range s {
			sum += d
		}
		t.Logf("pad %d no-op items per slow item: regular wait mean %v, p99 %v, max %v", pad, sum/time.Duration(len(s)), s[len(s)*99/100], s[len(s)-1])
		if s[len(s)-1] > regularHold {
			t.Errorf("pad %d: a regular item waited %v (mean %v) for a worker beside the slow tenant", pad, s[len(s)-1], sum/time.Duration(len(s)))
		}
	}
}
