package pod

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func tenantPod() *corev1.Pod {
	prio := int32(1000)
	preempt := corev1.PreemptLowerPriority
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "pod-uid",
			Labels:          map[string]string{"app": "web"},
			Annotations:     map[string]string{"note": "x", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", UID: "rs-uid"}},
			Finalizers:      []string{"example.com/f"},
		},
		Spec: corev1.PodSpec{
			NodeName:          "vnode-1",
			Priority:          &prio,
			PreemptionPolicy:  &preempt,
			PriorityClassName: "tenant-high",
			Containers: []corev1.Container{{
				Name: "c", Image: "nginx",
				VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-abcde", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}, {Name: "cfg", MountPath: "/cfg"}},
			}},
			Volumes: []corev1.Volume{
				{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
				}}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBestEffort},
	}
}

func TestDesired(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	existing := Desired(c, tenantPod(), "t1-abcdef-shop", nil)
	existing.Annotations["super-webhook"] = "keep"
	got := Desired(c, tenantPod(), "t1-abcdef-shop", existing)

	f := false
	wantSpec := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "nginx", VolumeMounts: []corev1.VolumeMount{
			{Name: "kube-api-access-abcde", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}, {Name: "cfg", MountPath: "/cfg"}}}},
		Volumes: []corev1.Volume{
			// The tenant token and the tenant CA come from the super Pod's own annotations.
			{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "token",
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['tenancy.vcsyncer.io/sa-token.0']"}}}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "ca.crt",
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['tenancy.vcsyncer.io/tenant-ca.crt']"}}}}},
			}}}},
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}},
		AutomountServiceAccountToken: &f,
	}
	if diff := cmp.Diff(wantSpec, got.Spec); diff != "" {
		t.Errorf("spec mismatch (-want +got):\n%s", diff)
	}
	if got.Namespace != "t1-abcdef-shop" || got.Name != "web" {
		t.Errorf("got %s/%s", got.Namespace, got.Name)
	}
	if len(got.OwnerReferences) != 0 || len(got.Finalizers) != 0 {
		t.Errorf("owner references or finalizers copied: %v %v", got.OwnerReferences, got.Finalizers)
	}
	if got.Status.Phase != "" {
		t.Errorf("status copied: %v", got.Status.Phase)
	}
	wantAnn := map[string]string{
		"note": "x", "super-webhook": "keep",
		conversion.AnnotationTenant: "t1", conversion.AnnotationTenantUID: "tenant-uid",
		conversion.AnnotationNamespace: "shop", conversion.AnnotationName: "web", conversion.AnnotationUID: "pod-uid",
		resources.AnnotationSyncedLabels: "app", resources.AnnotationSyncedAnnotations: "note",
		AnnotationSyncedImages: imagesHash(tenantPod()),
	}
	if diff := cmp.Diff(wantAnn, got.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{"app": "web", conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: "tenant-uid"}
	if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestDesiredDropsSystemPriorityClass(t *testing.T) {
	// A tenant naming system-node-critical must not preempt other tenants' Pods.
	p := tenantPod()
	p.Spec.PriorityClassName = "system-node-critical"
	got := Desired(&tenant.Cluster{Name: "t", UID: "u"}, p, "ns", nil)
	if got.Spec.PriorityClassName != "" || got.Spec.Priority != nil {
		t.Errorf("PriorityClassName = %q, priority %v", got.Spec.PriorityClassName, got.Spec.Priority)
	}
}

func TestNeedsUpdate(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	gates := func(names ...string) []corev1.PodSchedulingGate {
		var out []corev1.PodSchedulingGate
		for _, n := range names {
			out = append(out, corev1.PodSchedulingGate{Name: n})
		}
		return out
	}
	gateNames := func(p *corev1.Pod) []string {
		var out []string
		for _, g := range p.Spec.SchedulingGates {
			out = append(out, g.Name)
		}
		return out
	}
	cases := map[string]struct {
		created func(tp *corev1.Pod)   // the tenant Pod as created, before the super Pod
		tenant  func(tp *corev1.Pod)   // a change in the tenant
		super   func(have *corev1.Pod) // a change in the super cluster by someone else
		want    bool
		check   func(t *testing.T, got *corev1.Pod)
	}{
		"tenant scheduling gate kept": {created: func(p *corev1.Pod) { p.Spec.SchedulingGates = gates("example.com/wait") }, want: false},
		"tenant scheduling gate removed": {
			created: func(p *corev1.Pod) { p.Spec.SchedulingGates = gates("example.com/wait") },
			tenant:  func(p *corev1.Pod) { p.Spec.SchedulingGates = nil }, want: true,
			check: func(t *testing.T, got *corev1.Pod) {
				if len(got.Spec.SchedulingGates) != 0 {
					t.Errorf("super Pod keeps scheduling gates %v the tenant removed", gateNames(got))
				}
			}},
		"one of two tenant gates removed, the super cluster's own gate kept": {
			created: func(p *corev1.Pod) { p.Spec.SchedulingGates = gates("example.com/a", "example.com/b") },
			super: func(h *corev1.Pod) { // a super-cluster admission added its gate at creation
				h.Spec.SchedulingGates = append(h.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: "quota.example/admit"})
			},
			tenant: func(p *corev1.Pod) { p.Spec.SchedulingGates = gates("example.com/b") }, want: true,
			check: func(t *testing.T, got *corev1.Pod) {
				if g := gateNames(got); !cmp.Equal(g, []string{"example.com/b", "quota.example/admit"}) {
					t.Errorf("super Pod scheduling gates %v, want [example.com/b quota.example/admit]", g)
				}
			}},
		"equal":                              {want: false},
		"super annotation added by others":   {super: func(h *corev1.Pod) { h.Annotations["cloud"] = "lb" }, want: false},
		"super label added by others":        {super: func(h *corev1.Pod) { h.Labels["policy.example/zone"] = "a" }, want: false},
		"super nodeName assigned":            {super: func(h *corev1.Pod) { h.Spec.NodeName = "n1" }, want: false},
		"super image rewritten by a webhook": {super: func(h *corev1.Pod) { h.Spec.Containers[0].Image = "nginx@sha256:abc" }, want: false},
		"tenant annotation changed": {tenant: func(p *corev1.Pod) { p.Annotations["note"] = "y" }, want: true,
			check: func(t *testing.T, got *corev1.Pod) {
				if got.Annotations["note"] != "y" {
					t.Errorf("note = %q", got.Annotations["note"])
				}
			}},
		"tenant annotation removed": {tenant: func(p *corev1.Pod) { delete(p.Annotations, "note") }, want: true,
			check: func(t *testing.T, got *corev1.Pod) {
				if _, ok := got.Annotations["note"]; ok {
					t.Error("annotation removed in the tenant kept in super")
				}
			}},
		"tenant label changed": {tenant: func(p *corev1.Pod) { p.Labels["app"] = "other" }, want: true},
		"tenant label removed, others' label kept": {
			tenant: func(p *corev1.Pod) { delete(p.Labels, "app") },
			super:  func(h *corev1.Pod) { h.Labels["policy.example/zone"] = "a" }, want: true,
			check: func(t *testing.T, got *corev1.Pod) {
				if _, ok := got.Labels["app"]; ok || got.Labels["policy.example/zone"] != "a" {
					t.Errorf("labels %v: want app removed and policy.example/zone kept", got.Labels)
				}
			}},
		"tenant image changed": {tenant: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" }, want: true,
			check: func(t *testing.T, got *corev1.Pod) {
				if got.Spec.Containers[0].Image != "nginx:2" {
					t.Errorf("image = %q", got.Spec.Containers[0].Image)
				}
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tp := tenantPod()
			if tc.created != nil {
				tc.created(tp)
			}
			have := Desired(c, tp, "ns", nil) // as created
			if tc.super != nil {
				tc.super(have)
			}
			if tc.tenant != nil {
				tc.tenant(tp)
			}
			want := Desired(c, tp, "ns", have)
			if got := NeedsUpdate(want, have); got != tc.want {
				t.Errorf("NeedsUpdate = %v, want %v", got, tc.want)
			}
			patch, err := UpdatePatch(want, have)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want {
				if patch != nil {
					t.Errorf("patch %s for a Pod that needs no update", patch)
				}
				return
			}
			patched := applyPatch(t, have, patch)
			got := &patched
			if again := Desired(c, tp, "ns", got); NeedsUpdate(again, got) {
				t.Errorf("patch %s did not converge", patch)
			}
			if got.Spec.NodeName != have.Spec.NodeName || len(got.Spec.Volumes) != len(have.Spec.Volumes) {
				t.Errorf("patch %s touched fields it does not own", patch)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

func TestDesiredStatus(t *testing.T) {
	tp := tenantPod()
	tp.Generation = 3
	tp.Status.ObservedGeneration = 3
	sp := tp.DeepCopy()
	sp.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: "10.244.0.7", HostIP: "10.0.0.2", QOSClass: corev1.PodQOSBurstable,
		ObservedGeneration: 1, NominatedNodeName: "n2",
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, ObservedGeneration: 1}},
	}
	got := DesiredStatus(tp, sp)
	if got.PodIP != "10.244.0.7" || got.Phase != corev1.PodRunning || got.HostIP != "10.0.0.2" {
		t.Errorf("status not copied: %+v", got)
	}
	if got.QOSClass != corev1.PodQOSBestEffort || got.ObservedGeneration != 3 || got.NominatedNodeName != "" {
		t.Errorf("tenant-owned status fields not kept: %+v", got)
	}
	if got.Conditions[0].ObservedGeneration != 0 {
		t.Errorf("super observedGeneration leaked into conditions: %d", got.Conditions[0].ObservedGeneration)
	}
}

func TestWasRunInSuper(t *testing.T) {
	p := tenantPod()
	p.Status = corev1.PodStatus{}
	if wasRunInSuper(p) {
		t.Error("Pod with preset nodeName and no status counted as run")
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	if !wasRunInSuper(p) {
		t.Error("bound Pod not counted as run")
	}
	p.Spec.NodeName = ""
	if wasRunInSuper(p) {
		t.Error("unbound Pod counted as run")
	}
}

func TestJustScheduled(t *testing.T) {
	scheduled := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}
	cases := map[string]struct {
		status corev1.PodStatus
		want   bool
	}{
		"only scheduled":   {status: scheduled, want: true},
		"empty status":     {status: corev1.PodStatus{}, want: true},
		"running":          {status: corev1.PodStatus{Phase: corev1.PodRunning}, want: false},
		"pending with ip":  {status: corev1.PodStatus{Phase: corev1.PodPending, PodIP: "10.0.0.1"}, want: false},
		"containers known": {status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "c"}}}, want: false},
		"initialized":      {status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: append(scheduled.Conditions, corev1.PodCondition{Type: corev1.PodInitialized})}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := justScheduled(&corev1.Pod{Status: tc.status}); got != tc.want {
				t.Errorf("justScheduled = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTrimSuperPodKeepsWhatTheSyncerReads(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	p := Desired(c, tenantPod(), "ns", nil)
	p.Spec.NodeName = "n1"
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.3"}
	full := p.DeepCopy()
	trimmed := trimmedSuper(t, p)
	if trimmed.Spec.NodeName != "n1" || trimmed.Status.PodIP != "10.0.0.3" || trimmed.Spec.Volumes != nil {
		t.Fatalf("trimmed %+v", trimmed.Spec)
	}
	want := Desired(c, tenantPod(), "ns", trimmed)
	if NeedsUpdate(want, trimmed) != NeedsUpdate(want, full) {
		t.Fatal("trimming changes the update decision")
	}
	if DesiredStatus(tenantPod(), trimmed).PodIP != DesiredStatus(tenantPod(), full).PodIP {
		t.Fatal("trimming changes the upward status")
	}
}

func TestDesiredRewritesSuperIdentityFieldRefs(t *testing.T) {
	p := tenantPod()
	ref := func(path string) *corev1.ObjectFieldSelector { return &corev1.ObjectFieldSelector{FieldPath: path} }
	p.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: ref("metadata.namespace")}},
		{Name: "UID", ValueFrom: &corev1.EnvVarSource{FieldRef: ref("metadata.uid")}},
		{Name: "NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: ref("metadata.name")}},
		{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: ref("status.podIP")}},
	}
	p.Spec.InitContainers = []corev1.Container{{Name: "init", Env: []corev1.EnvVar{{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: ref("metadata.namespace")}}}}}
	p.Spec.Volumes = append(p.Spec.Volumes,
		corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "ns", FieldRef: ref("metadata.namespace")}, {Path: "labels", FieldRef: ref("metadata.labels")},
		}}}},
		corev1.Volume{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "uid", FieldRef: ref("metadata.uid")}}}},
		}}}})
	before := p.DeepCopy()
	got := Desired(&tenant.Cluster{Name: "t", UID: "u"}, p, "ns", nil)
	nsPath := "metadata.annotations['" + conversion.AnnotationNamespace + "']"
	uidPath := "metadata.annotations['" + conversion.AnnotationUID + "']"
	env := got.Spec.Containers[0].Env
	for i, want := range []string{nsPath, uidPath, "metadata.name", "status.podIP"} {
		if env[i].ValueFrom.FieldRef.FieldPath != want {
			t.Errorf("env %s fieldPath = %q, want %q", env[i].Name, env[i].ValueFrom.FieldRef.FieldPath, want)
		}
	}
	if got.Spec.InitContainers[0].Env[0].ValueFrom.FieldRef.FieldPath != nsPath {
		t.Errorf("init container env not rewritten: %q", got.Spec.InitContainers[0].Env[0].ValueFrom.FieldRef.FieldPath)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range got.Spec.Volumes {
		vols[v.Name] = v
	}
	if fp := vols["info"].DownwardAPI.Items[0].FieldRef.FieldPath; fp != nsPath {
		t.Errorf("downwardAPI volume fieldPath = %q", fp)
	}
	if fp := vols["info"].DownwardAPI.Items[1].FieldRef.FieldPath; fp != "metadata.annotations['"+AnnotationDownwardLabels+"']" {
		t.Errorf("metadata.labels rewritten to %q", fp)
	}
	if fp := vols["proj"].Projected.Sources[0].DownwardAPI.Items[0].FieldRef.FieldPath; fp != uidPath {
		t.Errorf("projected downwardAPI fieldPath = %q", fp)
	}
	// The annotations the rewritten paths read carry the tenant's values.
	if got.Annotations[conversion.AnnotationNamespace] != "shop" || got.Annotations[conversion.AnnotationUID] != "pod-uid" {
		t.Errorf("identity annotations = %v", got.Annotations)
	}
	if diff := cmp.Diff(before, p); diff != "" {
		t.Errorf("Desired mutated the tenant Pod (-before +after):\n%s", diff)
	}
}

