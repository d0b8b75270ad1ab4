package configmap_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
)

// A tenant object with label or annotation keys outside the allowlist is synced without them,
// and the tenant is told once per object version which keys were left out.
func TestDownwardReportsDroppedMetadataKeysOnce(t *testing.T) {
	h := restest.New(t, "cm-meta", "app")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "app", UID: "cm-uid", ResourceVersion: "1",
		Labels:      map[string]string{"app": "web", "metallb.universe.tf/address-pool": "b"},
		Annotations: map[string]string{"iam.gke.io/gcp-service-account": "admin@p.iam"}}}
	inf := h.C.Informers.Core().V1().ConfigMaps().Informer()
	h.Tenant(inf, cm)
	r := configmap.Resource
	superNS := resources.SuperNamespace(h.C, "app")
	pass := func() *corev1.ConfigMap {
		t.Helper()
		if err := r.Downward(h.Ctx(), h.Env, h.C, "app", "cfg"); err != nil {
			t.Fatalf("Downward = %v", err)
		}
		s, err := h.SuperCS.CoreV1().ConfigMaps(superNS).Get(h.Ctx(), "cfg", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("not synced: %v", err)
		}
		h.Super(r.SuperInformer(h.Env), s)
		return s
	}
	s := pass()
	if _, ok := s.Labels["metallb.universe.tf/address-pool"]; ok || s.Labels["app"] != "web" {
		t.Errorf("super labels %v", s.Labels)
	}
	if _, ok := s.Annotations["iam.gke.io/gcp-service-account"]; ok {
		t.Errorf("super annotations %v", s.Annotations)
	}
	pass()
	ev := h.Events()
	if len(ev) != 1 || !strings.Contains(ev[0], "Warning PolicyDenied metadataKey: ") ||
		!strings.Contains(ev[0], "label metallb.universe.tf/address-pool") || !strings.Contains(ev[0], "annotation iam.gke.io/gcp-service-account") {
		t.Errorf("events %q, want one metadataKey report naming both keys", ev)
	}
	if got := h.Denials(resources.KindConfigMap, policy.RuleMetadataKey); got != 1 {
		t.Errorf("denials = %v, want 1", got)
	}
	// A new version of the object with the same keys is reported again; one without is not.
	cm = cm.DeepCopy()
	cm.ResourceVersion = "2"
	h.Tenant(inf, cm)
	pass()
	cm = cm.DeepCopy()
	cm.ResourceVersion, cm.Labels, cm.Annotations = "3", map[string]string{"app": "web"}, nil
	h.Tenant(inf, cm)
	pass()
	if ev := h.Events(); len(ev) != 1 {
		t.Errorf("events after two new versions (one with dropped keys) = %q", ev)
	}
	if admit.IsRefused(h.C, resources.KindConfigMap, cm) {
		t.Error("a synced object with filtered keys counts as refused (remediation would skip it)")
	}
}
