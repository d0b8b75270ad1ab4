package policy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func pods(over *tenancyv1alpha1.PodPolicy) *tenancyv1alpha1.PodPolicy {
	if over == nil {
		return Default().Pods()
	}
	return Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Pods: over}).Pods()
}

func vol(name string, src corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: src}
}

func affinity(required []corev1.NodeSelectorTerm) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: required}}}
}

func expr(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func TestCheckPod(t *testing.T) {
	inPool := func(n string) bool { return n == "mine-1" || n == "mine-2" }
	str := func(s string) *string { return &s }
	cases := map[string]struct {
		policy *tenancyv1alpha1.PodPolicy // nil: built-in
		spec   corev1.PodSpec
		want   Rule // "" = allowed
		inMsg  string
	}{
		"empty":          {},
		"restricted set": {spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("a", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}), vol("b", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}), vol("c", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}), vol("d", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}}), vol("e", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}), vol("f", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}})}}},
		"nfs":            {spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("data", corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{}})}}, want: RuleVolumeType, inMsg: `volume "data" uses nfs; allowed volume types: configMap, csi,`},
		"nfs allowed":    {policy: &tenancyv1alpha1.PodPolicy{AllowedVolumeTypes: []string{"nfs"}}, spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("data", corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{}})}}},
		"configMap not allowed when the list omits it": {policy: &tenancyv1alpha1.PodPolicy{AllowedVolumeTypes: []string{"secret"}},
			spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("c", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}})}}, want: RuleVolumeType},
		"csi driver":         {spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("s", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d.example.com"}})}}, want: RuleCSIDriver, inMsg: `driver "d.example.com"; allowed drivers: none`},
		"csi driver allowed": {policy: &tenancyv1alpha1.PodPolicy{AllowedCSIDrivers: []string{"d.example.com"}}, spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("s", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d.example.com"}})}}},
		"csi driver allowed, csi type not": {policy: &tenancyv1alpha1.PodPolicy{AllowedVolumeTypes: []string{"secret"}, AllowedCSIDrivers: []string{"d.example.com"}},
			spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("s", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d.example.com"}})}}, want: RuleVolumeType},
		"podCertificate": {policy: &tenancyv1alpha1.PodPolicy{AllowedVolumeTypes: []string{"projected"}},
			spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{}}, {PodCertificate: &corev1.PodCertificateProjection{}}}}})}}, want: RuleCredentialSource, inMsg: "podCertificate"},
		"clusterTrustBundle": {spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{}}}}})}}, want: RuleCredentialSource},
		"projected token, configMap, secret, downwardAPI": {spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("p", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{}}, {ConfigMap: &corev1.ConfigMapProjection{}}, {Secret: &corev1.SecretProjection{}}, {DownwardAPI: &corev1.DownwardAPIProjection{}}}}})}}},

		"nodeSelector zone":          {spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelTopologyZone: "z"}}},
		"nodeSelector control-plane": {spec: corev1.PodSpec{NodeSelector: map[string]string{"node-role.kubernetes.io/control-plane": ""}}, want: RuleNodePlacement, inMsg: "nodeSelector key node-role.kubernetes.io/control-plane"},
		"nodeSelector key the policy pins": {policy: &tenancyv1alpha1.PodPolicy{NodeSelector: map[string]string{"pool": "a"}},
			spec: corev1.PodSpec{NodeSelector: map[string]string{"pool": "b"}}},
		"nodeSelector hostname in pool":      {spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelHostname: "mine-1"}}},
		"nodeSelector hostname outside pool": {spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelHostname: "theirs"}}, want: RuleNodePlacement},
		"required zone NotIn":                {spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr(corev1.LabelTopologyZone, corev1.NodeSelectorOpNotIn, "z")}}})}},
		"required custom key": {spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{expr(corev1.LabelTopologyZone, corev1.NodeSelectorOpExists)}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{expr("gpu", corev1.NodeSelectorOpExists)}}})}, want: RuleNodePlacement},
		"required custom key allowed": {policy: &tenancyv1alpha1.PodPolicy{AllowedNodeLabelKeys: []string{"gpu"}},
			spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr("gpu", corev1.NodeSelectorOpExists)}}})}},
		"required hostname In pool": {spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr(corev1.LabelHostname, corev1.NodeSelectorOpIn, "mine-1", "mine-2")}}})}},
		"required hostname one outside": {spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr(corev1.LabelHostname, corev1.NodeSelectorOpIn, "mine-1", "theirs")}}})},
			want: RuleNodePlacement},
		"required hostname Exists": {spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{expr(corev1.LabelHostname, corev1.NodeSelectorOpExists)}}})},
			want: RuleNodePlacement},
		"hostname allowed as a label key still judged by the pool": {policy: &tenancyv1alpha1.PodPolicy{AllowedNodeLabelKeys: []string{corev1.LabelHostname}},
			spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelHostname: "theirs"}}, want: RuleNodePlacement},
		"matchFields in pool (DaemonSet)": {spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "mine-2")}}})}},
		"matchFields outside pool": {spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "theirs")}}})},
			want: RuleNodePlacement, inMsg: "matchFields metadata.name In [theirs]"},
		"matchFields NotIn": {spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr(metav1.ObjectNameField, corev1.NodeSelectorOpNotIn, "mine-1")}}})},
			want: RuleNodePlacement},
		"matchFields In without values": {spec: corev1.PodSpec{Affinity: affinity([]corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{expr(metav1.ObjectNameField, corev1.NodeSelectorOpIn)}}})},
			want: RuleNodePlacement},
		"preferred terms are not refused": {spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
			{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr("gpu", corev1.NodeSelectorOpExists)}}}}}}}},

		"runtimeClass":                              {spec: corev1.PodSpec{RuntimeClassName: str("runc")}, want: RuleRuntimeClass, inMsg: `runtimeClassName "runc" is not allowed; allowed: none`},
		"runtimeClass empty":                        {spec: corev1.PodSpec{RuntimeClassName: str("")}},
		"runtimeClass allowed":                      {policy: &tenancyv1alpha1.PodPolicy{AllowedRuntimeClassNames: []string{"runc"}}, spec: corev1.PodSpec{RuntimeClassName: str("runc")}},
		"runtimeClass is the default":               {policy: &tenancyv1alpha1.PodPolicy{DefaultRuntimeClassName: str("kata")}, spec: corev1.PodSpec{RuntimeClassName: str("kata")}},
		"schedulerName":                             {spec: corev1.PodSpec{SchedulerName: "mine"}, want: RuleSchedulerName, inMsg: "allowed: default-scheduler"},
		"schedulerName default":                     {spec: corev1.PodSpec{SchedulerName: corev1.DefaultSchedulerName}},
		"schedulerName unset, list without default": {policy: &tenancyv1alpha1.PodPolicy{AllowedSchedulerNames: []string{"mine"}}},
		"priorityClass, every public":               {spec: corev1.PodSpec{PriorityClassName: "gold"}},
		"priorityClass not listed":                  {policy: &tenancyv1alpha1.PodPolicy{AllowedPriorityClassNames: []string{"silver"}}, spec: corev1.PodSpec{PriorityClassName: "gold"}, want: RulePriorityClass},
		"priorityClass listed":                      {policy: &tenancyv1alpha1.PodPolicy{AllowedPriorityClassNames: []string{"silver"}}, spec: corev1.PodSpec{PriorityClassName: "silver"}},
		"priorityClass system, listed nothing":      {policy: &tenancyv1alpha1.PodPolicy{AllowedPriorityClassNames: []string{}}, spec: corev1.PodSpec{PriorityClassName: "system-cluster-critical"}},
		"first refusal: volumes before placement": {spec: corev1.PodSpec{SchedulerName: "mine", Volumes: []corev1.Volume{vol("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{}})}},
			want: RuleVolumeType, inMsg: "hostPath"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.spec.DeepCopy()
			d := CheckPod(pods(tc.policy), &tc.spec, inPool)
			switch {
			case tc.want == "" && d != nil:
				t.Errorf("refused: %v", d)
			case tc.want != "" && (d == nil || d.Rule != tc.want):
				t.Errorf("got %v, want rule %s", d, tc.want)
			case d != nil && (!strings.Contains(d.Message, tc.inMsg) || !strings.Contains(d.Message, "TenantPolicy")):
				t.Errorf("message %q: want it to contain %q and to say what a TenantPolicy can do", d.Message, tc.inMsg)
			}
			if diff := cmp.Diff(before, &tc.spec); diff != "" {
				t.Errorf("spec modified (-before +after):\n%s", diff)
			}
		})
	}
}

