package policy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func podTerm(key string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, TopologyKey: key}
}

func TestCheckPodTopologyKeys(t *testing.T) {
	pinned := pods(&tenancyv1alpha1.PodPolicy{NodeSelector: map[string]string{"pool": "a"}})
	cases := map[string]struct {
		policy *tenancyv1alpha1.PodPolicy
		spec   corev1.PodSpec
		want   Rule // "" : allowed
	}{
		"required anti-affinity on hostname": {spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{podTerm(corev1.LabelHostname)}}}}},
		"required affinity on zone": {spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{podTerm(corev1.LabelTopologyZone)}}}}},
		"required anti-affinity on a node label not allowed": {spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{podTerm("dedicated")}}}}, want: RulePodAffinity},
		"required affinity on a node label not allowed": {spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{podTerm(corev1.LabelHostname), podTerm("node-role.kubernetes.io/control-plane")}}}}, want: RulePodAffinity},
		"required term on the policy's node selector key": {policy: pinned, spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{podTerm("pool")}}}}},
		"preferred term on a key not allowed is filtered, not refused": {spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: podTerm("dedicated")}}}}}},
		"DoNotSchedule spread on a key not allowed": {spec: corev1.PodSpec{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "dedicated", WhenUnsatisfiable: corev1.DoNotSchedule}}}, want: RuleTopologySpread},
		"DoNotSchedule spread on hostname": {spec: corev1.PodSpec{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule}}}},
		"ScheduleAnyway spread on a key not allowed is filtered": {spec: corev1.PodSpec{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "dedicated", WhenUnsatisfiable: corev1.ScheduleAnyway}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := tc.policy
			if p == nil {
				p = pods(nil)
			}
			d := CheckPod(p, &tc.spec, nil)
			switch {
			case tc.want == "" && d != nil:
				t.Fatalf("refused: %v", d)
			case tc.want != "" && (d == nil || d.Rule != tc.want):
				t.Fatalf("got %v, want rule %s", d, tc.want)
			case d != nil && !strings.Contains(d.Message, "pods.allowedNodeLabelKeys"):
				t.Errorf("message %q does not say how to allow it", d.Message)
			}
		})
	}
}

func TestFilterPodSchedulingTerms(t *testing.T) {
	spec := corev1.PodSpec{
		Affinity: &corev1.Affinity{
			PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: 1, PodAffinityTerm: podTerm("dedicated")}, {Weight: 2, PodAffinityTerm: podTerm(corev1.LabelTopologyZone)}}},
			PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: 3, PodAffinityTerm: podTerm("secret-hardware")}, {Weight: 4, PodAffinityTerm: podTerm(corev1.LabelHostname)}}},
		},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "dedicated", WhenUnsatisfiable: corev1.ScheduleAnyway},
			{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule},
		},
	}
	d := FilterPod(pods(nil), &spec)
	if d == nil || d.Rule != RulePodAffinity || !strings.Contains(d.Message, "2 preferred pod affinity") || !strings.Contains(d.Message, "1 ScheduleAnyway") {
		t.Fatalf("report %v, want rule podAffinity naming 2 terms and 1 constraint", d)
	}
	if got := spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(got) != 1 || got[0].Weight != 2 {
		t.Errorf("preferred affinity kept %+v, want only the zone term", got)
	}
	if got := spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(got) != 1 || got[0].Weight != 4 {
		t.Errorf("preferred anti-affinity kept %+v, want only the hostname term", got)
	}
	if got := spec.TopologySpreadConstraints; len(got) != 1 || got[0].TopologyKey != corev1.LabelHostname {
		t.Errorf("spread constraints kept %+v, want only the hostname one", got)
	}

	// Allowed terms only: nothing reported, nothing changed.
	ok := corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: podTerm(corev1.LabelHostname)}}}}}
	if d := FilterPod(pods(nil), &ok); d != nil {
		t.Errorf("reported %v for allowed terms", d)
	}
	if len(ok.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Error("dropped an allowed term")
	}
}

