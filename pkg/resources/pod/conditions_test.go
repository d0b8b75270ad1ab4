package pod

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

const gate corev1.PodConditionType = "example.com/ready"

func at(sec int) metav1.Time { return metav1.NewTime(time.Unix(int64(1000+sec), 0)) }

func cond(typ corev1.PodConditionType, s corev1.ConditionStatus, sec int) corev1.PodCondition {
	return corev1.PodCondition{Type: typ, Status: s, LastTransitionTime: at(sec)}
}

func TestTenantOwned(t *testing.T) {
	for _, typ := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized,
		corev1.ContainersReady, corev1.PodReadyToStartContainers, corev1.DisruptionTarget, corev1.PodResizePending,
		corev1.PodResizeInProgress, corev1.AllContainersRestarting} {
		if TenantOwned(typ) {
			t.Errorf("%s is tenant-owned, want the super cluster's", typ)
		}
	}
	for _, typ := range []corev1.PodConditionType{gate, "target-health.elbv2.k8s.aws/my-tg", "InPlaceUpdateReady"} {
		if !TenantOwned(typ) {
			t.Errorf("%s is not tenant-owned", typ)
		}
	}
}

// The upward copy keeps the tenant's gate condition (never overwritten or removed, whatever
// the super Pod has of that type) and copies every kubelet condition.
func TestDesiredStatusKeepsTenantConditions(t *testing.T) {
	tenantPod := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		cond(corev1.PodScheduled, corev1.ConditionTrue, 1), cond(corev1.PodReady, corev1.ConditionFalse, 2),
		cond(gate, corev1.ConditionTrue, 9), cond("tenant-only", corev1.ConditionFalse, 3)}}}
	superPod := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		cond(corev1.PodScheduled, corev1.ConditionTrue, 1), cond(corev1.PodReady, corev1.ConditionTrue, 10),
		cond(gate, corev1.ConditionFalse, 0), // a stale copy, or kwok's own
	}, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", RestartCount: 7}}}}
	got := DesiredStatus(tenantPod, superPod)
	want := []corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionTrue, 1), cond(corev1.PodReady, corev1.ConditionTrue, 10),
		cond(gate, corev1.ConditionTrue, 9), cond("tenant-only", corev1.ConditionFalse, 3)}
	if !equality.Semantic.DeepEqual(got.Conditions, want) {
		t.Errorf("conditions = %+v\nwant %+v", got.Conditions, want)
	}
	if got.ContainerStatuses[0].RestartCount != 7 {
		t.Errorf("restartCount = %d, want the super Pod's 7", got.ContainerStatuses[0].RestartCount)
	}
	if !statusInSync(&corev1.Pod{Status: *got}, superPod) {
		t.Error("statusInSync is false for the status DesiredStatus built")
	}
	if statusInSync(tenantPod, superPod) {
		t.Error("statusInSync is true although Ready differs")
	}
}

// A tenant-owned condition newer than anything in the super Pod is not "super cache behind".
func TestOlderStatusIgnoresTenantConditions(t *testing.T) {
	superPod := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		cond(corev1.PodReady, corev1.ConditionTrue, 5), cond(gate, corev1.ConditionTrue, 1)}}}
	tenantPod := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
		cond(corev1.PodReady, corev1.ConditionTrue, 5), cond(gate, corev1.ConditionTrue, 50)}}}
	if got := olderStatus(superPod, tenantPod); got != "" {
		t.Errorf("olderStatus = %q, want none (the gate is the tenant's)", got)
	}
}

