package policy

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The super copy of a budget is never relaxed below what the tenant's budget computes: a
// budget short of Pods or allowing no disruption holds super drains as it holds the tenant's.
func TestSuperBudget(t *testing.T) {
	val := func(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }
	current := func(desired, expected int32) policyv1.PodDisruptionBudgetStatus {
		return policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DesiredHealthy: desired, ExpectedPods: expected}
	}
	stale := func(expected int32) policyv1.PodDisruptionBudgetStatus {
		return policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 0, DesiredHealthy: 1000, ExpectedPods: expected}
	}
	ifHealthy := policyv1.IfHealthyBudget
	for name, tc := range map[string]struct {
		spec         policyv1.PodDisruptionBudgetSpec
		status       policyv1.PodDisruptionBudgetStatus
		pods         int32
		wantMin      int32
		wantEviction policyv1.UnhealthyPodEvictionPolicyType
	}{
		// The tenant's desiredHealthy, computed with the tenant's controllers (5 replicas).
		"maxUnavailable 1 of 5":               {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1")}, status: current(4, 5), pods: 5, wantMin: 4},
		"one Pod short: not relaxed":          {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1")}, status: current(4, 5), pods: 4, wantMin: 4},
		"maxUnavailable 0: not relaxed":       {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("0")}, status: current(5, 5), pods: 5, wantMin: 5},
		"maxUnavailable 25%, stale status":    {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("25%")}, pods: 5, wantMin: 3},
		"stale status keeps its Pod count":    {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1")}, status: stale(3), pods: 2, wantMin: 2},
		"stale status, more Pods now":         {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1")}, status: stale(3), pods: 5, wantMin: 4},
		"minAvailable 50%, stale status":      {spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: val("50%")}, pods: 5, wantMin: 3},
		"minAvailable int ignores status":     {spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: val("2")}, status: current(9, 5), pods: 5, wantMin: 2},
		"minAvailable above the Pods":         {spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: val("7")}, pods: 5, wantMin: 7},
		"neither field":                       {spec: policyv1.PodDisruptionBudgetSpec{}, pods: 2, wantMin: 2},
		"no Pods":                             {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("0")}, pods: 0, wantMin: 0},
		"negative status":                     {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1")}, status: current(-3, 2), pods: 2, wantMin: 0},
		"the tenant's IfHealthyBudget stands": {spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: val("1"), UnhealthyPodEvictionPolicy: &ifHealthy}, status: current(2, 3), pods: 3, wantMin: 2, wantEviction: ifHealthy},
	} {
		t.Run(name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", Generation: 1}, Spec: tc.spec, Status: tc.status}
			pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
			got, _ := SuperBudget(pdb, tc.pods, DrainHold{})
			if got.MaxUnavailable != nil || got.MinAvailable == nil || got.MinAvailable.Type != intstr.Int || got.MinAvailable.IntVal != tc.wantMin {
				t.Errorf("minAvailable %v maxUnavailable %v, want minAvailable %d", got.MinAvailable, got.MaxUnavailable, tc.wantMin)
			}
			if got.Selector == pdb.Spec.Selector || got.Selector.MatchLabels["app"] != "db" {
				t.Error("selector not copied (or shared)")
			}
			want := tc.wantEviction
			if want == "" {
				want = policyv1.AlwaysAllow
			}
			if got.UnhealthyPodEvictionPolicy == nil || *got.UnhealthyPodEvictionPolicy != want {
				t.Errorf("unhealthyPodEvictionPolicy %v, want %s", got.UnhealthyPodEvictionPolicy, want)
			}
			if pdb.Spec.UnhealthyPodEvictionPolicy != nil && got.UnhealthyPodEvictionPolicy == pdb.Spec.UnhealthyPodEvictionPolicy {
				t.Error("unhealthyPodEvictionPolicy shared with the tenant's budget")
			}
		})
	}
}

