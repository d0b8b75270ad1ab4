package pod

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Super Nodes of the policy tests: the tenant runs a Pod on worker-1 (so it has a vNode of
// that name); worker-2 carries another tenant's Pods; cp-1 is a control-plane Node.
const (
	ownNode   = "worker-1"
	otherNode = "worker-2"
	cpNode    = "cp-1"
)

// policyEnv returns a tenant and a super-side Env whose caches hold the three super Nodes and
// one super Pod of the tenant on ownNode (not started: the listers read the indexers).
func policyEnv(t *testing.T) (*resources.Env, *tenant.Cluster) {
	t.Helper()
	cs := fake.NewClientset()
	env := &resources.Env{Super: cs, SuperInformers: informers.NewSharedInformerFactory(cs, 0), SuperNodes: informers.NewSharedInformerFactory(cs, 0)}
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid", Informers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	nodes := env.SuperNodes.Core().V1().Nodes().Informer().GetIndexer()
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: ownNode, Labels: map[string]string{"pool": "a", corev1.LabelHostname: ownNode}}},
		{ObjectMeta: metav1.ObjectMeta{Name: otherNode, Labels: map[string]string{"pool": "b", corev1.LabelHostname: otherNode}}},
		{ObjectMeta: metav1.ObjectMeta{Name: cpNode, Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}}},
	} {
		if err := nodes.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	running := Desired(c, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "db-uid"}}, resources.SuperNamespace(c, "shop"), nil)
	running.Spec.NodeName = ownNode
	if err := env.SuperInformers.Core().V1().Pods().Informer().GetIndexer().Add(running); err != nil {
		t.Fatal(err)
	}
	return env, c
}

// attackPod is an ordinary tenant Pod (as the tenant apiserver stores it: the DefaultToleration
// Seconds admission's tolerations, the projected service-account token volume).
func attackPod() *corev1.Pod {
	sec := int64(300)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "web-uid", ResourceVersion: "7"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
			Volumes: []corev1.Volume{
				{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
				}}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &sec},
				{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &sec},
			},
		},
	}
}

func withVolume(src corev1.VolumeSource) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "attack", VolumeSource: src})
	}
}

func withProjected(src corev1.VolumeProjection) func(*corev1.PodSpec) {
	return withVolume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{src}}})
}

func requiredTerm(term corev1.NodeSelectorTerm) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}}}
	}
}

// daemonSetTerm is the required term the tenant's DaemonSet controller sets on each Pod it
// creates for Node name (k8s.io/kubernetes/pkg/controller/daemon/util.ReplaceDaemonSetPodNodeNameNodeAffinity).
func daemonSetTerm(name string) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{name}}}}
}

// attacks are tenant Pods the built-in policy refuses, with the rule that refuses them.
var attacks = map[string]struct {
	mutate func(*corev1.PodSpec)
	rule   policy.Rule
}{
	"inline nfs": {withVolume(corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.9", Path: "/exports/other-tenant"}}), policy.RuleVolumeType},
	"inline iscsi": {withVolume(corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "10.0.0.9:3260",
		IQN: "iqn.2001-04.com.example:storage", Lun: 0}}), policy.RuleVolumeType},
	"inline fc":  {withVolume(corev1.VolumeSource{FC: &corev1.FCVolumeSource{TargetWWNs: []string{"500a0982991b8dc5"}, Lun: ptrTo(int32(2))}}), policy.RuleVolumeType},
	"flexVolume": {withVolume(corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "example/lvm"}}), policy.RuleVolumeType},
	"hostPath":   {withVolume(corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/kubelet"}}), policy.RuleVolumeType},
	"inline csi, driver not allowed": {withVolume(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "secrets-store.csi.k8s.io",
		VolumeAttributes: map[string]string{"secretProviderClass": "super-cluster-vault"}}}), policy.RuleCSIDriver},
	"projected podCertificate": {withProjected(corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{
		SignerName: "kubernetes.io/kube-apiserver-client-pod", KeyType: "ED25519", CredentialBundlePath: "creds.pem"}}), policy.RuleCredentialSource},
	"projected clusterTrustBundle": {withProjected(corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{
		SignerName: ptrTo("example.com/internal-ca"), LabelSelector: &metav1.LabelSelector{}, Path: "ca.pem"}}), policy.RuleCredentialSource},
	"nodeSelector control-plane": {func(s *corev1.PodSpec) {
		s.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
	}, policy.RuleNodePlacement},
	"required affinity on control-plane label": {requiredTerm(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
		Key: "node-role.kubernetes.io/control-plane", Operator: corev1.NodeSelectorOpExists}}}), policy.RuleNodePlacement},
	"matchFields metadata.name outside the pool":       {requiredTerm(daemonSetTerm(otherNode)), policy.RuleNodePlacement},
	"matchFields metadata.name on a control plane":     {requiredTerm(daemonSetTerm(cpNode)), policy.RuleNodePlacement},
	"matchFields metadata.name NotIn (every node but)": {requiredTerm(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpNotIn, Values: []string{ownNode}}}}), policy.RuleNodePlacement},
	"nodeSelector hostname outside the pool": {func(s *corev1.PodSpec) {
		s.NodeSelector = map[string]string{corev1.LabelHostname: otherNode}
	}, policy.RuleNodePlacement},
	"runtimeClassName not allowed": {func(s *corev1.PodSpec) { s.RuntimeClassName = ptrTo("runc") }, policy.RuleRuntimeClass},
	"schedulerName not allowed":    {func(s *corev1.PodSpec) { s.SchedulerName = "bin-packer" }, policy.RuleSchedulerName},
}

