package latency

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// histogramSums returns, per value of label, the sample sum and count of histogram name for
// tenant, from controller-runtime's registry.
func histogramSums(t *testing.T, name, tenant, label string) (sums map[string]float64, counts map[string]uint64) {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sums, counts = map[string]float64{}, map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var tn, lv string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "tenant":
					tn = l.GetValue()
				case label:
					lv = l.GetValue()
				}
			}
			if tn == tenant {
				sums[lv] += m.GetHistogram().GetSampleSum()
				counts[lv] += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return sums, counts
}

// histogramRise returns a function reporting how much histogramSums(t, name, tenant, label)
// has risen since histogramRise was called: the histograms are process-wide.
func histogramRise(t *testing.T, name, tenant, label string) func() (sums map[string]float64, counts map[string]uint64) {
	t.Helper()
	s0, c0 := histogramSums(t, name, tenant, label)
	return func() (map[string]float64, map[string]uint64) {
		t.Helper()
		sums, counts := histogramSums(t, name, tenant, label)
		for k := range sums {
			sums[k] -= s0[k]
			counts[k] -= c0[k]
		}
		return sums, counts
	}
}

func TestTrackerPodCreationPhases(t *testing.T) {
	metrics.Register()
	const tn = "phases"
	defer metrics.ForgetTenant(tn)
	var tr Tracker
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = "app", "web"
	k := podKey{tn, "app", "web"}
	req := resources.Request{Tenant: tn, Kind: resources.KindPod, Namespace: "app", Name: "web"}
	phases := histogramRise(t, "vcsyncer_pod_creation_phase_duration_seconds", tn, "phase")
	creation := histogramRise(t, "vcsyncer_pod_creation_duration_seconds", tn, "")
	held := histogramRise(t, "vcsyncer_pod_creation_syncer_held_seconds", tn, "")

	tr.podAdded(tn, pod, pod.Spec.NodeName, at(0))
	tr.Popped(metrics.Downward, req, at(10)) // downward_queue 10ms
	tr.Popped(metrics.Downward, req, at(15)) // a second pop (retry) changes nothing
	tr.Popped(metrics.Upward, req, at(20))   // upward pop before scheduling: not the upward queue
	tr.superPodCreated(k, false, at(40))     // downward_process 30ms
	tr.superPodScheduled(k, at(100))         // super_scheduling 60ms
	tr.Popped(metrics.Upward, req, at(105))  // upward_queue 5ms
	tr.podBound(k, at(125))                  // upward_process 20ms
	tr.podBound(k, at(500))                  // a later binding update is not counted again

	sums, counts := phases()
	want := map[string]float64{
		metrics.PhaseDownwardQueue: 0.010, metrics.PhaseDownwardProcess: 0.030,
		metrics.PhaseSuperScheduling: 0.060, metrics.PhaseUpwardQueue: 0.005, metrics.PhaseUpwardProcess: 0.020,
	}
	for phase, w := range want {
		if counts[phase] != 1 || !near(sums[phase], w) {
			t.Errorf("phase %s: %d samples summing %vs, want 1 sample of %vs", phase, counts[phase], sums[phase], w)
		}
	}
	total, n := creation()
	if n[""] != 1 || !near(total[""], 0.125) {
		t.Errorf("creation: %d samples summing %vs, want 1 of 0.125s", n[""], total[""])
	}
	// Inside the syncer: the creation less the super scheduling (125 − 60 ms).
	if h, n := held(); n[""] != 1 || !near(h[""], 0.065) {
		t.Errorf("syncer held: %d samples summing %vs, want 1 of 0.065s", n[""], h[""])
	}
	if len(tr.pods) != 0 {
		t.Errorf("tracker still holds %d Pods after the binding", len(tr.pods))
	}
}

func TestTrackerQueuePhaseLostRaceCountsZero(t *testing.T) {
	metrics.Register()
	const tn = "race"
	defer metrics.ForgetTenant(tn)
	var tr Tracker
	t0 := time.Now()
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = "app", "web"
	k := podKey{tn, "app", "web"}
	phases := histogramRise(t, "vcsyncer_pod_creation_phase_duration_seconds", tn, "phase")
	// Workers took both requests before the tracker's own handlers saw the events.
	tr.podAdded(tn, pod, pod.Spec.NodeName, t0)
	tr.superPodCreated(k, false, t0.Add(20*time.Millisecond))
	tr.superPodScheduled(k, t0.Add(50*time.Millisecond))
	tr.podBound(k, t0.Add(70*time.Millisecond))
	sums, counts := phases()
	for phase, w := range map[string]float64{
		metrics.PhaseDownwardQueue: 0, metrics.PhaseDownwardProcess: 0.020, metrics.PhaseSuperScheduling: 0.030,
		metrics.PhaseUpwardQueue: 0, metrics.PhaseUpwardProcess: 0.020,
	} {
		if counts[phase] != 1 || !near(sums[phase], w) {
			t.Errorf("phase %s: %d samples summing %vs, want 1 of %vs", phase, counts[phase], sums[phase], w)
		}
	}
}

func TestTrackerIgnoresBoundAndDeletedPods(t *testing.T) {
	var tr Tracker
	now := time.Now()
	bound := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}}
	bound.Name = "bound"
	tr.podAdded("x", bound, bound.Spec.NodeName, now)
	gone := &corev1.Pod{}
	gone.Name = "gone"
	tr.podAdded("x", gone, gone.Spec.NodeName, now)
	tr.podGone(podKey{"x", "", "gone"})
	if len(tr.pods) != 0 {
		t.Errorf("tracked %v, want nothing (a bound Pod is not a new one; a deleted one is forgotten)", tr.pods)
	}
}

func TestTrackerLagKeepsOldestChangeAcrossFailures(t *testing.T) {
	var tr Tracker
	t0 := time.Now()
	req := resources.Request{Tenant: "lag", Kind: resources.KindConfigMap, Namespace: "a", Name: "b"}
	tr.Arrival(metrics.Downward, req, false, t0) // initial list: no event time
	if got := tr.Popped(metrics.Downward, req, t0); !got.IsZero() {
		t.Fatalf("low-priority request carried arrival %v", got)
	}
	tr.Arrival(metrics.Downward, req, true, t0)
	tr.Arrival(metrics.Downward, req, true, t0.Add(time.Second)) // still waiting: keeps t0
	got := tr.Popped(metrics.Downward, req, t0.Add(2*time.Second))
	if !got.Equal(t0) {
		t.Fatalf("popped arrival = %v, want the first change's %v", got, t0)
	}
	tr.Arrival(metrics.Downward, req, true, t0.Add(3*time.Second)) // a change during the failing reconcile
	tr.Requeued(metrics.Downward, req, got)                        // the reconcile failed
	if again := tr.Popped(metrics.Downward, req, t0.Add(4*time.Second)); !again.Equal(t0) {
		t.Errorf("after a failure the arrival = %v, want the oldest %v", again, t0)
	}
	if again := tr.Popped(metrics.Upward, req, t0.Add(4*time.Second)); !again.IsZero() {
		t.Errorf("upward request saw the downward arrival %v", again)
	}
	tr.Arrival(metrics.Downward, req, true, t0)
	tr.Forget("lag")
	if len(tr.arrived) != 0 {
		t.Errorf("forget left %v", tr.arrived)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