// TestCheckPodRefusesEveryVolumeSourceOutsideTheList sets each field of VolumeSource (found by
// reflection, so a source added by a newer k8s.io/api is covered too) and expects a refusal
// exactly when the built-in list does not name it.
func TestCheckPodRefusesEveryVolumeSourceOutsideTheList(t *testing.T) {
	p := Default().Pods()
	typ := reflect.TypeOf(corev1.VolumeSource{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		var src corev1.VolumeSource
		if f.Type.Kind() != reflect.Pointer {
			t.Fatalf("VolumeSource.%s is not a pointer: the check needs a look", f.Name)
		}
		reflect.ValueOf(&src).Elem().Field(i).Set(reflect.New(f.Type.Elem()))
		if src.CSI != nil {
			src.CSI.Driver = "x"
		}
		d := CheckPod(p, &corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: src}}}, nil)
		allowed := slices.Contains(p.AllowedVolumeTypes, name)
		switch {
		case name == "csi":
			if d == nil || d.Rule != RuleCSIDriver {
				t.Errorf("csi with an unlisted driver: %v", d)
			}
		case allowed && d != nil:
			t.Errorf("%s refused: %v", name, d)
		case !allowed && (d == nil || d.Rule != RuleVolumeType):
			t.Errorf("%s: %v, want volumeType", name, d)
		}
	}
	// And every projected source the syncer does not know.
	ptyp := reflect.TypeOf(corev1.VolumeProjection{})
	for i := 0; i < ptyp.NumField(); i++ {
		name, _, _ := strings.Cut(ptyp.Field(i).Tag.Get("json"), ",")
		var src corev1.VolumeProjection
		reflect.ValueOf(&src).Elem().Field(i).Set(reflect.New(ptyp.Field(i).Type.Elem()))
		d := CheckPod(p, &corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
			Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{src}}}}}}, nil)
		if slices.Contains(allowedProjectedSources, name) != (d == nil) {
			t.Errorf("projected %s: %v", name, d)
		}
	}
}