func TestPolicyRefusesAttacks(t *testing.T) {
	env, c := policyEnv(t)
	for name, a := range attacks {
		t.Run(name, func(t *testing.T) {
			p := attackPod()
			a.mutate(&p.Spec)
			d := checkPolicy(env, c, &p.Spec)
			if d == nil || d.Rule != a.rule {
				t.Fatalf("checkPolicy = %v, want a %s refusal", d, a.rule)
			}
			if !strings.Contains(d.Message, "TenantPolicy") {
				t.Errorf("message %q does not say which policy field allows it", d.Message)
			}
		})
	}
}

// TestPolicyAdmitsOrdinaryPods: what ordinary workloads use passes the built-in policy.
func TestPolicyAdmitsOrdinaryPods(t *testing.T) {
	env, c := policyEnv(t)
	for name, mutate := range map[string]func(*corev1.PodSpec){
		"plain": func(*corev1.PodSpec) {},
		"DaemonSet Pod on the tenant's own vNode": requiredTerm(daemonSetTerm(ownNode)),
		"nodeSelector hostname of an own vNode":   func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelHostname: ownNode} },
		"nodeSelector zone and os": func(s *corev1.PodSpec) {
			s.NodeSelector = map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelOSStable: "linux"}
		},
		"schedulerName default-scheduler":          func(s *corev1.PodSpec) { s.SchedulerName = corev1.DefaultSchedulerName },
		"configMap, secret, claim, ephemeral, api": withVolumes(),
		"required affinity on zone": requiredTerm(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z1", "z2"}}}}),
	} {
		t.Run(name, func(t *testing.T) {
			p := attackPod()
			mutate(&p.Spec)
			if d := checkPolicy(env, c, &p.Spec); d != nil {
				t.Errorf("refused: %v", d)
			}
		})
	}
}

func withVolumes() func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes,
			corev1.Volume{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			corev1.Volume{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
			corev1.Volume{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			corev1.Volume{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}},
			corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}},
		)
	}
}

