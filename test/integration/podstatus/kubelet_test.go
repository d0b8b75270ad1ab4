package podstatus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/test/integration/itest"
)

// simNode is the super Node the simulated kubelet runs: not managed by kwok (no
// kwok.x-k8s.io/node annotation), so the Pods on it get their status from simKubelet only.
// Test Pods reach it through its zone label, a key the built-in tenant policy allows.
const (
	simNode = "sim-kubelet"
	simZone = "sim"
	simIP   = "10.201.0.1"
)

// simKubelet plays the kubelet of simNode: it keeps the Node's Lease renewed (so the super
// node-lifecycle controller keeps it Ready and untainted) and writes the status of every Pod
// bound to it, as a kubelet does: Running, containers running and ready, ContainersReady True,
// Ready True only when every readiness gate of the Pod's spec is True in the super Pod's own
// status (the gates are written by others: here, the syncer's copy of the tenant's conditions),
// the restart count the test sets. Like the kubelet (mergePodStatus), it writes only its own
// condition types and leaves the others alone. Pods being deleted are removed at once.
type simKubelet struct {
	cs       kubernetes.Interface
	mu       sync.Mutex
	restarts map[types.UID]int32
	writes   map[types.UID]int
}

// startSimKubelet creates simNode, waits until the super cluster considers it Ready and
// schedulable, and runs the kubelet loop until the test ends.
func startSimKubelet(t *testing.T, cs kubernetes.Interface) *simKubelet {
	t.Helper()
	ctx := t.Context()
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: simNode, Labels: map[string]string{
		corev1.LabelHostname: simNode, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64", corev1.LabelTopologyZone: simZone}}}
	itest.Created(t)(cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}))
	k := &simKubelet{cs: cs, restarts: map[types.UID]int32{}, writes: map[types.UID]int{}}
	heartbeat := func(ctx context.Context) error {
		n, err := cs.CoreV1().Nodes().Get(ctx, simNode, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		n.Status.Capacity, n.Status.Allocatable = res, res
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: simIP}, {Type: corev1.NodeHostName, Address: simNode}}
		n.Status.NodeInfo.KubeletVersion = "v1.37.2-sim"
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: n.CreationTimestamp}}
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			return err
		}
		l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, simNode, metav1.GetOptions{})
		dur := int32(40)
		micro := metav1.NewMicroTime(time.Now())
		holder := simNode
		if err != nil {
			_, err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: simNode},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &micro}}, metav1.CreateOptions{})
			return err
		}
		l.Spec.RenewTime = &micro
		_, err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{})
		return err
	}
	itest.Eventually(t, time.Minute, "sim Node heartbeat", heartbeat)
	itest.Eventually(t, time.Minute, "sim Node Ready without taints", func(ctx context.Context) error {
		n, err := cs.CoreV1().Nodes().Get(ctx, simNode, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(n.Spec.Taints) > 0 {
			return fmt.Errorf("taints %v", n.Spec.Taints)
		}
		return nil
	})
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		beat := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if time.Since(beat) > 5*time.Second {
				if heartbeat(ctx) == nil {
					beat = time.Now()
				}
			}
			pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + simNode})
			if err != nil {
				continue
			}
			for i := range pods.Items {
				k.sync(ctx, &pods.Items[i])
			}
		}
	}()
	return k
}

// setRestarts sets the restart count the kubelet reports for super Pod uid.
func (k *simKubelet) setRestarts(uid types.UID, n int32) {
	k.mu.Lock()
	k.restarts[uid] = n
	k.mu.Unlock()
}

// sync writes the status of super Pod p when it differs from what the kubelet reports.
func (k *simKubelet) sync(ctx context.Context, p *corev1.Pod) {
	if p.DeletionTimestamp != nil {
		zero := int64(0)
		_ = k.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		return
	}
	k.mu.Lock()
	restarts := k.restarts[p.UID]
	k.mu.Unlock()
	ready := corev1.ConditionTrue
	for _, g := range p.Spec.ReadinessGates {
		if c := condition(p.Status.Conditions, g.ConditionType); c == nil || c.Status != corev1.ConditionTrue {
			ready = corev1.ConditionFalse
		}
	}
	if c := condition(p.Status.Conditions, corev1.PodReady); p.Status.Phase == corev1.PodRunning && c != nil && c.Status == ready &&
		len(p.Status.ContainerStatuses) == len(p.Spec.Containers) && p.Status.ContainerStatuses[0].RestartCount == restarts {
		return
	}
	now := metav1.Now()
	conds := []corev1.PodCondition{}
	for typ, st := range map[corev1.PodConditionType]corev1.ConditionStatus{corev1.PodReadyToStartContainers: corev1.ConditionTrue,
		corev1.PodInitialized: corev1.ConditionTrue, corev1.ContainersReady: corev1.ConditionTrue, corev1.PodReady: ready} {
		c := corev1.PodCondition{Type: typ, Status: st, LastTransitionTime: now}
		if old := condition(p.Status.Conditions, typ); old != nil && old.Status == st {
			c.LastTransitionTime = old.LastTransitionTime
		}
		if typ == corev1.PodReady && st == corev1.ConditionFalse {
			c.Reason = "ReadinessGatesNotReady"
			c.Message = "corresponding condition of pod readiness gate is not true"
		}
		conds = append(conds, c)
	}
	var statuses []corev1.ContainerStatus
	started := true
	for _, c := range p.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "sim://" + c.Image, ContainerID: fmt.Sprintf("sim://%s-%s-%d", p.UID, c.Name, restarts),
			Ready: true, Started: &started, RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}
		if restarts > 0 {
			cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: now}}
		}
		statuses = append(statuses, cs)
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(p.UID))
	podIP := fmt.Sprintf("10.245.%d.%d", h.Sum32()%250, 1+h.Sum32()/250%250)
	start := p.Status.StartTime
	if start == nil {
		start = &now
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{
		"phase": corev1.PodRunning, "conditions": conds, "containerStatuses": statuses, "hostIP": simIP,
		"hostIPs": []corev1.HostIP{{IP: simIP}}, "podIP": podIP, "podIPs": []corev1.PodIP{{IP: podIP}}, "startTime": start}})
	if _, err := k.cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err == nil {
		k.mu.Lock()
		k.writes[p.UID]++
		k.mu.Unlock()
	}
}

func condition(cs []corev1.PodCondition, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}