func TestTolerationMatches(t *testing.T) {
	nr := tenancyv1alpha1.TolerationPattern{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}
	ded := tenancyv1alpha1.TolerationPattern{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "t1"}
	cases := []struct {
		pat  tenancyv1alpha1.TolerationPattern
		tol  corev1.Toleration
		want bool
	}{
		{nr, corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}, true},
		{nr, corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists}, false}, // every effect is wider
		{nr, corev1.Toleration{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}, false},
		{nr, corev1.Toleration{Operator: corev1.TolerationOpExists}, false},
		{tenancyv1alpha1.TolerationPattern{}, corev1.Toleration{Operator: corev1.TolerationOpExists}, false}, // a pattern needs a key
		{ded, corev1.Toleration{Key: "dedicated", Value: "t1", Effect: corev1.TaintEffectNoSchedule}, true},  // empty operator is Equal
		{ded, corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "t2"}, false},
		{ded, corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists}, false}, // every value is wider
		{tenancyv1alpha1.TolerationPattern{Key: "dedicated", Value: "t1"}, corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists}, false},
		{tenancyv1alpha1.TolerationPattern{Key: "dedicated"}, corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists}, true},
	}
	for _, tc := range cases {
		if got := TolerationMatches(tc.pat, tc.tol); got != tc.want {
			t.Errorf("TolerationMatches(%+v, %+v) = %v, want %v", tc.pat, tc.tol, got, tc.want)
		}
	}
}