// TestPolicyFiltersTolerations: tolerations outside pods.allowedTolerations are not copied to
// the super Pod (the Pod still syncs), and the drop is reported with rule toleration.
func TestPolicyFiltersTolerations(t *testing.T) {
	_, c := policyEnv(t)
	for name, tol := range map[string]corev1.Toleration{
		"CriticalAddonsOnly":                {Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
		"node.kubernetes.io/unschedulable":  {Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		"dedicated=other":                   {Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "other", Effect: corev1.TaintEffectNoSchedule},
		"wildcard Exists":                   {Operator: corev1.TolerationOpExists},
		"control-plane":                     {Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		"not-ready with every effect":       {Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists},
		"not-ready NoSchedule (not NoExec)": {Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	} {
		t.Run(name, func(t *testing.T) {
			p := attackPod()
			p.Spec.Tolerations = append(p.Spec.Tolerations, tol)
			got, d := desired(c, p, "ns", nil)
			if d == nil || d.Rule != policy.RuleToleration {
				t.Errorf("report = %v, want rule toleration", d)
			}
			if diff := cmp.Diff(attackPod().Spec.Tolerations, got.Spec.Tolerations); diff != "" {
				t.Errorf("super tolerations (-want +got):\n%s", diff)
			}
			if len(p.Spec.Tolerations) != 3 {
				t.Error("the tenant Pod was modified")
			}
		})
	}
	if _, d := desired(c, attackPod(), "ns", nil); d != nil {
		t.Errorf("an ordinary Pod's tolerations reported: %v", d)
	}
}

// TestPolicyPlacementAndRuntimeDefaults: the policy's node selector and tolerations are added
// (its selector wins), preferred terms on keys outside the allowlist are dropped, and the
// default RuntimeClass is set on Pods that name none.
func TestPolicyPlacementAndRuntimeDefaults(t *testing.T) {
	env, c := policyEnv(t)
	dedicated := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "t1", Effect: corev1.TaintEffectNoSchedule}
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{
		NodeSelector:             map[string]string{"pool": "a"},
		Tolerations:              []corev1.Toleration{dedicated},
		DefaultRuntimeClassName:  ptrTo("kata"),
		AllowedRuntimeClassNames: []string{"gvisor"},
	}}))
	p := attackPod()
	p.Spec.NodeSelector = map[string]string{"pool": "b", corev1.LabelOSStable: "linux"}
	zone := corev1.PreferredSchedulingTerm{Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
		Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}}}}
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
		zone,
		{Weight: 90, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: "node-role.kubernetes.io/control-plane", Operator: corev1.NodeSelectorOpExists}}}},
	}}}
	if d := checkPolicy(env, c, &p.Spec); d != nil {
		t.Fatalf("refused: %v (a tenant key equal to a policy nodeSelector key is overridden, not refused)", d)
	}
	got, _ := desired(c, p, "ns", nil)
	if diff := cmp.Diff(map[string]string{"pool": "a", corev1.LabelOSStable: "linux"}, got.Spec.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	if !slices.ContainsFunc(got.Spec.Tolerations, func(x corev1.Toleration) bool { return x.MatchToleration(&dedicated) }) {
		t.Errorf("policy toleration not added: %v", got.Spec.Tolerations)
	}
	if diff := cmp.Diff([]corev1.PreferredSchedulingTerm{zone}, got.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution); diff != "" {
		t.Errorf("preferred terms (-want +got):\n%s", diff)
	}
	if got.Spec.RuntimeClassName == nil || *got.Spec.RuntimeClassName != "kata" {
		t.Errorf("runtimeClassName = %v, want the default kata", got.Spec.RuntimeClassName)
	}
	for _, rc := range []string{"kata", "gvisor"} {
		p := attackPod()
		p.Spec.RuntimeClassName = &rc
		if d := checkPolicy(env, c, &p.Spec); d != nil {
			t.Errorf("runtimeClassName %s refused: %v", rc, d)
		}
		if got, _ := desired(c, p, "ns", nil); *got.Spec.RuntimeClassName != rc {
			t.Errorf("runtimeClassName %s became %s", rc, *got.Spec.RuntimeClassName)
		}
	}
	// With a policy node selector the pool is the super Nodes it selects: worker-1 only.
	p = attackPod()
	requiredTerm(daemonSetTerm(otherNode))(&p.Spec)
	if d := checkPolicy(env, c, &p.Spec); d == nil || d.Rule != policy.RuleNodePlacement {
		t.Errorf("matchFields on a Node outside the policy's pool: %v, want nodePlacement", d)
	}
	p = attackPod()
	requiredTerm(daemonSetTerm(ownNode))(&p.Spec)
	if d := checkPolicy(env, c, &p.Spec); d != nil {
		t.Errorf("matchFields on a Node of the policy's pool refused: %v", d)
	}
}

// TestPolicyPriorityClassAllowlist: with pods.allowedPriorityClassNames set, a class outside
// it is refused.
func TestPolicyPriorityClassAllowlist(t *testing.T) {
	env, c := policyEnv(t)
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{AllowedPriorityClassNames: []string{"silver"}}}))
	p := attackPod()
	p.Spec.PriorityClassName = "gold"
	if d := checkPolicy(env, c, &p.Spec); d == nil || d.Rule != policy.RulePriorityClass {
		t.Errorf("gold: %v, want priorityClass", d)
	}
	p.Spec.PriorityClassName = "silver"
	if d := checkPolicy(env, c, &p.Spec); d != nil {
		t.Errorf("silver refused: %v", d)
	}
}

