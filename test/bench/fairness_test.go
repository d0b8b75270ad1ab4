package main

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	v := make([]float64, 200) // 0.0, 0.1, ..., 19.9
	for i := range v {
		v[i] = float64(i) / 10
	}
	for _, c := range []struct{ p, want float64 }{{0, 0}, {0.5, 10}, {0.99, 19.8}, {1, 19.9}} {
		if got := percentile(v, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile(nil, 0.99); got != 0 {
		t.Errorf("percentile of no values = %v, want 0", got)
	}
}

// pods returns samples created at the given seconds and Running at the given seconds after t0.
func pods(t0 time.Time, created, running []float64) []sample {
	var out []sample
	for i := range created {
		out = append(out, sample{created: t0.Add(time.Duration(created[i] * float64(time.Second))),
			running: t0.Add(time.Duration(running[i] * float64(time.Second)))})
	}
	return out
}

func TestSaturatedIntervalAndShares(t *testing.T) {
	t0 := time.Unix(1000, 0)
	byTenant := [][]sample{
		// Tenant 0: backlog from 0 s; its last Pod runs at 6 s.
		pods(t0, []float64{0, 0, 0, 0}, []float64{1, 2, 3, 6}),
		// Tenant 1: first create at 2 s (the interval starts there); last Running at 5 s
		// (the interval ends there: its backlog is 0 while the others still have one).
		pods(t0, []float64{2, 2, 2}, []float64{2.5, 4, 5}),
		// Tenant 2: backlog from 1 s to 9 s.
		pods(t0, []float64{1, 1, 1, 1}, []float64{1.5, 3.5, 7, 9}),
	}
	start, end, ok := saturatedInterval(byTenant)
	if !ok || !start.Equal(t0.Add(2*time.Second)) || !end.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("interval = %v, %v, %v; want 2s, 5s, true", start.Sub(t0), end.Sub(t0), ok)
	}
	// Running in (2 s, 5 s]: tenant 0 at 3 s; tenant 1 at 2.5, 4, 5 s; tenant 2 at 3.5 s.
	shares, counts, n := sharesIn(byTenant, start, end)
	if n != 5 || counts[0] != 1 || counts[1] != 3 || counts[2] != 1 {
		t.Fatalf("counts = %v (n %d), want [1 3 1] (n 5)", counts, n)
	}
	if math.Abs(shares[1]-0.6) > 1e-9 || math.Abs(shares[0]-0.2) > 1e-9 {
		t.Errorf("shares = %v, want [0.2 0.6 0.2]", shares)
	}
}

func TestSaturatedIntervalNeverAllBacklogged(t *testing.T) {
	t0 := time.Unix(1000, 0)
	// Tenant 0 is done before tenant 1 creates anything.
	byTenant := [][]sample{pods(t0, []float64{0}, []float64{1}), pods(t0, []float64{2}, []float64{3})}
	if _, _, ok := saturatedInterval(byTenant); ok {
		t.Fatal("saturatedInterval found an interval where the tenants never all had a backlog")
	}
}

func TestSyncerPhaseMeans(t *testing.T) {
	text := func(sumA, countA, sumB, countB float64) []metricSample {
		return parseMetrics(fmt.Sprintf(`vcsyncer_pod_creation_phase_duration_seconds_sum{phase="downward_queue",tenant="a"} %v
vcsyncer_pod_creation_phase_duration_seconds_count{phase="downward_queue",tenant="a"} %v
vcsyncer_pod_creation_phase_duration_seconds_sum{phase="downward_queue",tenant="b"} %v
vcsyncer_pod_creation_phase_duration_seconds_count{phase="downward_queue",tenant="b"} %v
`, sumA, countA, sumB, countB))
	}
	// Between the scrapes tenant a got 10 Pods taking 5 s in all, tenant b 30 Pods taking 60 s.
	before, after := text(100, 50, 1, 1), text(105, 60, 61, 31)
	if got := syncerPhaseMeans(before, after, []string{"a"}); math.Abs(got["downward_queue"]-0.5) > 1e-9 {
		t.Errorf("tenant a: %v, want downward_queue 0.5", got)
	}
	if got := syncerPhaseMeans(before, after, []string{"a", "b"}); math.Abs(got["downward_queue"]-65.0/40) > 1e-9 {
		t.Errorf("tenants a and b: %v, want downward_queue %v", got, 65.0/40)
	}
	if got := syncerPhaseMeans(before, before, []string{"a"}); got != nil {
		t.Errorf("no new observations: %v, want nil", got)
	}
}