func TestFilterPod(t *testing.T) {
	sec := int64(300)
	notReady := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &sec}
	critical := corev1.Toleration{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}
	pinned := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "t1", Effect: corev1.TaintEffectNoSchedule}
	zone := corev1.PreferredSchedulingTerm{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "z")}}}
	gpu := corev1.PreferredSchedulingTerm{Weight: 2, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr("gpu", corev1.NodeSelectorOpExists)}}}
	named := corev1.PreferredSchedulingTerm{Weight: 3, Preference: corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{expr(metav1.ObjectNameField, corev1.NodeSelectorOpIn, "n")}}}
	preferred := func(terms ...corev1.PreferredSchedulingTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
	}
	str := func(s string) *string { return &s }
	cases := map[string]struct {
		policy *tenancyv1alpha1.PodPolicy
		in     corev1.PodSpec
		want   corev1.PodSpec
		rule   Rule
		inMsg  string
	}{
		"nothing to filter": {in: corev1.PodSpec{Tolerations: []corev1.Toleration{notReady}}, want: corev1.PodSpec{Tolerations: []corev1.Toleration{notReady}}},
		"toleration dropped": {in: corev1.PodSpec{Tolerations: []corev1.Toleration{critical, notReady}}, want: corev1.PodSpec{Tolerations: []corev1.Toleration{notReady}},
			rule: RuleToleration, inMsg: "tolerations not copied to the super Pod: CriticalAddonsOnly Exists; allowed: node.kubernetes.io/not-ready:NoExecute"},
		"all dropped: nil": {in: corev1.PodSpec{Tolerations: []corev1.Toleration{critical}}, rule: RuleToleration},
		"policy tolerations appended": {policy: &tenancyv1alpha1.PodPolicy{Tolerations: []corev1.Toleration{pinned}},
			in: corev1.PodSpec{Tolerations: []corev1.Toleration{notReady}}, want: corev1.PodSpec{Tolerations: []corev1.Toleration{notReady, pinned}}},
		"preferred terms filtered": {in: corev1.PodSpec{Affinity: preferred(zone, gpu, named)}, want: corev1.PodSpec{Affinity: preferred(zone)},
			rule: RuleNodePlacement, inMsg: "2 preferred node affinity term(s) not copied"},
		"both reported under toleration": {in: corev1.PodSpec{Tolerations: []corev1.Toleration{critical}, Affinity: preferred(gpu)}, want: corev1.PodSpec{Affinity: preferred()},
			rule: RuleToleration, inMsg: "; also 1 preferred node affinity term(s)"},
		"node selector merged, policy wins": {policy: &tenancyv1alpha1.PodPolicy{NodeSelector: map[string]string{"pool": "a"}},
			in:   corev1.PodSpec{NodeSelector: map[string]string{"pool": "b", corev1.LabelOSStable: "linux"}, Affinity: preferred(corev1.PreferredSchedulingTerm{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr("pool", corev1.NodeSelectorOpExists)}}})},
			want: corev1.PodSpec{NodeSelector: map[string]string{"pool": "a", corev1.LabelOSStable: "linux"}, Affinity: preferred(corev1.PreferredSchedulingTerm{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr("pool", corev1.NodeSelectorOpExists)}}})}},
		"default runtime class":             {policy: &tenancyv1alpha1.PodPolicy{DefaultRuntimeClassName: str("kata")}, want: corev1.PodSpec{RuntimeClassName: str("kata")}},
		"default runtime class, empty name": {policy: &tenancyv1alpha1.PodPolicy{DefaultRuntimeClassName: str("kata")}, in: corev1.PodSpec{RuntimeClassName: str("")}, want: corev1.PodSpec{RuntimeClassName: str("kata")}},
		"explicit runtime class kept": {policy: &tenancyv1alpha1.PodPolicy{DefaultRuntimeClassName: str("kata"), AllowedRuntimeClassNames: []string{"gvisor"}},
			in: corev1.PodSpec{RuntimeClassName: str("gvisor")}, want: corev1.PodSpec{RuntimeClassName: str("gvisor")}},
		"no default runtime class": {in: corev1.PodSpec{}, want: corev1.PodSpec{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := tc.in.DeepCopy()
			d := FilterPod(pods(tc.policy), spec)
			if diff := cmp.Diff(&tc.want, spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			switch {
			case tc.rule == "" && d != nil:
				t.Errorf("reported %v", d)
			case tc.rule != "" && (d == nil || d.Rule != tc.rule || !strings.Contains(d.Message, tc.inMsg)):
				t.Errorf("report %v, want rule %s with %q", d, tc.rule, tc.inMsg)
			}
		})
	}
	// The input's toleration slice is not written through (FilterPod works on a copy's slice).
	in := []corev1.Toleration{critical, notReady}
	spec := &corev1.PodSpec{Tolerations: in}
	_ = FilterPod(Default().Pods(), spec) // the report is checked above; here only the input matters
	if in[0].Key != "CriticalAddonsOnly" {
		t.Error("FilterPod overwrote the caller's toleration array")
	}
}

func TestCheckPodServiceAccountTokens(t *testing.T) {
	tokens := func(n int) *corev1.PodSpec {
		var srcs []corev1.VolumeProjection
		for i := 0; i < n; i++ {
			srcs = append(srcs, corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t", Audience: "a"}},
				corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}})
		}
		// Split over two projected volumes: the cap counts all of a Pod's sources.
		h := len(srcs) / 2
		return &corev1.PodSpec{Volumes: []corev1.Volume{
			vol("one", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: srcs[:h]}}),
			vol("two", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: srcs[h:]}}),
		}}
	}
	if d := CheckPod(pods(nil), tokens(8), nil); d != nil {
		t.Errorf("8 token sources (the built-in cap) refused: %v", d)
	}
	d := CheckPod(pods(nil), tokens(9), nil)
	if d == nil || d.Rule != RuleServiceAccountTokens || !strings.Contains(d.Message, "pods.maxServiceAccountTokens") {
		t.Errorf("9 token sources: %v; want a %s refusal naming the policy field", d, RuleServiceAccountTokens)
	}
	two := int32(2)
	if d := CheckPod(pods(&tenancyv1alpha1.PodPolicy{MaxServiceAccountTokens: &two}), tokens(3), nil); d == nil || d.Rule != RuleServiceAccountTokens {
		t.Errorf("3 token sources with a cap of 2: %v", d)
	}
	if got := *pods(nil).MaxServiceAccountTokens; got != 8 {
		t.Errorf("built-in cap %d, want 8", got)
	}
}
