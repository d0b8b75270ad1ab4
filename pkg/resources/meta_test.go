package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// userKeys drops the ownership stamps and the synced-keys records.
func userKeys(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if conversion.IsOwnKey(k) || k == conversion.AnnotationTenantUID || k == AnnotationSyncedLabels || k == AnnotationSyncedAnnotations {
			continue
		}
		out[k] = v
	}
	return out
}

func TestDesiredMeta(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "uid-1"}
	tenantObj := func(labels, ann map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cfg", UID: "cm-uid", Labels: labels, Annotations: ann}}
	}
	// super returns the super object as the syncer created it from t, then changed by others.
	super := func(t *corev1.ConfigMap, others func(m *metav1.ObjectMeta)) *corev1.ConfigMap {
		s := &corev1.ConfigMap{ObjectMeta: DesiredMeta(c, t, "ns", nil)}
		if others != nil {
			others(&s.ObjectMeta)
		}
		return s
	}
	orig := tenantObj(map[string]string{"app": "web", "tier": "front"}, map[string]string{"note": "x"})
	for name, tc := range map[string]struct {
		tenant     *corev1.ConfigMap
		existing   *corev1.ConfigMap
		wantLabels map[string]string
		wantAnn    map[string]string
	}{
		"create": {tenant: orig, existing: nil,
			wantLabels: map[string]string{"app": "web", "tier": "front"}, wantAnn: map[string]string{"note": "x"}},
		"create with a typed nil existing": {tenant: orig, existing: (*corev1.ConfigMap)(nil),
			wantLabels: map[string]string{"app": "web", "tier": "front"}, wantAnn: map[string]string{"note": "x"}},
		"keys others added are kept": {tenant: orig,
			existing:   super(orig, func(m *metav1.ObjectMeta) { m.Labels["zone"] = "a"; m.Annotations["lb"] = "1" }),
			wantLabels: map[string]string{"app": "web", "tier": "front", "zone": "a"}, wantAnn: map[string]string{"note": "x", "lb": "1"}},
		"keys the tenant removed are removed": {tenant: tenantObj(map[string]string{"app": "web"}, nil), existing: super(orig, nil),
			wantLabels: map[string]string{"app": "web"}, wantAnn: map[string]string{}},
		"a key others set first stays theirs": {
			tenant: tenantObj(map[string]string{"app": "web", "tier": "front", "netpol/group": "open"}, map[string]string{"note": "x", "lb": "mine"}),
			existing: super(orig, func(m *metav1.ObjectMeta) {
				m.Labels["netpol/group"] = "isolated"
				m.Annotations["lb"] = "1"
			}),
			wantLabels: map[string]string{"app": "web", "tier": "front", "netpol/group": "isolated"}, wantAnn: map[string]string{"note": "x", "lb": "1"}},
		"denied and syncer-domain annotations are never copied": {
			tenant: tenantObj(nil, map[string]string{"eks.amazonaws.com/role-arn": "arn", "k8s.v1.cni.cncf.io/networks": "other/net",
				conversion.AnnotationTenant: "forged", "kubectl.kubernetes.io/last-applied-configuration": "{}", "ok": "1"}),
			wantLabels: map[string]string{}, wantAnn: map[string]string{"ok": "1"}},
		"an object written before the records: labels were the syncer's, annotations kept": {tenant: tenantObj(map[string]string{"app": "web"}, nil),
			existing:   &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "old", "stale": "x"}, Annotations: map[string]string{"note": "x"}}},
			wantLabels: map[string]string{"app": "web"}, wantAnn: map[string]string{"note": "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			var ex metav1.Object
			if tc.existing != nil || name == "create with a typed nil existing" {
				ex = tc.existing
			}
			got := DesiredMeta(c, tc.tenant, "ns", ex)
			if d := cmp.Diff(tc.wantLabels, userKeys(got.Labels)); d != "" {
				t.Errorf("labels (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantAnn, userKeys(got.Annotations)); d != "" {
				t.Errorf("annotations (-want +got):\n%s", d)
			}
			if o, ok := conversion.OwnerOf(&metav1.ObjectMeta{Labels: got.Labels, Annotations: got.Annotations}); !ok || o.Tenant != "t1" {
				t.Errorf("ownership %+v %v", o, ok)
			}
			// Converged: computing again from the result changes nothing.
			again := DesiredMeta(c, tc.tenant, "ns", &corev1.ConfigMap{ObjectMeta: got})
			if !MetaEqual(&corev1.ConfigMap{ObjectMeta: again}, &corev1.ConfigMap{ObjectMeta: got}) {
				t.Errorf("not a fixed point:\n%v\n%v", got, again)
			}
		})
	}
}

func TestDesiredNamespaceLabels(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "uid-1"}
	env := &Env{NamespaceLabels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}
	tns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "ns-uid", Labels: map[string]string{
		"team": "a", "gone-later": "x", "pod-security.kubernetes.io/enforce": "privileged"}}}
	created := DesiredNamespace(env, c, tns, nil)
	if got := created.Labels["pod-security.kubernetes.io/enforce"]; got != "baseline" {
		t.Fatalf("Pod Security level on creation = %q", got)
	}
	// Admins add and change labels on the super namespace afterwards.
	created.Labels["zone"] = "restricted"
	created.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	// The tenant sets the admins' key (it only ever reaches the super namespace mapped) and
	// drops one of its own.
	tns.Labels = map[string]string{"team": "a", "zone": "trusted"}
	got := DesiredNamespace(env, c, tns, created)
	want := map[string]string{"ns.tenancy.vcsyncer.io/team": "a", "ns.tenancy.vcsyncer.io/zone": "trusted",
		"zone": "restricted", "pod-security.kubernetes.io/enforce": "restricted"}
	if d := cmp.Diff(want, userKeys(got.Labels)); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
}