func TestSyncerCallMeans(t *testing.T) {
	// Between the scrapes tenant a's 4 Pods waited 0.2 s for TokenRequests and 0.1 s for the
	// super create; tenant b's 2 Pods 1 s for the super create. A phase series is not a call.
	before := parseMetrics(`vcsyncer_pod_creation_call_duration_seconds_sum{call="token_request",tenant="a"} 1
vcsyncer_pod_creation_call_duration_seconds_count{call="token_request",tenant="a"} 10
`)
	after := parseMetrics(`vcsyncer_pod_creation_call_duration_seconds_sum{call="token_request",tenant="a"} 1.2
vcsyncer_pod_creation_call_duration_seconds_count{call="token_request",tenant="a"} 14
vcsyncer_pod_creation_call_duration_seconds_sum{call="super_create",tenant="a"} 0.1
vcsyncer_pod_creation_call_duration_seconds_count{call="super_create",tenant="a"} 4
vcsyncer_pod_creation_call_duration_seconds_sum{call="super_create",tenant="b"} 1
vcsyncer_pod_creation_call_duration_seconds_count{call="super_create",tenant="b"} 2
vcsyncer_pod_creation_phase_duration_seconds_sum{phase="downward_queue",tenant="a"} 9
vcsyncer_pod_creation_phase_duration_seconds_count{phase="downward_queue",tenant="a"} 1
`)
	got := syncerCallMeans(before, after, []string{"a"})
	if len(got) != 2 || math.Abs(got["token_request"]-0.05) > 1e-9 || math.Abs(got["super_create"]-0.025) > 1e-9 {
		t.Errorf("tenant a: %v, want token_request 0.05 and super_create 0.025 only", got)
	}
	if got := syncerCallMeans(before, after, []string{"a", "b"}); math.Abs(got["super_create"]-1.1/6) > 1e-9 {
		t.Errorf("tenants a and b: %v, want super_create %v", got, 1.1/6)
	}
}

func TestMedianRun(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median of 3, 1, 2 = %v, want 2", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median of 4, 1, 3, 2 = %v, want 2.5", got)
	}
	if got := median(nil); got != 0 {
		t.Errorf("median of nothing = %v, want 0", got)
	}
	run := func(p99a, ratio, held, shareErr, share float64) fairnessRun {
		return fairnessRun{RegularP99Alone: p99a, RatioGreedyFairToGreedyDirectP99: ratio, RegularSyncerHeldP99GreedyFair: held,
			MaxWeightedShareRelativeError: shareErr, Cases: []fairnessCase{{Name: "a"}},
			WeightedShares: []weightedShare{{Tenant: "t", Weight: 3, Target: 0.6, Share: share, Error: share/0.6 - 1, Running: int(math.Round(share * 100))}}}
	}
	runs := []fairnessRun{run(0.3, 0.9, 0.02, 0.05, 0.60), run(0.1, 1.4, 0.01, 0.12, 0.54), run(0.2, 1.1, 0.05, 0.01, 0.57)}
	m := medianRun(runs)
	if m.RegularP99Alone != 0.2 || m.RatioGreedyFairToGreedyDirectP99 != 1.1 || m.RegularSyncerHeldP99GreedyFair != 0.02 {
		t.Errorf("medians: (a) %v, (b)/(b-direct) %v, held (b) %v; want 0.2, 1.1, 0.02", m.RegularP99Alone, m.RatioGreedyFairToGreedyDirectP99, m.RegularSyncerHeldP99GreedyFair)
	}
	if m.MaxWeightedShareRelativeError != 0.12 {
		t.Errorf("max share error = %v, want the largest of any run, 0.12", m.MaxWeightedShareRelativeError)
	}
	if len(m.WeightedShares) != 1 || math.Abs(m.WeightedShares[0].Share-0.57) > 1e-9 || m.WeightedShares[0].Running != 57 || m.WeightedShares[0].Weight != 3 {
		t.Errorf("weighted shares = %+v, want tenant t's median share 0.57 (57 Running, weight 3)", m.WeightedShares)
	}
	if m.Cases != nil {
		t.Errorf("the medians carry no cases (they are in runs[]): %v", m.Cases)
	}
	if one := medianRun(runs[:1]); one.RegularP99Alone != 0.3 || len(one.Cases) != 1 {
		t.Errorf("one run is its own median with its cases: %+v", one)
	}
}

