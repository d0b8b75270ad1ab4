package isolation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// podWalls returns the attacks on scheduling terms, grace periods, ephemeral containers.
func (s *suite) podWalls() []attackCase {
	return []attackCase{
		{"podAntiAffinity-all-namespaces-blocks-scheduling", s.attackAntiAffinityAllNamespaces},
		{"podAffinity-probe-other-tenants-namespace-list", s.attackAffinityProbe(false)},
		{"podAffinity-probe-other-tenants-namespace-selector", s.attackAffinityProbe(true)},
		{"podAntiAffinity-topologyKey-not-allowed", s.attackTopologyKey},
		{"topologySpread-topologyKey-not-allowed", s.attackSpreadKey},
		{"terminationGracePeriod-of-years", s.attackGracePeriod},
		{"ephemeral-container-refused-silently", s.attackEphemeralContainer},
	}
}

// victimLabel marks the Pods the anti-affinity attack aims at: a Pod of tenant B and a Pod of
// the super cluster's own created after A's Pod is placed. (A selector matching every Pod
// would keep A's own Pod Pending wherever any Pod runs; aiming at Pods created later is what
// a hostile tenant does.)
const victimLabel = "victim-of-a"

// attackAntiAffinityAllNamespaces: tenant A's Pod with a required pod anti-affinity term over
// all namespaces (namespaceSelector {}) and a topology key every Node shares
// (kubernetes.io/os). In the super cluster it would keep every later matching Pod of every
// tenant and of the super cluster itself Pending ("didn't satisfy existing pods anti-affinity
// rules"). The syncer confines the term to A's super namespaces: B's new Pod and a Pod in the
// super cluster's default namespace must still be scheduled.
func (s *suite) attackAntiAffinityAllNamespaces(t *testing.T) {
	ctx := context.Background()
	const name, victim = "anti-affinity-everyone", "victim"
	p := basePod(name)
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector:     &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: victimLabel, Operator: metav1.LabelSelectorOpExists}}},
			NamespaceSelector: &metav1.LabelSelector{},
			TopologyKey:       corev1.LabelOSStable,
		}},
	}}
	if _, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer deletePod(s.a.Client, aNS, name)
	itest.Eventually(t, maxWait, "A's anti-affinity Pod placed in the super cluster", func(ctx context.Context) error {
		sp, err := s.super.CoreV1().Pods(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sp.Spec.NodeName == "" {
			return itest.Errorf("not bound yet (%s)", scheduledMessage(sp))
		}
		return nil
	})

	bp := basePod(victim)
	bp.Labels = map[string]string{victimLabel: "true"}
	if _, err := s.b.Client.CoreV1().Pods(bNS).Create(ctx, bp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer s.waitGone(t, s.bSuperNS, victim)
	defer deletePod(s.b.Client, bNS, victim)
	sup := basePod(victim + "-" + strings.ToLower(s.a.Name))
	sup.Labels = map[string]string{victimLabel: "true"}
	if _, err := s.super.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, sup, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer deletePod(s.super, metav1.NamespaceDefault, sup.Name)

	itest.Eventually(t, maxWait, "B's new Pod and a super-cluster Pod in default scheduled despite A's anti-affinity Pod", func(ctx context.Context) error {
		var pending []string
		for _, where := range []struct{ ns, name string }{{s.bSuperNS, victim}, {metav1.NamespaceDefault, sup.Name}} {
			sp, err := s.super.CoreV1().Pods(where.ns).Get(ctx, where.name, metav1.GetOptions{})
			if err != nil {
				pending = append(pending, fmt.Sprintf("%s/%s: %v", where.ns, where.name, err))
				continue
			}
			if sp.Spec.NodeName == "" {
				pending = append(pending, fmt.Sprintf("%s/%s Pending: %s", where.ns, where.name, scheduledMessage(sp)))
			}
		}
		if len(pending) > 0 {
			return itest.Errorf("ATTACK ESCAPED: %s", strings.Join(pending, "; "))
		}
		return nil
	})
}

// attackAffinityProbe: tenant A's Pod with a required pod affinity term aimed at B's Pod
// (label app=web) in B's super namespace — named in namespaces, or selected by the tenant UID
// label B's super namespaces carry. Placed, it would co-locate with B's Pod and prove that it
// exists. The syncer confines the term to A's super namespaces, where no Pod matches: the
// super scheduler reports A's Pod unschedulable, and it never runs.
func (s *suite) attackAffinityProbe(bySelector bool) func(t *testing.T) {
	return func(t *testing.T) {
		ctx := context.Background()
		name := "probe-b-namespaces"
		term := corev1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": bPod}},
			Namespaces:    []string{s.bSuperNS},
			TopologyKey:   corev1.LabelHostname,
		}
		if bySelector {
			name = "probe-b-selector"
			term.Namespaces = nil
			term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{conversion.LabelTenantUID: s.bUID}}
		}
		p := basePod(name)
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}}
		before := s.snapshot(t)
		if _, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer deletePod(s.a.Client, aNS, name)
		defer s.compare(t, before)
		s.settled(t, "Pod", name,
			func(ctx context.Context) error {
				sp, err := s.super.CoreV1().Pods(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				for _, c := range sp.Status.Conditions {
					if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
						return nil
					}
				}
				return itest.Errorf("super Pod not reported unschedulable (%s)", scheduledMessage(sp))
			},
			s.podEscape(name, func(sp *corev1.Pod) error {
				if sp.Spec.NodeName != "" {
					return fmt.Errorf("placed on %s by a pod affinity term aimed at tenant B's Pod", sp.Spec.NodeName)
				}
				return s.affinityOutsideA(sp)
			}))
	}
}

