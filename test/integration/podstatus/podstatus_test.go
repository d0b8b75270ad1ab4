package podstatus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const (
	gate       corev1.PodConditionType = "example.com/ready"
	tenantOnly corev1.PodConditionType = "example.com/tenant-only"
	ns                                 = "app"
	kwokZone                           = "kwok"
)

// The reasons the syncer writes (pkg/resources/pod).
const (
	reasonSuperPodLost         = "SuperPodLost"
	reasonSuperClusterRejected = "SuperClusterRejected"
)

// remediationInterval is short so that the refusal checks see several scans.
const remediationInterval = 2 * time.Second

func TestPodStatus(t *testing.T) {
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 1}, 1)
	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) { o.RemediationInterval = remediationInterval })
	tc := env.Tenants[0]
	ctx := t.Context()
	if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
		t.Fatal(err)
	}
	itest.WaitRunning(t, c, tc.Name)
	superNS := conversion.SuperNamespace(tc.Name, itest.TenantUID(t, c, tc.Name), ns)
	itest.MustCreateNS(t, tc.Client, ns)
	// The kwok Node gets a zone of its own, so that a test Pod picks kwok or the simulated
	// kubelet by its nodeSelector (a key the built-in policy allows).
	label, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{corev1.LabelTopologyZone: kwokZone}}})
	itest.Created(t)(env.Super.Client.CoreV1().Nodes().Patch(ctx, localcluster.FakeNodeName(0), types.StrategicMergePatchType, label, metav1.PatchOptions{}))
	kubelet := startSimKubelet(t, env.Super.Client)
	s := &suite{tenant: tc.Client, super: env.Super.Client, superNS: superNS, kubelet: kubelet}

	t.Run("gate set in the tenant reaches the super Pod and the Pod becomes Ready", s.gateReachesSuper)
	t.Run("super changes reach the tenant, tenant conditions survive ten copies", s.tenantConditionsSurvive)
	t.Run("gate newer than the super Pod's (kwok) does not stop the upward copy", s.newerGateOnKwok)
	t.Run("lost Pod looks dead", s.lostPod)
	t.Run("Pod Security refusal shows as PodScheduled=False, once", s.podSecurityRefusal)
}

type suite struct {
	tenant, super kubernetes.Interface
	superNS       string
	kubelet       *simKubelet
}

func testPod(name string, onSim bool, gates ...corev1.PodConditionType) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
	zone := kwokZone
	if onSim {
		zone = simZone
	}
	p.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: zone}
	for _, g := range gates {
		p.Spec.ReadinessGates = append(p.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: g})
	}
	return p
}

// setTenantCondition writes condition typ=status into the tenant Pod's status, as a tenant-side
// controller (a load-balancer controller setting its readiness gate) does: a strategic-merge
// patch of pods/status, lastTransitionTime now.
func (s *suite) setTenantCondition(t *testing.T, name string, typ corev1.PodConditionType, status corev1.ConditionStatus) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{
		Type: typ, Status: status, Reason: "SetByTenant", Message: "written in the tenant", LastTransitionTime: metav1.Now()}}}})
	if _, err := s.tenant.CoreV1().Pods(ns).Patch(t.Context(), name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}

func (s *suite) waitTenant(t *testing.T, name, what string, check func(p *corev1.Pod) error) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	itest.Eventually(t, time.Minute, what, func(ctx context.Context) error {
		p, err := s.tenant.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		last = p
		return check(p)
	})
	return last
}

func (s *suite) waitSuper(t *testing.T, name, what string, check func(p *corev1.Pod) error) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	itest.Eventually(t, time.Minute, what, func(ctx context.Context) error {
		p, err := s.super.CoreV1().Pods(s.superNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		last = p
		return check(p)
	})
	return last
}

func hasCondition(p *corev1.Pod, typ corev1.PodConditionType, status corev1.ConditionStatus) error {
	c := condition(p.Status.Conditions, typ)
	if c == nil || c.Status != status {
		return fmt.Errorf("condition %s = %+v, want %s (conditions %+v)", typ, c, status, p.Status.Conditions)
	}
	return nil
}