func TestDesiredDropsTenantAnnotationsInSyncerDomain(t *testing.T) {
	p := tenantPod()
	p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts = nil, nil
	existing := Desired(&tenant.Cluster{Name: "t", UID: "u"}, p, "ns", nil)
	existing.Annotations[AnnotationTokenRefresh] = "2026-01-01T00:00:00Z"
	p.Annotations[AnnotationTokenSecret] = "someone-elses-secret"
	p.Annotations[AnnotationTokenRefresh] = "2999-01-01T00:00:00Z"
	p.Annotations[conversion.AnnotationTenant] = "other-tenant"
	got := Desired(&tenant.Cluster{Name: "t", UID: "u"}, p, "ns", existing)
	if v, ok := got.Annotations[AnnotationTokenSecret]; ok {
		t.Errorf("tenant-supplied %s = %q copied", AnnotationTokenSecret, v)
	}
	if v := got.Annotations[AnnotationTokenRefresh]; v != "2026-01-01T00:00:00Z" {
		t.Errorf("%s = %q, want the super Pod's own value", AnnotationTokenRefresh, v)
	}
	if v := got.Annotations[conversion.AnnotationTenant]; v != "t" {
		t.Errorf("%s = %q", conversion.AnnotationTenant, v)
	}
}

func TestTokenRefreshTiming(t *testing.T) {
	issued := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got, want := refreshAt(issued, issued.Add(time.Hour)), issued.Add(48*time.Minute); !got.Equal(want) {
		t.Errorf("1h token refreshed at %v, want %v (80%%)", got, want)
	}
	if got, want := refreshAt(issued, issued.Add(365*24*time.Hour)), issued.Add(24*time.Hour); !got.Equal(want) {
		t.Errorf("1y token refreshed at %v, want %v (24h cap)", got, want)
	}
	pod := func(ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
	}
	now := issued
	for name, tc := range map[string]struct {
		ann   map[string]string
		due   bool
		after time.Duration
	}{
		"no tokens":                   {ann: nil},
		"unparseable":                 {ann: map[string]string{AnnotationTokenRefresh: "soon"}, due: true},
		"past":                        {ann: map[string]string{AnnotationTokenRefresh: "2025-12-31T23:00:00Z"}, due: true},
		"in ten minutes":              {ann: map[string]string{AnnotationTokenRefresh: "2026-01-01T00:10:00Z"}, after: 10 * time.Minute},
		"earlier version, unwritten":  {ann: map[string]string{AnnotationTokenSecret: "s"}, due: true},
		"earlier version, in ten min": {ann: map[string]string{AnnotationTokenSecret: "s", AnnotationTokenRefresh: "2026-01-01T00:10:00Z"}, after: 10 * time.Minute},
	} {
		due, after := tokenRefreshDue(pod(tc.ann), now)
		if due != tc.due || after != tc.after {
			t.Errorf("%s: due, after = %v, %v; want %v, %v", name, due, after, tc.due, tc.after)
		}
	}
}