// affinityOutsideA returns an error when a pod (anti-)affinity term of A's super Pod sp may
// select Pods outside A's super namespaces: a namespaces entry not A's, or a namespace
// selector not confined to A's tenant UID.
func (s *suite) affinityOutsideA(sp *corev1.Pod) error {
	for _, term := range podAffinityTerms(sp.Spec.Affinity) {
		for _, ns := range term.Namespaces {
			if !s.isANS(ns, nil) {
				return fmt.Errorf("an affinity term names namespace %s", ns)
			}
		}
		if sel := term.NamespaceSelector; sel != nil {
			confined := sel.MatchLabels[conversion.LabelTenantUID] == s.aUID
			for _, r := range sel.MatchExpressions {
				confined = confined || r.Key == conversion.LabelTenantUID && r.Operator == metav1.LabelSelectorOpIn && len(r.Values) == 1 && r.Values[0] == s.aUID
			}
			if !confined {
				return fmt.Errorf("an affinity term's namespaceSelector %v is not confined to tenant A", sel)
			}
		}
	}
	return nil
}

// podAffinityTerms returns every pod affinity and anti-affinity term of a, required and
// preferred.
func podAffinityTerms(a *corev1.Affinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	var out []corev1.PodAffinityTerm
	if pa := a.PodAffinity; pa != nil {
		out = append(out, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			out = append(out, w.PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		out = append(out, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			out = append(out, w.PodAffinityTerm)
		}
	}
	return out
}

// attackTopologyKey: a required anti-affinity term on a node label key the policy does not
// allow (the key of B's dedicated Node): rule podAffinity.
func (s *suite) attackTopologyKey(t *testing.T) {
	p := basePod("anti-affinity-dedicated-key")
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"attack": "nothing"}},
			TopologyKey:   dedicated,
		}},
	}}
	s.podAttack(t, p, []string{"podAffinity"}, func(sp *corev1.Pod) error {
		for _, term := range podAffinityTerms(sp.Spec.Affinity) {
			if term.TopologyKey == dedicated {
				return fmt.Errorf("carries a pod anti-affinity term with topology key %s", dedicated)
			}
		}
		return nil
	})
}

// attackSpreadKey: a DoNotSchedule topology spread constraint on a node label key the policy
// does not allow: rule topologySpread.
func (s *suite) attackSpreadKey(t *testing.T) {
	p := basePod("spread-dedicated-key")
	p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: dedicated, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"attack": p.Name}},
	}}
	s.podAttack(t, p, []string{"topologySpread"}, func(sp *corev1.Pod) error {
		for _, c := range sp.Spec.TopologySpreadConstraints {
			if c.TopologyKey == dedicated {
				return fmt.Errorf("carries a topology spread constraint with topology key %s", dedicated)
			}
		}
		return nil
	})
}