// A second budget over a Pod another (older) budget selects is refused; the older one is not.
func TestSecondBudget(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	budget := func(name string, created metav1.Time, sel *metav1.LabelSelector) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: k8stypes.UID("uid-" + name), CreationTimestamp: created},
			Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}}
	}
	match := func(kv ...string) *metav1.LabelSelector {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return &metav1.LabelSelector{MatchLabels: m}
	}
	pod := func(name string, kv ...string) metav1.Object {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{}}}
		for i := 0; i < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
		return p
	}
	pods := []metav1.Object{pod("db-0", "app", "db", "role", "primary"), pod("db-1", "app", "db"), pod("web-0", "app", "web")}
	deleting := budget("gone", t0, match("app", "db"))
	deleting.DeletionTimestamp = &t1
	for name, tc := range map[string]struct {
		pdb    *policyv1.PodDisruptionBudget
		others []*policyv1.PodDisruptionBudget
		want   string // "" = not refused; else the older budget named
	}{
		"alone":                      {pdb: budget("db", t0, match("app", "db"))},
		"younger over the same Pods": {pdb: budget("db2", t1, match("app", "db")), others: []*policyv1.PodDisruptionBudget{budget("db", t0, match("app", "db"))}, want: "db"},
		"older one stays":            {pdb: budget("db", t0, match("app", "db")), others: []*policyv1.PodDisruptionBudget{budget("db2", t1, match("app", "db"))}},
		"one Pod in common":          {pdb: budget("primary", t1, match("role", "primary")), others: []*policyv1.PodDisruptionBudget{budget("db", t0, match("app", "db"))}, want: "db"},
		"disjoint":                   {pdb: budget("web", t1, match("app", "web")), others: []*policyv1.PodDisruptionBudget{budget("db", t0, match("app", "db"))}},
		"same second: by name":       {pdb: budget("b", t0, match("app", "db")), others: []*policyv1.PodDisruptionBudget{budget("a", t0, match("app", "db"))}, want: "a"},
		"empty selector selects all": {pdb: budget("all", t1, &metav1.LabelSelector{}), others: []*policyv1.PodDisruptionBudget{budget("web", t0, match("app", "web"))}, want: "web"},
		"nil selector selects none":  {pdb: budget("none", t1, nil), others: []*policyv1.PodDisruptionBudget{budget("db", t0, match("app", "db"))}},
		"older one being deleted":    {pdb: budget("db", t1, match("app", "db")), others: []*policyv1.PodDisruptionBudget{deleting}},
		"no Pods: nothing in common": {pdb: budget("x", t1, match("app", "none")), others: []*policyv1.PodDisruptionBudget{budget("y", t0, match("app", "none"))}},
	} {
		t.Run(name, func(t *testing.T) {
			others := append([]*policyv1.PodDisruptionBudget{tc.pdb}, tc.others...) // itself is skipped
			over, d := SecondBudget(tc.pdb, others, pods)
			if over != tc.want {
				t.Errorf("over %q, want %q", over, tc.want)
			}
			switch {
			case tc.want == "" && d != nil:
				t.Errorf("refused: %v", d)
			case tc.want != "" && (d == nil || d.Rule != RuleDisruptionBudget || !strings.Contains(d.Message, "PodDisruptionBudget "+tc.want+" (older)")):
				t.Errorf("denial %v, want a refusal naming %s", d, tc.want)
			}
		})
	}
}

