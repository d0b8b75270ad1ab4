package configmap_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/resources/secret"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// sizeFixture: a tenant whose policy caps objects at 50 bytes, counted over the whole object
// (policy.ObjectBytes; and sets no quota, so nothing waits for one), with namespace app and
// the given objects in its cache.
func sizeFixture(t *testing.T, objs ...runtime.Object) (*tenant.Cluster, *resources.Env, *fake.Clientset) {
	t.Helper()
	tns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app", UID: "tns-uid"}}
	tenantCS := fake.NewClientset(append([]runtime.Object{tns}, objs...)...)
	c := &tenant.Cluster{Name: "size-t", UID: "uid-size", Client: tenantCS,
		Informers: informers.NewSharedInformerFactory(tenantCS, 0), Recorder: record.NewFakeRecorder(100)}
	ten := resource.MustParse("50")
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		MaxObjectBytes: &ten, Quota: corev1.ResourceList{}, LimitRange: []corev1.LimitRangeItem{}}}))
	add := func(idx interface{ Add(any) error }, o any) {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	add(c.Informers.Core().V1().Namespaces().Informer().GetIndexer(), tns)
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			add(c.Informers.Core().V1().ConfigMaps().Informer().GetIndexer(), o)
		case *corev1.Secret:
			add(c.Informers.Core().V1().Secrets().Informer().GetIndexer(), o)
		}
	}
	superCS := fake.NewClientset()
	env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0)}
	env.SuperInformers.Core().V1().Namespaces().Informer()
	admit.BoundsInformers(env)
	return c, env, superCS
}

func drain(c *tenant.Cluster) []string { return restest.Drain(c.Recorder.(*record.FakeRecorder)) }

// A ConfigMap over limits.maxObjectBytes gets no super copy, is reported once (objectSize),
// and the request is not retried (nil); one at the cap is synced.
func TestOversizedConfigMapIsRefused(t *testing.T) {
	ctx := context.Background()
	big := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "app", UID: "big-uid", ResourceVersion: "3"},
		Data: map[string]string{"a": "123456"}, BinaryData: map[string][]byte{"b": []byte("12345")}} // 57 bytes in all
	fits := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fits", Namespace: "app", UID: "fits-uid"},
		Data: map[string]string{"a": "1234567890"}} // 50 bytes in all
	c, env, superCS := sizeFixture(t, big, fits)
	before := metrics.PolicyDenials("size-t", "ConfigMap", "objectSize")
	for range 2 {
		if err := (configmap.Resource).Downward(ctx, env, c, "app", "big"); err != nil {
			t.Fatalf("Downward of a refused ConfigMap = %v, want nil (no retry)", err)
		}
	}
	superNS := resources.SuperNamespace(c, "app")
	if _, err := superCS.CoreV1().ConfigMaps(superNS).Get(ctx, "big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("oversized ConfigMap copied to the super cluster (%v)", err)
	}
	ev := drain(c)
	if len(ev) != 1 || !strings.Contains(ev[0], "PolicyDenied objectSize:") || !strings.Contains(ev[0], "57 bytes") {
		t.Errorf("events = %q, want one PolicyDenied objectSize event", ev)
	}
	if got := metrics.PolicyDenials("size-t", "ConfigMap", "objectSize") - before; got != 1 {
		t.Errorf("counted %v, want 1", got)
	}
	if err := (configmap.Resource).Downward(ctx, env, c, "app", "fits"); err != nil {
		t.Fatal(err)
	}
	if _, err := superCS.CoreV1().ConfigMaps(superNS).Get(ctx, "fits", metav1.GetOptions{}); err != nil {
		t.Errorf("a ConfigMap at the cap was not synced: %v", err)
	}
}

// A super copy synced before the object grew (or before the policy tightened) is deleted.
func TestConfigMapThatGrewLosesItsSuperCopy(t *testing.T) {
	ctx := context.Background()
	big := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "app", UID: "big-uid", ResourceVersion: "9"},
		Data: map[string]string{"a": "this is more than ten bytes"}}
	c, env, superCS := sizeFixture(t, big)
	superNS := resources.SuperNamespace(c, "app")
	old := configmap.Desired(nil, c, &corev1.ConfigMap{ObjectMeta: big.ObjectMeta, Data: map[string]string{"a": "small"}}, superNS, nil)
	old.UID = "super-uid"
	if _, err := superCS.CoreV1().ConfigMaps(superNS).Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := (configmap.Resource).SuperInformer(env).GetIndexer().Add(old); err != nil {
		t.Fatal(err)
	}
	if err := (configmap.Resource).Downward(ctx, env, c, "app", "big"); err != nil {
		t.Fatal(err)
	}
	if _, err := superCS.CoreV1().ConfigMaps(superNS).Get(ctx, "big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("super copy of a now oversized ConfigMap still there (%v)", err)
	}
}

func TestOversizedSecretIsRefused(t *testing.T) {
	ctx := context.Background()
	big := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "app", UID: "big-uid", ResourceVersion: "3"},
		Data: map[string][]byte{"tls.key": []byte("0123456789A")}}
	c, env, superCS := sizeFixture(t, big)
	if err := (secret.Resource).Downward(ctx, env, c, "app", "big"); err != nil {
		t.Fatalf("Downward of a refused Secret = %v, want nil", err)
	}
	if _, err := superCS.CoreV1().Secrets(resources.SuperNamespace(c, "app")).Get(ctx, "big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("oversized Secret copied to the super cluster (%v)", err)
	}
	if ev := drain(c); len(ev) != 1 || !strings.Contains(ev[0], "objectSize") {
		t.Errorf("events = %q, want one objectSize refusal", ev)
	}
}