// yearsOfGrace is a grace period of ten years.
const yearsOfGrace = int64(10 * 365 * 24 * 3600)

// builtinMaxGrace is the built-in pods.maxTerminationGracePeriodSeconds.
const builtinMaxGrace = int64(3600)

// attackGracePeriod: a Pod whose terminationGracePeriodSeconds (and preStop sleep) is ten
// years: a drain of a super Node would wait that long. The super Pod's are clamped to the
// policy's bound, and A is told (rule terminationGracePeriod).
func (s *suite) attackGracePeriod(t *testing.T) {
	p := basePod("grace-of-years")
	p.Spec.TerminationGracePeriodSeconds = ptr(yearsOfGrace)
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: yearsOfGrace}}}
	s.podAttack(t, p, []string{"terminationGracePeriod"}, func(sp *corev1.Pod) error {
		if g := sp.Spec.TerminationGracePeriodSeconds; g == nil || *g > builtinMaxGrace {
			return fmt.Errorf("terminationGracePeriodSeconds %v (bound %d)", deref(g), builtinMaxGrace)
		}
		for _, c := range sp.Spec.Containers {
			if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil && l.PreStop.Sleep.Seconds > builtinMaxGrace {
				return fmt.Errorf("container %s sleeps %ds before stopping", c.Name, l.PreStop.Sleep.Seconds)
			}
		}
		return nil
	})
}

// attackEphemeralContainer: `kubectl debug` adds an ephemeral container to A's running Pod.
// The super Pod never gets it (rule ephemeralContainer), and A is told once.
func (s *suite) attackEphemeralContainer(t *testing.T) {
	const name = "debug-me"
	s.run(t, attack{
		kind: "Pod", ns: aNS, names: []string{name}, rules: []string{"ephemeralContainer"},
		create: func(ctx context.Context) error {
			if _, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, basePod(name), metav1.CreateOptions{}); err != nil {
				return err
			}
			deadline := time.Now().Add(maxWait)
			for {
				sp, err := s.superPod(ctx, s.aSuperNS, name)
				if err != nil {
					return err
				}
				if sp != nil {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("super Pod %s/%s not created within %s", s.aSuperNS, name, maxWait)
				}
				time.Sleep(poll)
			}
			tp, err := s.a.Client.CoreV1().Pods(aNS).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			tp.Spec.EphemeralContainers = append(tp.Spec.EphemeralContainers, corev1.EphemeralContainer{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent},
			})
			_, err = s.a.Client.CoreV1().Pods(aNS).UpdateEphemeralContainers(ctx, name, tp, metav1.UpdateOptions{})
			return err
		},
		escaped: s.podEscape(name, func(sp *corev1.Pod) error {
			if len(sp.Spec.EphemeralContainers) > 0 {
				return fmt.Errorf("has ephemeral containers %v", sp.Spec.EphemeralContainers)
			}
			return nil
		}),
	})
}

// scheduledMessage renders p's PodScheduled condition.
func scheduledMessage(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return fmt.Sprintf("PodScheduled=%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "no PodScheduled condition"
}

// deletePod deletes Pod ns/name at once (grace period 0), ignoring NotFound.
func deletePod(c kubernetes.Interface, ns, name string) {
	zero := int64(0)
	ctx, cancel := context.WithTimeout(context.Background(), maxWait)
	defer cancel()
	if err := c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		fmt.Printf("deleting Pod %s/%s: %v\n", ns, name, err)
	}
}

// waitGone waits (at most maxWait) until super Pod ns/name is gone, so that the next subtest's
// snapshot does not see it go.
func (s *suite) waitGone(t *testing.T, ns, name string) {
	t.Helper()
	itest.Eventually(t, maxWait, "super Pod "+ns+"/"+name+" gone", func(ctx context.Context) error {
		if _, err := s.super.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return itest.Errorf("still there (%v)", err)
		}
		return nil
	})
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
