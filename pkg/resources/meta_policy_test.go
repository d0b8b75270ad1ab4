package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Label and annotation keys that super-cluster controllers act on with the super cluster's
// authority (cloud load balancers, MetalLB, Kata, workload identity, Istio injection) are not
// copied to super objects under the built-in policy; the keys ordinary workloads need are.
func TestDesiredMetaCopiesOnlyAllowedKeys(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "uid-1"}
	obj := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-7c9f-abcde", UID: "p-uid",
		Labels: map[string]string{
			"app": "web", "app.kubernetes.io/name": "web", "pod-template-hash": "7c9f", "controller-revision-hash": "web-5d",
			"statefulset.kubernetes.io/pod-name": "web-0", "apps.kubernetes.io/pod-index": "0", "helm.sh/chart": "web-1.0",
			"batch.kubernetes.io/job-name":     "migrate",
			"metallb.universe.tf/address-pool": "other-tenant", "sidecar.istio.io/inject": "true",
			"azure.workload.identity/use": "true", "example.com/team": "a",
		},
		Annotations: map[string]string{
			"note": "x", "prometheus.io/scrape": "true", "kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z",
			"kubectl.kubernetes.io/default-container":               "web",
			"service.beta.kubernetes.io/aws-load-balancer-internal": "false", "metallb.universe.tf/loadBalancerIPs": "10.0.0.1",
			"io.katacontainers.config.hypervisor.kernel_params": "init=/bin/sh", "iam.gke.io/gcp-service-account": "admin@p.iam",
			"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/admin", "sidecar.istio.io/inject": "true",
		},
	}}
	wantLabels := map[string]string{
		"app": "web", "app.kubernetes.io/name": "web", "pod-template-hash": "7c9f", "controller-revision-hash": "web-5d",
		"statefulset.kubernetes.io/pod-name": "web-0", "apps.kubernetes.io/pod-index": "0", "helm.sh/chart": "web-1.0",
		"batch.kubernetes.io/job-name": "migrate",
	}
	wantAnn := map[string]string{"note": "x",
		"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z", "kubectl.kubernetes.io/default-container": "web"}
	got := DesiredMeta(c, obj, "ns", nil)
	if d := cmp.Diff(wantLabels, userKeys(got.Labels)); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantAnn, userKeys(got.Annotations)); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	wantDropped := []string{
		"annotation eks.amazonaws.com/role-arn", "annotation iam.gke.io/gcp-service-account",
		"annotation io.katacontainers.config.hypervisor.kernel_params", "annotation metallb.universe.tf/loadBalancerIPs",
		"annotation prometheus.io/scrape", "annotation service.beta.kubernetes.io/aws-load-balancer-internal", "annotation sidecar.istio.io/inject",
		"label azure.workload.identity/use", "label example.com/team", "label metallb.universe.tf/address-pool",
		"label sidecar.istio.io/inject",
	}
	if d := cmp.Diff(wantDropped, DroppedMetaKeys(c.Policy(), obj, &corev1.Pod{ObjectMeta: got})); d != "" {
		t.Errorf("DroppedMetaKeys (-want +got):\n%s", d)
	}

	// A policy allowing a prefix copies its keys.
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Metadata: &tenancyv1alpha1.MetadataPolicy{
		AllowedLabelPrefixes: []string{"", "example.com/"}, AllowedAnnotationPrefixes: []string{}}}))
	got = DesiredMeta(c, obj, "ns", nil)
	if got.Labels["example.com/team"] != "a" || got.Labels["helm.sh/chart"] != "" || got.Labels["app"] != "web" {
		t.Errorf("labels under a custom allowlist: %v", userKeys(got.Labels))
	}
	if a := userKeys(got.Annotations); len(a) != 0 {
		t.Errorf("annotations under an empty allowlist: %v", a)
	}
}

// Super namespaces get the tenant namespace's labels under the syncer's mapped keys only
// (no super-cluster policy or webhook selecting on "team", Pod Security levels or a mesh's
// revision acts on them), and its annotations through the same allowlist as every other kind:
// node selectors and controller keys stay out.
func TestDesiredNamespaceMapsLabels(t *testing.T) {
	c := &tenant.Cluster{Name: "t1", UID: "uid-1"}
	tns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "ns-uid",
		Labels: map[string]string{"team": "a", "kubernetes.io/metadata.name": "shop", "app.kubernetes.io/part-of": "shop",
			"pod-security.kubernetes.io/enforce": "privileged", "istio.io/rev": "canary", "example.com/owner": "x",
			"name": "kube-system", "ns.tenancy.vcsyncer.io/forged": "y"},
		Annotations: map[string]string{"scheduler.alpha.kubernetes.io/node-selector": "pool=system", "note": "y",
			"openshift.io/node-selector": "pool=system"}}}
	got := DesiredNamespace(&Env{}, c, tns, nil)
	wantLabels := map[string]string{
		"ns.tenancy.vcsyncer.io/team": "a", "app.kubernetes.io.ns.tenancy.vcsyncer.io/part-of": "shop",
		"pod-security.kubernetes.io.ns.tenancy.vcsyncer.io/enforce": "privileged", "istio.io.ns.tenancy.vcsyncer.io/rev": "canary",
		"example.com.ns.tenancy.vcsyncer.io/owner": "x", "ns.tenancy.vcsyncer.io/name": "kube-system",
		"ns.tenancy.vcsyncer.io.ns.tenancy.vcsyncer.io/forged": "y",
	}
	if d := cmp.Diff(wantLabels, userKeys(got.Labels)); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"note": "y"}, userKeys(got.Annotations)); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	// Mapped labels are not reported; the apiserver's own kubernetes.io/metadata.name is not
	// reported as refused.
	want := []string{"annotation openshift.io/node-selector", "annotation scheduler.alpha.kubernetes.io/node-selector"}
	if d := cmp.Diff(want, DroppedMetaKeys(c.Policy(), tns, got)); d != "" {
		t.Errorf("DroppedMetaKeys (-want +got):\n%s", d)
	}

	// A policy's metadata.allowedNamespaceLabelPrefixes copies its keys as they are too (never
	// a key in the mapped form).
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Metadata: &tenancyv1alpha1.MetadataPolicy{
		AllowedNamespaceLabelPrefixes: []string{"team", "ns.tenancy.vcsyncer.io/"}}}))
	got = DesiredNamespace(&Env{}, c, tns, nil)
	if got.Labels["team"] != "a" || got.Labels["ns.tenancy.vcsyncer.io/team"] != "a" || got.Labels["name"] != "" ||
		got.Labels["ns.tenancy.vcsyncer.io/forged"] != "" {
		t.Errorf("labels under allowedNamespaceLabelPrefixes [team]: %v", userKeys(got.Labels))
	}
}