// TestDesiredKeepsOnlyAllowedTolerations: the super Pod carries only the tolerations that
// pods.allowedTolerations lists (built-in: not-ready and unreachable, NoExecute); the others,
// wildcard and control-plane tolerations included, are dropped, and the tenant Pod is not
// modified. An admin's pattern lets a dedicated-node toleration through.
func TestDesiredKeepsOnlyAllowedTolerations(t *testing.T) {
	p := tenantPod()
	p.Spec.Tolerations = []corev1.Toleration{
		{Operator: corev1.TolerationOpExists}, // tolerates every taint
		{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists},
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu"},
	}
	c := &tenant.Cluster{Name: "t", UID: "u"}
	got := Desired(c, p, "ns", nil)
	want := []corev1.Toleration{p.Spec.Tolerations[3]}
	if d := cmp.Diff(want, got.Spec.Tolerations); d != "" {
		t.Errorf("tolerations (-want +got):\n%s", d)
	}
	if len(p.Spec.Tolerations) != 5 {
		t.Error("the tenant Pod was modified")
	}
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Pods: &tenancyv1alpha1.PodPolicy{
		AllowedTolerations: []tenancyv1alpha1.TolerationPattern{{Key: "node.kubernetes.io/not-ready"}, {Key: "dedicated", Value: "gpu"}}}}))
	got = Desired(c, p, "ns", nil)
	want = []corev1.Toleration{p.Spec.Tolerations[3], p.Spec.Tolerations[4]}
	if d := cmp.Diff(want, got.Spec.Tolerations); d != "" {
		t.Errorf("with dedicated=gpu allowed, tolerations (-want +got):\n%s", d)
	}
}