func TestTenantConditionsPatch(t *testing.T) {
	kubelet := []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse, 2), cond(corev1.ContainersReady, corev1.ConditionTrue, 2)}
	superPod := &corev1.Pod{Status: corev1.PodStatus{Conditions: append(append([]corev1.PodCondition{}, kubelet...),
		cond("removed-in-tenant", corev1.ConditionTrue, 1), cond("same", corev1.ConditionTrue, 1))}}
	tenantPod := &corev1.Pod{
		Spec: corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: gate}, {ConditionType: "same"}, {ConditionType: "removed-in-tenant"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			cond(corev1.PodReady, corev1.ConditionTrue, 1), // the kubelet's: never copied down
			cond(gate, corev1.ConditionTrue, 9), cond("same", corev1.ConditionTrue, 1),
			cond("not-a-gate", corev1.ConditionTrue, 1)}}} // the tenant's, but no gate: stays in the tenant
	patch, err := TenantConditionsPatch(tenantPod, superPod)
	if err != nil || patch == nil {
		t.Fatalf("patch = %s, %v", patch, err)
	}
	patched := applyPatch(t, superPod, patch)
	want := append(append([]corev1.PodCondition{}, kubelet...), cond("same", corev1.ConditionTrue, 1), cond(gate, corev1.ConditionTrue, 9))
	if !sameConditions(patched.Status.Conditions, want) {
		t.Errorf("patched super conditions = %+v\nwant %+v (patch %s)", patched.Status.Conditions, want, patch)
	}
	if again, _ := TenantConditionsPatch(tenantPod, &patched); again != nil {
		t.Errorf("second patch = %s, want none", again)
	}
	if TenantConditionsChanged(tenantPod, tenantPod.DeepCopy()) {
		t.Error("TenantConditionsChanged for equal Pods")
	}
	changed := tenantPod.DeepCopy()
	changed.Status.Conditions[1].Status = corev1.ConditionFalse
	if !TenantConditionsChanged(tenantPod, changed) {
		t.Error("TenantConditionsChanged false for a gate change")
	}
	kubeletOnly := tenantPod.DeepCopy()
	kubeletOnly.Status.Conditions[0].Status = corev1.ConditionFalse
	if TenantConditionsChanged(tenantPod, kubeletOnly) {
		t.Error("TenantConditionsChanged true for a kubelet condition change")
	}
}

// What a tenant writes into super Pod statuses is bounded: only declared readiness gates, at
// most maxCopiedConditions of them, reasons and messages cut; a super-side condition of a type
// the tenant Pod does not declare as a gate is never deleted.
func TestTenantConditionsPatchBounds(t *testing.T) {
	tp := &corev1.Pod{}
	for i := range 20 {
		typ := corev1.PodConditionType(fmt.Sprintf("example.com/gate-%d", i))
		tp.Spec.ReadinessGates = append(tp.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: typ})
		c := cond(typ, corev1.ConditionTrue, 1)
		c.Reason, c.Message = strings.Repeat("r", 5000), strings.Repeat("é", 5000)
		tp.Status.Conditions = append(tp.Status.Conditions, c)
	}
	sp := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{cond("super.example/injected", corev1.ConditionTrue, 1)}}}
	patch, err := TenantConditionsPatch(tp, sp)
	if err != nil || patch == nil {
		t.Fatalf("patch = %s, %v", patch, err)
	}
	if len(patch) > maxCopiedConditions*(maxConditionReason+maxConditionMessage+200) {
		t.Errorf("patch of %d bytes", len(patch))
	}
	patched := applyPatch(t, sp, patch)
	if n := len(patched.Status.Conditions); n != maxCopiedConditions+1 {
		t.Errorf("%d conditions in the super Pod, want %d gates and the super one", n, maxCopiedConditions)
	}
	for _, c := range patched.Status.Conditions {
		if len(c.Reason) > maxConditionReason || len(c.Message) > maxConditionMessage || !utf8.ValidString(c.Message) {
			t.Errorf("condition %s: reason %d bytes, message %d bytes (valid UTF-8 %v)", c.Type, len(c.Reason), len(c.Message), utf8.ValidString(c.Message))
		}
	}
	if findCondition(patched.Status.Conditions, "super.example/injected") == nil {
		t.Error("the syncer deleted a super-side condition the tenant Pod does not declare")
	}
	if again, _ := TenantConditionsPatch(tp, &patched); again != nil {
		t.Errorf("second patch = %s, want none (cut values compare equal)", again)
	}
	if !tenantConditionsInSync(tp, &patched) {
		t.Error("tenantConditionsInSync false after the patch: remediation would loop")
	}
}

