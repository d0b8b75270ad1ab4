package configmap_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/resources/namespace"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Objects of a tenant namespace whose super namespace holds another tenant namespace of the
// same tenant (a 63-character name and the tail of its cut form) are never synced into it, and
// never delete the other namespace's super objects of the same name.
func TestObjectsOfACollidingNamespaceStayOut(t *testing.T) {
	ctx := context.Background()
	c := &tenant.Cluster{Name: "team-a", UID: "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11", Recorder: record.NewFakeRecorder(100)}
	long, short, superNS := restest.CollidingNamespaces(t, c)
	tLong := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: long, UID: "tns-long", ResourceVersion: "1"}}
	tShort := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: short, UID: "tns-short", ResourceVersion: "1"}}
	cmLong := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: long, UID: "cm-long"}, Data: map[string]string{"from": "long"}}
	cmShort := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: short, UID: "cm-short"}, Data: map[string]string{"from": "short"}}
	extra := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "extra", Namespace: short, UID: "cm-extra"}}
	tenantObjs := []runtime.Object{tLong, tShort, cmLong, cmShort, extra}
	tenantCS := fake.NewClientset(tenantObjs...)
	c.Client, c.Informers = tenantCS, informers.NewSharedInformerFactory(tenantCS, 0)
	for _, o := range tenantObjs {
		var err error
		switch o.(type) {
		case *corev1.Namespace:
			err = (namespace.Resource).TenantInformer(c).GetIndexer().Add(o)
		default:
			err = (configmap.Resource).TenantInformer(c).GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	sns := resources.DesiredNamespace(&resources.Env{}, c, tLong, nil)
	sCM := configmap.Desired(nil, c, cmLong, superNS, nil)
	superCS := fake.NewClientset(sns.DeepCopy(), sCM.DeepCopy())
	env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0)}
	if err := (namespace.Resource).SuperInformer(env).GetIndexer().Add(sns); err != nil {
		t.Fatal(err)
	}
	if err := (configmap.Resource).SuperInformer(env).GetIndexer().Add(sCM); err != nil {
		t.Fatal(err)
	}

	for i := range 3 {
		err := (configmap.Resource).Downward(ctx, env, c, short, "cfg")
		if !errors.Is(err, admit.ErrNamespaceCollision) {
			t.Errorf("attempt %d: Downward(%s/cfg) = %v, want ErrNamespaceCollision", i, short, err)
		}
		got, gerr := superCS.CoreV1().ConfigMaps(superNS).Get(ctx, "cfg", metav1.GetOptions{})
		if gerr != nil {
			t.Fatalf("attempt %d (err %v): the super copy of %s/cfg is gone: %v", i, err, long, gerr)
		}
		if got.Data["from"] != "long" || got.Annotations[conversion.AnnotationNamespace] != long {
			t.Fatalf("attempt %d: super %s/cfg = %v %v, want the copy of %s/cfg", i, superNS, got.Data, got.Annotations, long)
		}
	}
	err := (configmap.Resource).Downward(ctx, env, c, short, "extra")
	if _, gerr := superCS.CoreV1().ConfigMaps(superNS).Get(ctx, "extra", metav1.GetOptions{}); !apierrors.IsNotFound(gerr) {
		t.Fatalf("ConfigMap %s/extra synced into the super namespace of %s (err %v, get %v)", short, long, err, gerr)
	}
	if !errors.Is(err, admit.ErrNamespaceCollision) {
		t.Errorf("Downward(%s/extra) = %v, want ErrNamespaceCollision", short, err)
	}
	// Also when the super Namespace is not cached yet: the object at the mapped name tells.
	if err := (namespace.Resource).SuperInformer(env).GetIndexer().Delete(sns); err != nil {
		t.Fatal(err)
	}
	if err := (configmap.Resource).Downward(ctx, env, c, short, "cfg"); !errors.Is(err, admit.ErrNamespaceCollision) {
		t.Errorf("Downward(%s/cfg) without a cached super Namespace = %v, want ErrNamespaceCollision", short, err)
	}
	if _, err := superCS.CoreV1().ConfigMaps(superNS).Get(ctx, "cfg", metav1.GetOptions{}); err != nil {
		t.Fatalf("the super copy of %s/cfg is gone: %v", long, err)
	}
	if err := (configmap.Resource).Downward(ctx, env, c, short, "extra"); !errors.Is(err, admit.ErrNamespaceCollision) {
		t.Errorf("Downward(%s/extra) without a cached super Namespace = %v, want ErrNamespaceCollision (create answered AlreadyExists)", short, err)
	}
	if _, err := superCS.CoreV1().ConfigMaps(superNS).Get(ctx, "extra", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ConfigMap %s/extra synced into the super namespace of %s: %v", short, long, err)
	}
	// One report, on the tenant Namespace.
	rec := c.Recorder.(*record.FakeRecorder)
	if n := len(rec.Events); n != 1 {
		t.Errorf("%d events, want one (on Namespace %s)", n, short)
	}
}