func TestSplitRegular(t *testing.T) {
	s := []sample{{key: "0/pod-1"}, {key: "3/pod-1"}, {key: "1/pod-2"}, {key: "2/pod-1"}, {key: "10/pod-1"}}
	reg, oth := splitRegular(s, 2)
	if len(reg) != 2 || reg[0].key != "0/pod-1" || reg[1].key != "1/pod-2" || len(oth) != 3 {
		t.Errorf("regular %v, others %v; want loads 0 and 1 regular, 2, 3 and 10 others", reg, oth)
	}
}

// TestAdmittedShares checks the shares of what the syncer decides: the interval in which every
// tenant had Pods without a super copy, and the super copies created in it. Running times are
// what the shares of Running Pods use and must not matter here.
func TestAdmittedShares(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	mk := func(created float64, super ...float64) []sample {
		var out []sample
		for i, s := range super {
			out = append(out, sample{key: fmt.Sprint(i), created: at(created), running: at(100), super: at(s)})
		}
		return out
	}
	byTenant := [][]sample{
		mk(0, 1, 2, 3, 4, 5, 6), // weight 3's Pods: waiting in the syncer until 6 s
		mk(0, 2.5, 4.5, 8),      // its last super copy at 8 s
		mk(0, 3.5, 7, 9),
	}
	byTenant[2] = append(byTenant[2], sample{key: "never", created: at(0)}) // never reached the super cluster
	admitted := admittedSamples(byTenant)
	if len(admitted[2]) != 3 {
		t.Fatalf("admitted samples of tenant 2: %d; want 3 (the Pod never seen in the super cluster left out)", len(admitted[2]))
	}
	start, end, ok := saturatedInterval(admitted)
	if !ok || !start.Equal(at(0)) || !end.Equal(at(6)) {
		t.Fatalf("interval = %v, %v, %v; want 0s, 6s, true", start.Sub(t0), end.Sub(t0), ok)
	}
	_, counts, n := sharesIn(admitted, start, end)
	if n != 9 || counts[0] != 6 || counts[1] != 2 || counts[2] != 1 {
		t.Errorf("super copies in the interval = %v (n %d); want [6 2 1] (n 9)", counts, n)
	}
}

