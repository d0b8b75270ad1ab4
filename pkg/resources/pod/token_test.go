package pod

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestTokenRefreshesDue(t *testing.T) {
	env := &resources.Env{SuperInformers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	store := env.SuperInformers.Core().V1().Pods().Informer().GetStore()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	add := func(name string, ann map[string]string, owned, deleting bool) {
		m := metav1.ObjectMeta{Namespace: "t1-abc-shop", Name: name, Annotations: ann}
		if owned {
			conversion.Stamp(&m, conversion.Owner{Tenant: "t1", TenantUID: "u1", Namespace: "shop", Name: name, UID: "uid-" + name})
		}
		if deleting {
			ts := metav1.NewTime(now)
			m.DeletionTimestamp = &ts
		}
		_ = store.Add(&corev1.Pod{ObjectMeta: m, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	}
	add("due", map[string]string{AnnotationTokenRefresh: "2026-01-01T11:59:00Z"}, true, false)
	add("unreadable", map[string]string{AnnotationTokenRefresh: "soon"}, true, false)
	add("earlier-version-unwritten", map[string]string{AnnotationTokenSecret: "s"}, true, false)
	add("later", map[string]string{AnnotationTokenRefresh: "2026-01-01T12:30:00Z"}, true, false)
	add("no-token", nil, true, false)
	add("deleting", map[string]string{AnnotationTokenRefresh: "2026-01-01T11:59:00Z"}, true, true)
	add("foreign", map[string]string{AnnotationTokenRefresh: "2026-01-01T11:59:00Z"}, false, false)

	got := map[string]resources.Request{}
	for _, r := range TokenRefreshesDue(env, now) {
		got[r.Name] = r
	}
	if len(got) != 3 || got["due"].Tenant != "t1" || got["due"].Namespace != "shop" || got["due"].Kind != resources.KindPod ||
		got["unreadable"].Name != "unreadable" || got["earlier-version-unwritten"].Name != "earlier-version-unwritten" {
		t.Errorf("due = %+v, want due, unreadable and earlier-version-unwritten of tenant t1 in namespace shop", got)
	}
}

func TestRootCAPlainReferences(t *testing.T) {
	cmRef := corev1.LocalObjectReference{Name: "kube-root-ca.crt"}
	spec := &corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef}}},
			{Name: "other", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
		},
		Containers: []corev1.Container{{
			Name: "c",
			Env: []corev1.EnvVar{{Name: "CA", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: cmRef, Key: "ca.crt"}}},
				{Name: "OTHER", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: cmRef, Key: "other"}}}},
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: cmRef}},
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
		}},
	}
	if _, needsCA := tokenSources(spec); !needsCA {
		t.Error("tokenSources: a configMap volume of kube-root-ca.crt needs the tenant CA")
	}
	if !rewriteProjectedTokens(spec) {
		t.Fatal("nothing rewritten")
	}
	caPath := "metadata.annotations['" + AnnotationTenantCA + "']"
	if v := spec.Volumes[0]; v.DownwardAPI == nil || len(v.DownwardAPI.Items) != 1 || v.DownwardAPI.Items[0].FieldRef.FieldPath != caPath ||
		v.DownwardAPI.Items[0].Path != "ca.crt" {
		t.Errorf("volume ca = %+v, want ca.crt from the tenant CA annotation", v.VolumeSource)
	}
	if v := spec.Volumes[1]; v.ConfigMap == nil || v.ConfigMap.Name != "app" {
		t.Errorf("an unrelated ConfigMap volume changed: %+v", v.VolumeSource)
	}
	c := spec.Containers[0]
	if r := c.Env[0].ValueFrom.FieldRef; r == nil || r.FieldPath != caPath {
		t.Errorf("env CA = %+v", c.Env[0].ValueFrom)
	}
	if r := c.Env[1].ValueFrom.ConfigMapKeyRef; r == nil || r.Name != "kube-root-ca.crt" || r.Key != "other" {
		t.Errorf("env of another kube-root-ca.crt key = %+v, want it left as it is", c.Env[1].ValueFrom)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef.Name != "app" {
		t.Errorf("envFrom = %+v, want only app", c.EnvFrom)
	}
}

// A tenant admin can write anything into its own kube-root-ca.crt: a bundle too large for the
// super Pod's annotations is refused before anything is requested or written.
func TestTenantCATooLarge(t *testing.T) {
	inf := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	c := &tenant.Cluster{Name: "t1", Informers: inf}
	store := inf.Core().V1().ConfigMaps().Informer().GetStore()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "kube-root-ca.crt"},
		Data: map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n"}}
	_ = store.Add(cm)
	if ca, err := tenantCA(c, "shop"); err != nil || ca != cm.Data["ca.crt"] {
		t.Fatalf("a small CA: %q, %v", ca, err)
	}
	big := cm.DeepCopy()
	big.Data["ca.crt"] = strings.Repeat("A", maxTenantCABytes+1)
	_ = store.Update(big)
	if _, err := tenantCA(c, "shop"); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a CA of %d bytes: err = %v, want a refusal that says why", maxTenantCABytes+1, err)
	}
}