func TestFilterPodClampsTermination(t *testing.T) {
	years := int64(10 * 365 * 24 * 3600)
	sleep := func(s int64) *corev1.LifecycleHandler {
		return &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: s}}
	}
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: &years,
		InitContainers:                []corev1.Container{{Name: "sidecar", Lifecycle: &corev1.Lifecycle{PreStop: sleep(years)}}},
		Containers: []corev1.Container{
			{Name: "app", Lifecycle: &corev1.Lifecycle{PreStop: sleep(years), PostStart: sleep(years)}},
			{Name: "short", Lifecycle: &corev1.Lifecycle{PreStop: sleep(5)}},
		},
	}
	d := FilterPod(pods(nil), &spec)
	if d == nil || d.Rule != RuleTerminationGracePeriod || !strings.Contains(d.Message, "pods.maxTerminationGracePeriodSeconds") {
		t.Fatalf("report %v, want rule terminationGracePeriod", d)
	}
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g != 3600 {
		t.Errorf("terminationGracePeriodSeconds %v, want 3600", g)
	}
	for _, got := range []int64{spec.InitContainers[0].Lifecycle.PreStop.Sleep.Seconds, spec.Containers[0].Lifecycle.PreStop.Sleep.Seconds,
		spec.Containers[0].Lifecycle.PostStart.Sleep.Seconds} {
		if got != 3600 {
			t.Errorf("sleep %d, want 3600", got)
		}
	}
	if got := spec.Containers[1].Lifecycle.PreStop.Sleep.Seconds; got != 5 {
		t.Errorf("short sleep changed to %d", got)
	}

	// Within the bound (and a policy allowing more): nothing reported.
	long := int64(7200)
	within := corev1.PodSpec{TerminationGracePeriodSeconds: &long}
	if d := FilterPod(pods(&tenancyv1alpha1.PodPolicy{MaxTerminationGracePeriodSeconds: &years}), &within); d != nil || *within.TerminationGracePeriodSeconds != 7200 {
		t.Errorf("report %v, grace %d; want none and 7200", d, *within.TerminationGracePeriodSeconds)
	}
}

// A filtered Pod gives one report, under the first rule, naming every part left out.
func TestFilterPodCombinesReports(t *testing.T) {
	years := int64(1 << 30)
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: &years,
		Tolerations:                   []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}},
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
			{Weight: 1, PodAffinityTerm: podTerm("dedicated")}}}},
	}
	d := FilterPod(pods(nil), &spec)
	if d == nil || d.Rule != RuleToleration {
		t.Fatalf("report %v, want rule toleration first", d)
	}
	for _, part := range []string{"tolerations not copied", "preferred pod affinity", "terminationGracePeriodSeconds"} {
		if !strings.Contains(d.Message, part) {
			t.Errorf("message %q does not mention %q", d.Message, part)
		}
	}
}

func TestClampGracePeriod(t *testing.T) {
	p := pods(nil)
	if g, clamped := ClampGracePeriod(p, nil); g != nil || clamped {
		t.Errorf("nil: %v %v", g, clamped)
	}
	in := int64(30)
	if g, clamped := ClampGracePeriod(p, &in); *g != 30 || clamped {
		t.Errorf("30: %v %v", *g, clamped)
	}
	big := int64(1 << 40)
	if g, clamped := ClampGracePeriod(p, &big); *g != 3600 || !clamped || big != 1<<40 {
		t.Errorf("2^40: %v %v (input %d)", *g, clamped, big)
	}
}

func TestDeletionGracePeriod(t *testing.T) {
	p := pods(nil)
	if g, d := DeletionGracePeriod(p, nil); g != nil || d != nil {
		t.Errorf("nil: %v %v", g, d)
	}
	for in, want := range map[int64]int64{0: 1, -5: 1, 1: 1, 30: 30, 3600: 3600, 1 << 40: 3600} {
		s := in
		g, d := DeletionGracePeriod(p, &s)
		if g == nil || *g != want || s != in {
			t.Errorf("%d: got %v (input now %d), want %d", in, g, s, want)
		}
		if changed := want != in; (d != nil) != changed || d != nil && d.Rule != RuleTerminationGracePeriod {
			t.Errorf("%d: report %v", in, d)
		}
		if in == 0 && !strings.Contains(d.Message, "force deletion") {
			t.Errorf("0: message %q", d.Message)
		}
	}
}

