package configmap_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// A super copy is deleted only when the tenant apiserver confirms that the tenant object it was
// synced from is gone: a tenant cache that lags (right after a resume from a checkpoint) must
// not delete a copy that is still wanted.
func TestDownwardConfirmsDeletionWithTheTenantAPIServer(t *testing.T) {
	ctx := context.Background()
	tc := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "app", UID: types.UID("t-uid")},
		Data: map[string]string{"k": "v"}}
	tenantCS := fake.NewClientset(tc.DeepCopy()) // the tenant apiserver has it...
	c := &tenant.Cluster{Name: "t1", UID: "uid-t1", Client: tenantCS,
		Informers: informers.NewSharedInformerFactory(tenantCS, 0), Recorder: record.NewFakeRecorder(10)}
	c.Informers.Core().V1().ConfigMaps().Informer() // ... but the (never started) cache does not

	superNS := resources.SuperNamespace(c, "app")
	sc := configmap.Desired(nil, c, tc, superNS, nil)
	sc.UID = "s-uid"
	superCS := fake.NewClientset(sc.DeepCopy())
	env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0)}
	if err := (configmap.Resource).SuperInformer(env).GetIndexer().Add(sc); err != nil {
		t.Fatal(err)
	}

	err := (configmap.Resource).Downward(ctx, env, c, "app", "cfg")
	if !errors.Is(err, reconcile.ErrTenantCacheBehind) {
		t.Fatalf("Downward with a lagging tenant cache = %v, want ErrTenantCacheBehind", err)
	}
	if _, err := superCS.CoreV1().ConfigMaps(superNS).Get(ctx, "cfg", metav1.GetOptions{}); err != nil {
		t.Fatalf("super copy deleted although the tenant object exists: %v", err)
	}

	// Gone from the tenant apiserver too: now the super copy goes.
	if err := tenantCS.CoreV1().ConfigMaps("app").Delete(ctx, "cfg", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := (configmap.Resource).Downward(ctx, env, c, "app", "cfg"); err != nil {
		t.Fatalf("Downward after the tenant deletion: %v", err)
	}
	if _, err := superCS.CoreV1().ConfigMaps(superNS).Get(ctx, "cfg", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("super copy still there after the tenant object was deleted: %v", err)
	}
}
