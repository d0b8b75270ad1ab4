package syncer_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// testNoFights checks, on tenant Pod ns/name and its super copy in superNS, that labels and
// annotations other super-cluster controllers add are kept, that an image a super-cluster
// webhook rewrote is not reverted while the tenant's image is unchanged, and that keys the
// tenant removes are removed from the super copy.
func testNoFights(t *testing.T, super kubernetes.Interface, tc *localcluster.ControlPlane, superNS, ns, name string) {
	ctx := context.Background()
	tenantPatch := func(patch string) {
		t.Helper()
		if _, err := tc.Client.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	superPod := func(ctx context.Context) (*corev1.Pod, error) {
		return super.CoreV1().Pods(superNS).Get(ctx, name, metav1.GetOptions{})
	}

	tenantPatch(`{"metadata":{"labels":{"tier":"front"},"annotations":{"team":"a"}}}`)
	itest.Eventually(t, time.Minute, "tenant label and annotation synced", func(ctx context.Context) error {
		sp, err := superPod(ctx)
		if err != nil {
			return err
		}
		if sp.Labels["tier"] != "front" || sp.Annotations["team"] != "a" {
			return itest.Errorf("labels %v annotations %v", sp.Labels, sp.Annotations)
		}
		return nil
	})
	// Others in the super cluster: a label, an annotation, an image rewrite.
	sp, err := superPod(ctx)
	if err != nil {
		t.Fatal(err)
	}
	image := sp.Spec.Containers[0].Image
	patch := `{"metadata":{"labels":{"policy.example/zone":"a"},"annotations":{"example.com/lb":"1"}},` +
		`"spec":{"containers":[{"name":"` + sp.Spec.Containers[0].Name + `","image":"` + image + `-pinned"}]}}`
	if _, err := super.CoreV1().Pods(superNS).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The tenant removes its label and annotation.
	tenantPatch(`{"metadata":{"labels":{"tier":null},"annotations":{"team":null}}}`)
	itest.Eventually(t, time.Minute, "tenant removals synced, others' changes kept", func(ctx context.Context) error {
		sp, err := superPod(ctx)
		if err != nil {
			return err
		}
		if _, ok := sp.Labels["tier"]; ok {
			return itest.Errorf("label removed in the tenant still on the super Pod: %v", sp.Labels)
		}
		if _, ok := sp.Annotations["team"]; ok {
			return itest.Errorf("annotation removed in the tenant still on the super Pod: %v", sp.Annotations)
		}
		return nil
	})
	itest.Consistently(t, 3*time.Second, "others' changes kept", func(ctx context.Context) error {
		sp, err := superPod(ctx)
		if err != nil {
			return err
		}
		if sp.Labels["policy.example/zone"] != "a" || sp.Annotations["example.com/lb"] != "1" || sp.Spec.Containers[0].Image != image+"-pinned" {
			return itest.Errorf("labels %v annotations %v image %s", sp.Labels, sp.Annotations, sp.Spec.Containers[0].Image)
		}
		return nil
	})
	// A tenant image change still flows down.
	tenantPatch(`{"spec":{"containers":[{"name":"` + sp.Spec.Containers[0].Name + `","image":"` + image + `-v2"}]}}`)
	itest.Eventually(t, time.Minute, "tenant image change synced", func(ctx context.Context) error {
		sp, err := superPod(ctx)
		if err != nil {
			return err
		}
		if sp.Spec.Containers[0].Image != image+"-v2" {
			return itest.Errorf("image %s", sp.Spec.Containers[0].Image)
		}
		return nil
	})
}

// testKeepsFinalizers checks that an update flowing down keeps the finalizers and owner
// references the super cluster put on a super copy (the syncer never sets them).
func testKeepsFinalizers(t *testing.T, super kubernetes.Interface, tc *localcluster.ControlPlane, superNS, ns string) {
	ctx := context.Background()
	itest.Created(t)(tc.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "finalized"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}))
	itest.Eventually(t, time.Minute, "super ConfigMap finalized", func(ctx context.Context) error {
		_, err := super.CoreV1().ConfigMaps(superNS).Get(ctx, "finalized", metav1.GetOptions{})
		return err
	})
	const fin = "example.com/super-cleanup"
	patch := `{"metadata":{"finalizers":["` + fin + `"]}}`
	if _, err := super.CoreV1().ConfigMaps(superNS).Patch(ctx, "finalized", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = super.CoreV1().ConfigMaps(superNS).Patch(context.Background(), "finalized", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if _, err := tc.Client.CoreV1().ConfigMaps(ns).Patch(ctx, "finalized", types.MergePatchType, []byte(`{"data":{"v":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, time.Minute, "update synced with the finalizer kept", func(ctx context.Context) error {
		sc, err := super.CoreV1().ConfigMaps(superNS).Get(ctx, "finalized", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sc.Data["v"] != "2" {
			return itest.Errorf("data %v", sc.Data)
		}
		if len(sc.Finalizers) != 1 || sc.Finalizers[0] != fin {
			return itest.Errorf("finalizers %v, want [%s]", sc.Finalizers, fin)
		}
		return nil
	})
}

// testServiceNoLoop checks that a LoadBalancer Service with externalTrafficPolicy Local and
// dual-stack-capable fields (ipFamilyPolicy PreferDualStack) is synced once and then left
// alone: the super cluster allocates its own health-check node port, IPs and families, and the
// syncer never writes the super copy again while nothing changes in the tenant.
func testServiceNoLoop(t *testing.T, super kubernetes.Interface, tc *localcluster.ControlPlane, superNS, ns string) {
	ctx := context.Background()
	prefer := corev1.IPFamilyPolicyPreferDualStack
	itest.Created(t)(tc.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "lb-local"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
			IPFamilyPolicy: &prefer, Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}))
	var rv string
	itest.Eventually(t, time.Minute, "super LoadBalancer Service", func(ctx context.Context) error {
		s, err := super.CoreV1().Services(superNS).Get(ctx, "lb-local", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.Spec.HealthCheckNodePort == 0 || s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
			return itest.Errorf("healthCheckNodePort %d externalTrafficPolicy %q", s.Spec.HealthCheckNodePort, s.Spec.ExternalTrafficPolicy)
		}
		rv = s.ResourceVersion
		return nil
	})
	itest.Consistently(t, 4*time.Second, "no update loop on the super Service", func(ctx context.Context) error {
		s, err := super.CoreV1().Services(superNS).Get(ctx, "lb-local", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.ResourceVersion != rv {
			return itest.Errorf("super Service rewritten (resourceVersion %s -> %s) while nothing changed", rv, s.ResourceVersion)
		}
		return nil
	})
}