// TestPermissivePolicyAllowsEachAttack: every rule is an opt-in an admin can widen. The
// credential sources and node names outside the pool stay refused whatever the policy says.
func TestPermissivePolicyAllowsEachAttack(t *testing.T) {
	env, c := policyEnv(t)
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{
		AllowedVolumeTypes: []string{"configMap", "secret", "emptyDir", "projected", "nfs", "iscsi", "fc", "flexVolume", "hostPath", "csi"},
		AllowedCSIDrivers:  []string{"secrets-store.csi.k8s.io"},
		AllowedTolerations: []tenancyv1alpha1.TolerationPattern{
			{Key: corev1.TaintNodeNotReady}, {Key: corev1.TaintNodeUnreachable}, {Key: "CriticalAddonsOnly"}, {Key: "dedicated", Value: "other"},
		},
		AllowedNodeLabelKeys:     []string{"node-role.kubernetes.io/control-plane"},
		AllowedRuntimeClassNames: []string{"runc"},
		AllowedSchedulerNames:    []string{corev1.DefaultSchedulerName, "bin-packer"},
	}}))
	for name, a := range attacks {
		t.Run(name, func(t *testing.T) {
			p := attackPod()
			a.mutate(&p.Spec)
			d := checkPolicy(env, c, &p.Spec)
			always := a.rule == policy.RuleCredentialSource || strings.Contains(name, "metadata.name") || strings.Contains(name, "hostname")
			if always {
				if d == nil || d.Rule != a.rule {
					t.Errorf("checkPolicy = %v, want %s whatever the policy", d, a.rule)
				}
				return
			}
			if d != nil {
				t.Errorf("refused under the permissive policy: %v", d)
			}
		})
	}
	p := attackPod()
	p.Spec.Tolerations = append(p.Spec.Tolerations,
		corev1.Toleration{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
		corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "other", Effect: corev1.TaintEffectNoSchedule})
	got, d := desired(c, p, "ns", nil)
	if d != nil || len(got.Spec.Tolerations) != 4 {
		t.Errorf("tolerations %v, report %v: want all four kept", got.Spec.Tolerations, d)
	}
}

// TestReconcileRefusedPod runs the downward reconcile on a refused Pod: nothing is written to
// the super cluster (not even its namespace), the tenant Pod gets PodScheduled=False with
// reason PolicyDenied, one Warning Event and one count; a second pass writes nothing and
// reports nothing; a policy that allows it lets the Pod through.
func TestReconcileRefusedPod(t *testing.T) {
	ctx := context.Background()
	p := attackPod()
	p.Spec.Volumes = p.Spec.Volumes[1:] // no token volume: no TokenRequest in this test
	withVolume(corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.9", Path: "/x"}})(&p.Spec)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "ns-uid"}}
	tcs := fake.NewClientset(ns, p)
	scs := fake.NewClientset()
	rec := record.NewFakeRecorder(10)
	c := &tenant.Cluster{Name: "refused-pod-tenant", UID: "tenant-uid", Client: tcs, Informers: informers.NewSharedInformerFactory(tcs, 0), Recorder: rec}
	env := &resources.Env{Super: scs, SuperInformers: informers.NewSharedInformerFactory(scs, 0), SuperNodes: informers.NewSharedInformerFactory(scs, 0)}
	env.SuperInformers.Core().V1().Pods().Informer()
	env.SuperInformers.Core().V1().Namespaces().Informer()
	env.SuperInformers.Core().V1().ServiceAccounts().Informer()
	env.SuperNodes.Core().V1().Nodes().Informer()
	tpods := c.Informers.Core().V1().Pods().Informer().GetIndexer()
	if err := c.Informers.Core().V1().Namespaces().Informer().GetIndexer().Add(ns); err != nil {
		t.Fatal(err)
	}
	if err := tpods.Add(p); err != nil {
		t.Fatal(err)
	}
	count := func() float64 {
		return metrics.PolicyDenials(c.Name, string(resources.KindPod), string(policy.RuleVolumeType))
	}
	before := count()

	if err := reconcileDownward(ctx, env, c, "shop", "web"); err != nil {
		t.Fatalf("reconcile: %v (a refusal is not retried)", err)
	}
	for _, a := range scs.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("super cluster written: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	live, err := tcs.CoreV1().Pods("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cond := scheduledCondition(live)
	if cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason != policy.ReasonPolicyDenied || !strings.Contains(cond.Message, "volumeType") {
		t.Errorf("PodScheduled condition = %+v, want False/PolicyDenied naming volumeType", cond)
	}
	if got := count() - before; got != 1 {
		t.Errorf("denials counted %v, want 1", got)
	}
	restest.WantOneEvent(t, rec, "Warning "+policy.ReasonPolicyDenied+" volumeType: ", "nfs")

	// The informer brings the updated Pod back: no second write, Event or count, and the
	// upward path (no super Pod) leaves the condition alone.
	if err := tpods.Update(live); err != nil {
		t.Fatal(err)
	}
	tcs.ClearActions()
	if err := reconcileDownward(ctx, env, c, "shop", "web"); err != nil {
		t.Fatalf("second reconcile: %v", err)
	}
	if err := reconcileUpward(ctx, env, c, "shop", "web"); err != nil {
		t.Fatalf("upward reconcile: %v", err)
	}
	for _, a := range tcs.Actions() {
		if a.GetVerb() == "update" || a.GetVerb() == "patch" {
			t.Errorf("second pass wrote the tenant: %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		}
	}
	if got := count() - before; got != 1 {
		t.Errorf("denials counted %v after a second pass, want 1", got)
	}
	select {
	case e := <-rec.Events:
		t.Errorf("second Event %q", e)
	default:
	}

	// The admin allows nfs: the Pod is created in the super cluster.
	// (No quota: the fake super cluster has no quota controller to compute one.)
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{
		AllowedVolumeTypes: []string{"emptyDir", "nfs"}}, Limits: &tenancyv1alpha1.LimitsPolicy{Quota: corev1.ResourceList{}}}))
	if err := reconcileDownward(ctx, env, c, "shop", "web"); err != nil {
		t.Fatalf("reconcile after the policy change: %v", err)
	}
	if _, err := scs.CoreV1().Pods(resources.SuperNamespace(c, "shop")).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Errorf("super Pod after the policy allowed it: %v", err)
	}
	if admit.IsRefused(c, resources.KindPod, live) {
		t.Error("still recorded as refused after it was admitted")
	}
}