// A tenant Pod whose super Pod was lost looks like a Pod its kubelet failed: every container
// terminated with exit code 137 (the kubelet's code for a container it cannot locate), none
// ready or started, Ready and ContainersReady False, DisruptionTarget True.
func TestLostStatus(t *testing.T) {
	now := at(100)
	started := at(20)
	p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		cond(corev1.PodScheduled, corev1.ConditionTrue, 1), cond(corev1.PodReady, corev1.ConditionTrue, 20),
		cond(corev1.ContainersReady, corev1.ConditionTrue, 20), cond(gate, corev1.ConditionTrue, 21)},
		InitContainerStatuses: []corev1.ContainerStatus{
			{Name: "init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
			{Name: "sidecar", Ready: true, Started: ptrTo(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", Ready: true, Started: ptrTo(true), RestartCount: 2, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}},
			{Name: "waiting", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}}
	st := lostStatus(p, now)
	if st.Phase != corev1.PodFailed || st.Reason != ReasonSuperPodLost {
		t.Errorf("phase %s reason %q", st.Phase, st.Reason)
	}
	check := func(cs corev1.ContainerStatus, wantReason string, wantCode int32) {
		t.Helper()
		term := cs.State.Terminated
		if term == nil || cs.State.Running != nil || cs.State.Waiting != nil {
			t.Fatalf("container %s state %+v, want terminated only", cs.Name, cs.State)
		}
		if term.Reason != wantReason || term.ExitCode != wantCode || cs.Ready || (cs.Started != nil && *cs.Started) {
			t.Errorf("container %s: %+v ready %v started %v", cs.Name, term, cs.Ready, cs.Started)
		}
	}
	check(st.InitContainerStatuses[0], "Completed", 0) // already terminated: kept
	check(st.InitContainerStatuses[1], ReasonSuperPodLost, 137)
	check(st.ContainerStatuses[0], ReasonSuperPodLost, 137)
	check(st.ContainerStatuses[1], ReasonSuperPodLost, 137)
	if !st.ContainerStatuses[0].State.Terminated.StartedAt.Equal(&started) || st.ContainerStatuses[0].RestartCount != 2 {
		t.Errorf("app: %+v", st.ContainerStatuses[0])
	}
	for typ, want := range map[corev1.PodConditionType]corev1.ConditionStatus{corev1.PodReady: corev1.ConditionFalse,
		corev1.ContainersReady: corev1.ConditionFalse, corev1.DisruptionTarget: corev1.ConditionTrue,
		corev1.PodScheduled: corev1.ConditionTrue, gate: corev1.ConditionTrue} {
		c := findCondition(st.Conditions, typ)
		if c == nil || c.Status != want {
			t.Errorf("condition %s = %+v, want %s", typ, c, want)
			continue
		}
		if (typ == corev1.PodReady || typ == corev1.DisruptionTarget) && (c.Reason != ReasonSuperPodLost || !c.LastTransitionTime.Equal(&now)) {
			t.Errorf("condition %s = %+v", typ, c)
		}
	}
	if p.Status.Phase != corev1.PodRunning || p.Status.ContainerStatuses[0].State.Running == nil {
		t.Error("lostStatus changed its input")
	}
}

// applyPatch returns Pod p with the strategic merge patch applied, as the apiserver applies a
// PATCH of pods/status; an error fails t.
func applyPatch(t *testing.T, p *corev1.Pod, patch []byte) corev1.Pod {
	t.Helper()
	orig, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	out, err := strategicpatch.StrategicMergePatch(orig, patch, &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var patched corev1.Pod
	if err := json.Unmarshal(out, &patched); err != nil {
		t.Fatal(err)
	}
	return patched
}

// A tenant Pod's status change goes downward only when it changes a tenant-owned condition.
func TestTenantConditionsChanged(t *testing.T) {
	base := &corev1.Pod{Spec: corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	undeclared := base.DeepCopy()
	undeclared.Status.Conditions = append(undeclared.Status.Conditions, corev1.PodCondition{Type: "example.com/other", Status: corev1.ConditionTrue})
	if TenantConditionsChanged(base, undeclared) {
		t.Error("a condition that is no readiness gate counts (it is never copied down)")
	}
	gate := base.DeepCopy()
	gate.Status.Conditions = append(gate.Status.Conditions, corev1.PodCondition{Type: "example.com/ready", Status: corev1.ConditionTrue})
	kubelet := base.DeepCopy()
	kubelet.Status.Conditions[0].Status = corev1.ConditionFalse
	if !TenantConditionsChanged(base, gate) {
		t.Error("a new gate condition does not count")
	}
	if TenantConditionsChanged(base, kubelet) {
		t.Error("a kubelet condition change counts")
	}
}