func (s *suite) gateReachesSuper(t *testing.T) {
	itest.Created(t)(s.tenant.CoreV1().Pods(ns).Create(t.Context(), testPod("gated", true, gate), metav1.CreateOptions{}))
	s.waitTenant(t, "gated", "gated Pod Running, not Ready (gate unset)", func(p *corev1.Pod) error {
		if p.Spec.NodeName != simNode || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 {
			return fmt.Errorf("node %q phase %s containers %d", p.Spec.NodeName, p.Status.Phase, len(p.Status.ContainerStatuses))
		}
		return hasCondition(p, corev1.PodReady, corev1.ConditionFalse)
	})
	s.setTenantCondition(t, "gated", gate, corev1.ConditionTrue)
	s.waitSuper(t, "gated", "the tenant's gate in the super Pod's status", func(p *corev1.Pod) error {
		c := condition(p.Status.Conditions, gate)
		if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "SetByTenant" {
			return fmt.Errorf("super gate condition %+v", c)
		}
		return hasCondition(p, corev1.PodReady, corev1.ConditionTrue) // the kubelet saw it
	})
	s.waitTenant(t, "gated", "tenant Pod Ready with its gate kept", func(p *corev1.Pod) error {
		if err := hasCondition(p, corev1.PodReady, corev1.ConditionTrue); err != nil {
			return err
		}
		return hasCondition(p, gate, corev1.ConditionTrue)
	})
	// The tenant withdraws its gate: the super Pod follows, and so does Ready.
	s.setTenantCondition(t, "gated", gate, corev1.ConditionFalse)
	s.waitTenant(t, "gated", "tenant Pod not Ready once its gate is False", func(p *corev1.Pod) error {
		if err := hasCondition(p, gate, corev1.ConditionFalse); err != nil {
			return err
		}
		return hasCondition(p, corev1.PodReady, corev1.ConditionFalse)
	})
	s.setTenantCondition(t, "gated", gate, corev1.ConditionTrue)
	s.waitTenant(t, "gated", "tenant Pod Ready again", func(p *corev1.Pod) error { return hasCondition(p, corev1.PodReady, corev1.ConditionTrue) })
}

func (s *suite) tenantConditionsSurvive(t *testing.T) {
	s.setTenantCondition(t, "gated", tenantOnly, corev1.ConditionTrue)
	sp := s.waitSuper(t, "gated", "gate copied down", func(p *corev1.Pod) error { return hasCondition(p, gate, corev1.ConditionTrue) })
	for i := int32(1); i <= 10; i++ {
		s.kubelet.setRestarts(sp.UID, i)
		s.waitTenant(t, "gated", fmt.Sprintf("restart %d copied up with the tenant's conditions", i), func(p *corev1.Pod) error {
			if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount != i {
				return fmt.Errorf("container statuses %+v", p.Status.ContainerStatuses)
			}
			cs := p.Status.ContainerStatuses[0]
			if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.Reason != "Error" ||
				cs.ContainerID != fmt.Sprintf("sim://%s-app-%d", sp.UID, i) {
				return fmt.Errorf("container state not the super Pod's: %+v", cs)
			}
			for _, typ := range []corev1.PodConditionType{tenantOnly, gate, corev1.PodReady} {
				if err := hasCondition(p, typ, corev1.ConditionTrue); err != nil {
					return err
				}
			}
			return nil
		})
	}
	// Only declared readiness gates go into super Pod statuses.
	live, err := s.super.CoreV1().Pods(s.superNS).Get(t.Context(), "gated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hasCondition(live, tenantOnly, corev1.ConditionTrue) == nil {
		t.Errorf("the tenant condition %s, which is no readiness gate, was copied into the super Pod", tenantOnly)
	}
}

// kwok sets every readiness gate True in the super Pod when it starts it: a gate the tenant
// writes later is newer than that, which must not read as "super cache behind".
func (s *suite) newerGateOnKwok(t *testing.T) {
	itest.Created(t)(s.tenant.CoreV1().Pods(ns).Create(t.Context(), testPod("kwok-gated", false, gate), metav1.CreateOptions{}))
	sp := s.waitSuper(t, "kwok-gated", "kwok ran the Pod", func(p *corev1.Pod) error { return hasCondition(p, corev1.PodReady, corev1.ConditionTrue) })
	s.waitTenant(t, "kwok-gated", "tenant Pod Running", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	time.Sleep(1100 * time.Millisecond) // lastTransitionTime has seconds: the tenant's gate is later
	s.setTenantCondition(t, "kwok-gated", gate, corev1.ConditionTrue)
	// The kubelet's part (kwok is done with a Running Pod): a container restart.
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"containerStatuses": []corev1.ContainerStatus{{
		Name: "app", Image: sp.Spec.Containers[0].Image, Ready: true, RestartCount: 4,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}})
	itest.Created(t)(s.super.CoreV1().Pods(s.superNS).Patch(t.Context(), "kwok-gated", types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"))
	s.waitTenant(t, "kwok-gated", "restart count copied up", func(p *corev1.Pod) error {
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].RestartCount != 4 {
			return fmt.Errorf("container statuses %+v", p.Status.ContainerStatuses)
		}
		c := condition(p.Status.Conditions, gate)
		if c == nil || c.Reason != "SetByTenant" {
			return fmt.Errorf("tenant gate %+v, want the tenant's", c)
		}
		return nil
	})
}

func (s *suite) lostPod(t *testing.T) {
	itest.Created(t)(s.tenant.CoreV1().Pods(ns).Create(t.Context(), testPod("lost", false), metav1.CreateOptions{}))
	s.waitTenant(t, "lost", "Pod Running and Ready", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return hasCondition(p, corev1.PodReady, corev1.ConditionTrue)
	})
	if got := getPodsRow(t, s.tenant, "lost"); got[1] != "1/1" {
		t.Fatalf("kubectl get pods row %v before the loss, want 1/1", got)
	}
	zero := int64(0)
	if err := s.super.CoreV1().Pods(s.superNS).Delete(t.Context(), "lost", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	s.waitTenant(t, "lost", "lost Pod Failed with dead containers", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodFailed || p.Status.Reason != reasonSuperPodLost {
			return fmt.Errorf("phase %s reason %q", p.Status.Phase, p.Status.Reason)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Ready || cs.State.Running != nil || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 137 {
				return fmt.Errorf("container %s: ready %v state %+v", cs.Name, cs.Ready, cs.State)
			}
		}
		for _, typ := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
			if err := hasCondition(p, typ, corev1.ConditionFalse); err != nil {
				return err
			}
		}
		return hasCondition(p, corev1.DisruptionTarget, corev1.ConditionTrue)
	})
	if got := getPodsRow(t, s.tenant, "lost"); got[1] != "0/1" || got[2] != reasonSuperPodLost {
		t.Errorf("kubectl get pods row %v, want READY 0/1 STATUS %s", got, reasonSuperPodLost)
	}
}