func TestRootCAProjection(t *testing.T) {
	vol := func(items []corev1.KeyToPath) *corev1.PodSpec {
		return &corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: items}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			}}}}}}
	}
	caRef := &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.annotations['" + AnnotationTenantCA + "']"}
	mode := int32(0o400)
	for name, tc := range map[string]struct {
		items []corev1.KeyToPath
		want  []corev1.DownwardAPIVolumeFile // nil: the CA source is dropped
	}{
		"all keys":         {want: []corev1.DownwardAPIVolumeFile{{Path: "ca.crt", FieldRef: caRef}}},
		"ca.crt elsewhere": {items: []corev1.KeyToPath{{Key: "ca.crt", Path: "certs/ca.pem", Mode: &mode}}, want: []corev1.DownwardAPIVolumeFile{{Path: "certs/ca.pem", FieldRef: caRef, Mode: &mode}}},
		"no ca.crt item":   {items: []corev1.KeyToPath{{Key: "other", Path: "x"}}},
	} {
		spec := vol(tc.items)
		rewriteProjectedTokens(spec)
		srcs := spec.Volumes[0].Projected.Sources
		var ca []corev1.DownwardAPIVolumeFile
		found := false
		for _, s := range srcs {
			if s.DownwardAPI == nil || len(s.DownwardAPI.Items) == 0 {
				t.Errorf("%s: source %+v not rewritten to a downwardAPI source with items", name, s)
				continue
			}
			for _, it := range s.DownwardAPI.Items {
				if it.FieldRef.FieldPath == caRef.FieldPath {
					ca, found = append(ca, it), true
				}
			}
		}
		if d := cmp.Diff(tc.want, ca); d != "" || found != (tc.want != nil) {
			t.Errorf("%s: CA items (-want +got):\n%s", name, d)
		}
	}
}