// TestTenantSamplesIn: only the scrapes inside the interval count; gauges are averaged over
// them, counters and the reconcile mean are deltas between the first and the last (both results
// of the Pod reconciles summed), and series of other tenants, directions and kinds are left
// out. Every series it reads is one sampleSyncer keeps.
func TestTenantSamplesIn(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var names []string
	m := func(name string, v float64, kv ...string) metricSample {
		names = append(names, name)
		l := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return metricSample{name: name, labels: l, value: v}
	}
	// i is the scrape's number: every series moves with it, the tenant's and the others'.
	at := func(sec float64, i float64) timedScrape {
		return timedScrape{at: t0.Add(time.Duration(sec * float64(time.Second))), samples: []metricSample{
			m("vcsyncer_admission_window", 100*i),
			m("vcsyncer_admission_held", 10*i, "tenant", "a"),
			m("vcsyncer_admission_held", 99*i, "tenant", "b"),
			m("vcsyncer_admission_waiting", 2*i, "tenant", "a"),
			m("vcsyncer_admission_admitted_total", 10*i, "tenant", "a"),
			m("vcsyncer_admission_admitted_total", 77*i, "tenant", "b"),
			m("vcsyncer_queue_depth", 3*i, "tenant", "a", "direction", "downward"),
			m("vcsyncer_queue_depth", 50*i, "tenant", "a", "direction", "upward"),
			m("vcsyncer_queue_in_flight", i, "tenant", "a", "direction", "downward"),
			m("vcsyncer_queue_in_flight", 40*i, "tenant", "a", "direction", "upward"),
			m("vcsyncer_queue_worker_hold_seconds", 0.1*i, "tenant", "a", "direction", "downward"),
			m("vcsyncer_queue_worker_hold_seconds", 9*i, "tenant", "b", "direction", "downward"),
			m("vcsyncer_write_share_delay_seconds_total", 0.5*i, "tenant", "a"),
			m("vcsyncer_write_share_delay_seconds_total", 8*i, "tenant", "b"),
			m("vcsyncer_sync_duration_seconds_sum", 2*i, "tenant", "a", "direction", "downward", "kind", "Pod", "result", "success"),
			m("vcsyncer_sync_duration_seconds_count", 8*i, "tenant", "a", "direction", "downward", "kind", "Pod", "result", "success"),
			m("vcsyncer_sync_duration_seconds_sum", 1*i, "tenant", "a", "direction", "downward", "kind", "Pod", "result", "error"),
			m("vcsyncer_sync_duration_seconds_count", 2*i, "tenant", "a", "direction", "downward", "kind", "Pod", "result", "error"),
			m("vcsyncer_sync_duration_seconds_sum", 900*i, "tenant", "a", "direction", "downward", "kind", "Secret", "result", "success"),
			m("vcsyncer_sync_duration_seconds_sum", 900*i, "tenant", "a", "direction", "upward", "kind", "Pod", "result", "success"),
			m("vcsyncer_sync_duration_seconds_count", 900*i, "tenant", "a", "direction", "upward", "kind", "Pod", "result", "success"),
			m("vcsyncer_sync_duration_seconds_sum", 900*i, "tenant", "b", "direction", "downward", "kind", "Pod", "result", "success"),
			m("vcsyncer_sync_duration_seconds_count", 900*i, "tenant", "b", "direction", "downward", "kind", "Pod", "result", "success"),
			m("vcsyncer_pod_creation_call_duration_seconds_sum", 3*i, "tenant", "a", "call", "super_create"),
			m("vcsyncer_pod_creation_call_duration_seconds_count", 5*i, "tenant", "a", "call", "super_create"),
			m("vcsyncer_pod_creation_call_duration_seconds_sum", 0.5*i, "tenant", "a", "call", "token_request"),
			m("vcsyncer_pod_creation_call_duration_seconds_count", 4*i, "tenant", "a", "call", "token_request"),
			m("vcsyncer_pod_creation_call_duration_seconds_sum", 700*i, "tenant", "b", "call", "super_create"),
			m("vcsyncer_pod_creation_call_duration_seconds_count", 70*i, "tenant", "b", "call", "super_create"),
		}}
	}
	scrapes := []timedScrape{
		at(0, 1000), // before the interval
		at(1, 1),
		at(2, 2),
		at(3, 3),
		at(9, 1000), // after it
	}
	got, window := tenantSamplesIn(scrapes, t0.Add(time.Second), t0.Add(3*time.Second), []string{"a"})
	if len(got) != 1 {
		t.Fatalf("got %v, want one tenant", got)
	}
	// Means over scrapes 1–3 (mean i = 2), deltas from 1 to 3 (Δi = 2).
	want := weightedTenantSample{Tenant: "a", Admitted: 20, WindowHeld: 20, WindowWaiting: 4, QueueDepth: 6, InFlight: 2,
		WorkerHoldSeconds: 0.2, PodReconciles: 20, PodReconcileSeconds: 6.0 / 20, PodWorkerSecondsPerAdmitted: 6.0 / 20, WriteShareDelaySeconds: 1,
		SuperCreates: 10, PodWorkerSecondsPerCreate: 6.0 / 10, SuperCreateSeconds: 6.0 / 10, TokenRequestSeconds: 1.0 / 8}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	g := got[0]
	if g.Tenant != want.Tenant || !near(g.Admitted, want.Admitted) || !near(g.WindowHeld, want.WindowHeld) || !near(g.WindowWaiting, want.WindowWaiting) ||
		!near(g.QueueDepth, want.QueueDepth) || !near(g.InFlight, want.InFlight) || !near(g.WorkerHoldSeconds, want.WorkerHoldSeconds) ||
		!near(g.PodReconciles, want.PodReconciles) || !near(g.PodReconcileSeconds, want.PodReconcileSeconds) ||
		!near(g.PodWorkerSecondsPerAdmitted, want.PodWorkerSecondsPerAdmitted) || !near(g.WriteShareDelaySeconds, want.WriteShareDelaySeconds) || !near(window, 200) ||
		!near(g.SuperCreates, want.SuperCreates) || !near(g.PodWorkerSecondsPerCreate, want.PodWorkerSecondsPerCreate) ||
		!near(g.SuperCreateSeconds, want.SuperCreateSeconds) || !near(g.TokenRequestSeconds, want.TokenRequestSeconds) {
		t.Fatalf("got %+v (window %v), want %+v (window 200)", g, window, want)
	}
	if got, _ := tenantSamplesIn(scrapes, t0.Add(4*time.Second), t0.Add(8*time.Second), []string{"a"}); got != nil {
		t.Fatalf("no scrape in the interval: got %v, want nil", got)
	}
	for _, name := range names {
		if !sampledSeries[name] {
			t.Errorf("series %s is read but not kept by sampleSyncer (sampledSeries)", name)
		}
	}
}