// disruptionBudgets.maxBlockingSeconds: a super copy that has allowed no disruption for longer
// than the bound while a drain waits allows one; otherwise (off, not yet, no drain, the one
// disruption used) it protects as the tenant's budget does.
func TestSuperBudgetDrainBound(t *testing.T) {
	now := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	zero := intstr.FromString("0")
	tenant := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DesiredHealthy: 3, ExpectedPods: 3},
	}
	super := func(minAvailable int32, allowed metav1.ConditionStatus, since time.Duration, healthy int32) *policyv1.PodDisruptionBudget {
		m := intstr.FromInt32(minAvailable)
		s := &policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &m}}
		s.Status.CurrentHealthy = healthy
		if allowed == metav1.ConditionTrue {
			s.Status.DisruptionsAllowed = max(healthy-minAvailable, 0)
		}
		if allowed != "" {
			s.Status.Conditions = []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: allowed, LastTransitionTime: metav1.NewTime(now.Add(-since))}}
		}
		return s
	}
	bound := 10 * time.Second
	for name, tc := range map[string]struct {
		hold       DrainHold
		wantMin    int32
		wantReport bool
		wantWait   bool
	}{
		"off":                           {hold: DrainHold{Now: now, Super: super(3, metav1.ConditionFalse, time.Hour, 3), Draining: true}, wantMin: 3},
		"no super copy yet":             {hold: DrainHold{Bound: bound, Now: now, Draining: true}, wantMin: 3},
		"no status yet":                 {hold: DrainHold{Bound: bound, Now: now, Super: super(3, "", 0, 3), Draining: true}, wantMin: 3, wantWait: true},
		"held, no drain":                {hold: DrainHold{Bound: bound, Now: now, Super: super(3, metav1.ConditionFalse, time.Hour, 3)}, wantMin: 3, wantWait: true},
		"held by a drain, not yet":      {hold: DrainHold{Bound: bound, Now: now, Super: super(3, metav1.ConditionFalse, 4*time.Second, 3), Draining: true}, wantMin: 3, wantWait: true},
		"held by a drain past it":       {hold: DrainHold{Bound: bound, Now: now, Super: super(3, metav1.ConditionFalse, 11*time.Second, 3), Draining: true}, wantMin: 2, wantReport: true, wantWait: true},
		"relaxed, status not yet":       {hold: DrainHold{Bound: bound, Now: now, Super: super(2, metav1.ConditionFalse, 11*time.Second, 3), Draining: true}, wantMin: 2, wantWait: true},
		"relaxed, disruption unused":    {hold: DrainHold{Bound: bound, Now: now, Super: super(2, metav1.ConditionTrue, time.Second, 3), Draining: true}, wantMin: 2, wantWait: true},
		"relaxed, drain over":           {hold: DrainHold{Bound: bound, Now: now, Super: super(2, metav1.ConditionTrue, time.Second, 3)}, wantMin: 3},
		"disruption used: bound again":  {hold: DrainHold{Bound: bound, Now: now, Super: super(2, metav1.ConditionFalse, time.Second, 2), Draining: true}, wantMin: 3, wantWait: true},
		"one Pod left, past it":         {hold: DrainHold{Bound: bound, Now: now, Super: super(3, metav1.ConditionFalse, time.Minute, 1), Draining: true}, wantMin: 0, wantReport: true, wantWait: true},
		"no healthy Pod to let go":      {hold: DrainHold{Bound: bound, Now: now, Super: super(3, metav1.ConditionFalse, time.Minute, 0), Draining: true}, wantMin: 0, wantReport: true, wantWait: true},
		"protecting budget that allows": {hold: DrainHold{Bound: bound, Now: now, Super: super(3, metav1.ConditionTrue, time.Minute, 4), Draining: true}, wantMin: 3},
	} {
		t.Run(name, func(t *testing.T) {
			spec, h := SuperBudget(tenant, 3, tc.hold)
			if spec.MinAvailable == nil || spec.MinAvailable.IntVal != tc.wantMin || h.MinAvailable != tc.wantMin {
				t.Errorf("minAvailable %v (held %d), want %d", spec.MinAvailable, h.MinAvailable, tc.wantMin)
			}
			if h.Relaxed != (tc.wantMin < 3) || h.Report != tc.wantReport || (h.Wait > 0) != tc.wantWait {
				t.Errorf("held %+v, want relaxed %v report %v wait %v", h, tc.wantMin < 3, tc.wantReport, tc.wantWait)
			}
			if tc.wantReport && !h.Since.Equal(tc.hold.Super.Status.Conditions[0].LastTransitionTime.Time) {
				t.Errorf("since %v, want the condition's lastTransitionTime", h.Since)
			}
			if name == "held by a drain, not yet" && (h.Wait < 6*time.Second || h.Wait > 7*time.Second) {
				t.Errorf("wait %v, want the 6s left", h.Wait)
			}
		})
	}
}

func TestSelectorNotCopied(t *testing.T) {
	// copied: plain keys and example.com/ are copied; tenancy.vcsyncer.io/ is the syncer's own.
	copied := func(k string) bool {
		return !strings.HasPrefix(k, "tenancy.vcsyncer.io/") && KeyAllowed([]string{"", "example.com/"}, k)
	}
	for _, tc := range []struct {
		name   string
		sel    *metav1.LabelSelector
		refuse bool
	}{
		{"no selector", nil, false},
		{"copied keys", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a", "example.com/tier": "db"}}, false},
		{"matchLabels on the syncer's key", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a", "tenancy.vcsyncer.io/managed-by": "vc-syncer"}}, true},
		{"Exists on the syncer's key", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tenancy.vcsyncer.io/tenant-uid", Operator: metav1.LabelSelectorOpExists}}}, true},
		{"DoesNotExist on a dropped key", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "other.io/x", Operator: metav1.LabelSelectorOpDoesNotExist}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: tc.sel}}
			d := SelectorNotCopied(pdb, copied)
			if (d != nil) != tc.refuse {
				t.Fatalf("SelectorNotCopied = %v, want refused %v", d, tc.refuse)
			}
			if d != nil && d.Rule != RuleDisruptionBudget {
				t.Fatalf("rule %s, want %s", d.Rule, RuleDisruptionBudget)
			}
		})
	}
}