// TestSchedulingGateRemovalFromCaches: the downward path compares the trimmed tenant Pod of
// the tenant cache with the trimmed super Pod of the super cache; both keep the scheduling
// gates, so a gate the tenant removed is removed from the super Pod.
func TestSchedulingGateRemovalFromCaches(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "tenant-uid"}
	tp := tenantPod()
	tp.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
	super := Desired(c, tp, "ns", nil)
	full := super.DeepCopy()
	have := trimmedSuper(t, super)
	tp.Spec.SchedulingGates = nil
	conversion.TrimPodSpec(tp) // the tenant cache's transform
	want := Desired(c, tp, "ns", have)
	if !NeedsUpdate(want, have) {
		t.Fatal("NeedsUpdate = false after the tenant removed its scheduling gate")
	}
	patch, err := UpdatePatch(want, have)
	if err != nil {
		t.Fatal(err)
	}
	got := applyPatch(t, full, patch)
	if len(got.Spec.SchedulingGates) != 0 {
		t.Errorf("patch %s leaves the super Pod's scheduling gates %v", patch, got.Spec.SchedulingGates)
	}
}

// trimmedSuper returns super Pod p as the super cache holds it (TrimSuperPod). p is modified.
func trimmedSuper(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	out, err := TrimSuperPod(p)
	if err != nil {
		t.Fatal(err)
	}
	trimmed, ok := podcache.From(out)
	if !ok {
		t.Fatalf("TrimSuperPod returned %T, want a cached Pod", out)
	}
	return trimmed
}