// getPodsRow returns the cells (NAME, READY, STATUS, RESTARTS, AGE, ...) of Pod name's row as
// `kubectl get pods` prints it: the tenant apiserver's Table (the same printer).
func getPodsRow(t *testing.T, cs kubernetes.Interface, name string) []string {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").Name(name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil || len(table.Rows) != 1 {
		t.Fatalf("table %s: %v", raw, err)
	}
	var out []string
	for _, cell := range table.Rows[0].Cells {
		out = append(out, fmt.Sprint(cell))
	}
	return out
}

func (s *suite) podSecurityRefusal(t *testing.T) {
	p := testPod("privileged", false)
	yes := true
	p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes}
	itest.Created(t)(s.tenant.CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}))
	refused := s.waitTenant(t, "privileged", "PodScheduled=False reason SuperClusterRejected", func(p *corev1.Pod) error {
		c := condition(p.Status.Conditions, corev1.PodScheduled)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != reasonSuperClusterRejected || !strings.Contains(c.Message, "violates PodSecurity") {
			return fmt.Errorf("PodScheduled %+v", c)
		}
		return nil
	})
	attempts := func(ctx context.Context) (int32, error) {
		evs, err := s.tenant.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=privileged"})
		if err != nil {
			return 0, err
		}
		var n int32
		for _, e := range evs.Items {
			if e.Reason == reasonSuperClusterRejected {
				n += max(e.Count, 1)
			}
		}
		return n, nil
	}
	itest.Eventually(t, time.Minute, "one SuperClusterRejected Event", func(ctx context.Context) error {
		if n, err := attempts(ctx); err != nil || n != 1 {
			return fmt.Errorf("%d SuperClusterRejected Events (%w)", n, err)
		}
		return nil
	})
	// Several remediation scans later: the same version was not sent again.
	itest.Consistently(t, 5*remediationInterval, "refused Pod left alone", func(ctx context.Context) error {
		p, err := s.tenant.CoreV1().Pods(ns).Get(ctx, "privileged", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.ResourceVersion != refused.ResourceVersion {
			return fmt.Errorf("tenant Pod written again: %+v", p.Status)
		}
		if n, err := attempts(ctx); err != nil || n != 1 {
			return fmt.Errorf("%d SuperClusterRejected Events, want 1 (%w)", n, err)
		}
		return nil
	})
	// A change of the Pod is tried once more.
	patch := []byte(`{"metadata":{"labels":{"changed":"yes"}}}`)
	itest.Created(t)(s.tenant.CoreV1().Pods(ns).Patch(t.Context(), "privileged", types.MergePatchType, patch, metav1.PatchOptions{}))
	itest.Eventually(t, time.Minute, "a second attempt after the change", func(ctx context.Context) error {
		if n, err := attempts(ctx); err != nil || n != 2 {
			return fmt.Errorf("%d SuperClusterRejected Events (%w)", n, err)
		}
		return nil
	})
	if _, err := s.super.CoreV1().Pods(s.superNS).Get(t.Context(), "privileged", metav1.GetOptions{}); err == nil {
		t.Error("the privileged Pod exists in the super cluster")
	}
}