func TestEphemeralContainers(t *testing.T) {
	if d := EphemeralContainers(nil); d != nil {
		t.Errorf("no containers: %v", d)
	}
	if d := EphemeralContainers([]string{"debugger-1"}); d == nil || d.Rule != RuleEphemeralContainer || !strings.Contains(d.Message, "debugger-1") {
		t.Errorf("got %v", d)
	}
}

func TestSchedulingRequirements(t *testing.T) {
	spec := &corev1.PodSpec{
		Affinity: &corev1.Affinity{
			PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"a": "1", "b": "2"}},
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: metav1.LabelSelectorOpExists}}},
				MatchLabelKeys:    []string{"pod-template-hash"}, TopologyKey: corev1.LabelHostname,
			}}}, // 1 + 2 + 1 + 1
			PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 1, PodAffinityTerm: podTerm(corev1.LabelHostname),
			}}}, // 1 + 1
			NodeAffinity: affinity([]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z"}}}}}).NodeAffinity, // 1 + 1
		},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "1"}},
		}}, // 1 + 1
	}
	if n := SchedulingRequirements(spec); n != 11 {
		t.Errorf("counted %d, want 11", n)
	}
	if n := SchedulingRequirements(&corev1.PodSpec{}); n != 0 {
		t.Errorf("empty spec: %d", n)
	}
}

// TestCheckPodManySchedulingTerms: a Pod with thousands of required anti-affinity terms, each
// confined and keyed on kubernetes.io/hostname, is refused (schedulingRequirements) under the
// built-in policy, and allowed when the policy raises the cap.
func TestCheckPodManySchedulingTerms(t *testing.T) {
	terms := make([]corev1.PodAffinityTerm, 2000)
	for i := range terms {
		terms[i] = podTerm(corev1.LabelHostname)
	}
	spec := &corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}}
	d := CheckPod(pods(nil), spec, nil)
	if d == nil || d.Rule != RuleSchedulingRequirements || !strings.Contains(d.Message, "pods.maxSchedulingRequirements") {
		t.Fatalf("2000 terms: %v", d)
	}
	few := &corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms[:32]}}}
	if d := CheckPod(pods(nil), few, nil); d != nil {
		t.Errorf("32 terms (64 requirements): %v", d)
	}
	more := int32(4000)
	if d := CheckPod(pods(&tenancyv1alpha1.PodPolicy{MaxSchedulingRequirements: &more}), spec, nil); d != nil {
		t.Errorf("cap raised to 4000: %v", d)
	}
}

// TestCheckPodProbeHosts: a probe or hook naming a host (which the kubelet would connect to
// from the node) is refused, in containers and init containers; one without a host is not.
func TestCheckPodProbeHosts(t *testing.T) {
	tcp := func(host string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: host}}}
	}
	get := func(host string) *corev1.LifecycleHandler {
		return &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: host, Path: "/"}}
	}
	cases := map[string]struct {
		c    corev1.Container
		init bool
		want bool
	}{
		"no host":                          {c: corev1.Container{Name: "c", ReadinessProbe: tcp(""), Lifecycle: &corev1.Lifecycle{PreStop: get("")}}},
		"readiness tcpSocket host":         {c: corev1.Container{Name: "c", ReadinessProbe: tcp("10.0.0.7")}, want: true},
		"liveness httpGet host":            {c: corev1.Container{Name: "c", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "169.254.169.254"}}}}, want: true},
		"preStop httpGet host":             {c: corev1.Container{Name: "c", Lifecycle: &corev1.Lifecycle{PreStop: get("127.0.0.1")}}, want: true},
		"init container postStart host":    {c: corev1.Container{Name: "i", Lifecycle: &corev1.Lifecycle{PostStart: get("node.local")}}, init: true, want: true},
		"init container startupProbe host": {c: corev1.Container{Name: "i", StartupProbe: tcp("10.0.0.8")}, init: true, want: true},
	}
	for name, tc := range cases {
		spec := &corev1.PodSpec{}
		if tc.init {
			spec.InitContainers = []corev1.Container{tc.c}
		} else {
			spec.Containers = []corev1.Container{tc.c}
		}
		d := CheckPod(pods(nil), spec, nil)
		if tc.want != (d != nil) || d != nil && d.Rule != RuleProbeHost {
			t.Errorf("%s: got %v, want refused=%v", name, d, tc.want)
		}
	}
}