// TestTenantRuntimeClass: a Pod naming a RuntimeClass only the tenant has is checked as if it
// named none and synced without it (the policy's default runtime runs it) and without the
// tenant's overhead; a name the policy allows is kept; a name the super cluster also has, or
// the tenant does not have, is refused, as before. Whatever the check decided, desired never
// lets a name the policy does not allow through.
func TestTenantRuntimeClass(t *testing.T) {
	env, c := policyEnv(t)
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{
		DefaultRuntimeClassName:  ptrTo("kata"),
		AllowedRuntimeClassNames: []string{"gvisor"},
	}}))
	class := func(name string) *nodev1.RuntimeClass {
		return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: name}
	}
	c.Client = fake.NewClientset(class("mine"), class("gvisor"), class("unsandboxed"))
	env.Super = fake.NewClientset(class("gvisor"), class("kata"), class("unsandboxed"))
	overhead := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
	for _, tc := range []struct {
		class   string
		local   bool
		refused bool
		want    string // the super Pod's runtimeClassName
	}{
		{class: "mine", local: true, want: "kata"},
		{class: "gvisor", want: "gvisor"},
		{class: "unsandboxed", refused: true},
		{class: "missing", refused: true},
	} {
		p := attackPod()
		p.Spec.RuntimeClassName, p.Spec.Overhead = ptrTo(tc.class), overhead
		local, err := localRuntimeClass(context.Background(), env, c, &p.Spec)
		if err != nil || local != tc.local {
			t.Errorf("%s: localRuntimeClass = %v, %v; want %v", tc.class, local, err, tc.local)
		}
		checked := p.Spec
		if local {
			checked.RuntimeClassName = nil
		}
		d := checkPolicy(env, c, &checked)
		if (d != nil) != tc.refused || (d != nil && d.Rule != policy.RuleRuntimeClass) {
			t.Errorf("%s: refusal %v, want refused %v", tc.class, d, tc.refused)
		}
		got, _ := desired(c, p, "ns", nil)
		want := tc.want
		if tc.refused {
			want = "kata" // fail-closed: a name the policy does not allow is dropped
		}
		if got.Spec.RuntimeClassName == nil || *got.Spec.RuntimeClassName != want {
			t.Errorf("%s: super runtimeClassName %v, want %s", tc.class, got.Spec.RuntimeClassName, want)
		}
		if got.Spec.Overhead != nil {
			t.Errorf("%s: super overhead %v, want none (the super cluster's admission sets it)", tc.class, got.Spec.Overhead)
		}
	}
}
