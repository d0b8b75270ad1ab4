package pod_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/namespace"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// A tenant Pod of a namespace whose super namespace holds another namespace of the same tenant
// (a 63-character name and the tail of its cut form) never deletes the holder's super Pod of
// the same name: not when it exists (it looks like a recreated Pod), not when it is gone.
func TestPodOfACollidingNamespaceLeavesTheHoldersPod(t *testing.T) {
	ctx := context.Background()
	c := &tenant.Cluster{Name: "team-a", UID: "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11", Recorder: record.NewFakeRecorder(100)}
	long, short, superNS := restest.CollidingNamespaces(t, c)
	tLong := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: long, UID: "tns-long", ResourceVersion: "1"}}
	tShort := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: short, UID: "tns-short", ResourceVersion: "1"}}
	pShort := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: short, UID: "pod-short", ResourceVersion: "1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	tenantCS := fake.NewClientset(tLong, tShort, pShort)
	c.Client, c.Informers = tenantCS, informers.NewSharedInformerFactory(tenantCS, 0)
	for _, ns := range []*corev1.Namespace{tLong, tShort} {
		if err := (namespace.Resource).TenantInformer(c).GetIndexer().Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	tenantPods := (pod.Resource).TenantInformer(c).GetIndexer()
	if err := tenantPods.Add(pShort); err != nil {
		t.Fatal(err)
	}

	sns := resources.DesiredNamespace(&resources.Env{}, c, tLong, nil)
	sPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: superNS, UID: "super-pod"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	conversion.Stamp(&sPod.ObjectMeta, conversion.Owner{Tenant: c.Name, TenantUID: c.UID, Namespace: long, Name: "p", UID: "pod-long"})
	superCS := fake.NewClientset(sns.DeepCopy(), sPod.DeepCopy())
	env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0)}
	if err := (pod.Resource).SuperInformer(env).GetIndexer().Add(sPod); err != nil {
		t.Fatal(err)
	}
	superNamespaces := (namespace.Resource).SuperInformer(env).GetIndexer()

	check := func(step string) {
		t.Helper()
		err := (pod.Resource).Downward(ctx, env, c, short, "p")
		if _, gerr := superCS.CoreV1().Pods(superNS).Get(ctx, "p", metav1.GetOptions{}); gerr != nil {
			t.Fatalf("%s: Downward(%s/p) = %v; the super Pod of %s/p is gone: %v", step, short, err, long, gerr)
		}
		if !errors.Is(err, admit.ErrNamespaceCollision) {
			t.Errorf("%s: Downward(%s/p) = %v, want ErrNamespaceCollision", step, short, err)
		}
	}
	check("super Namespace not cached")
	if err := superNamespaces.Add(sns); err != nil {
		t.Fatal(err)
	}
	check("super Namespace cached")
	if err := tenantPods.Delete(pShort); err != nil {
		t.Fatal(err)
	}
	if err := tenantCS.CoreV1().Pods(short).Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	check("tenant Pod deleted")
	if err := superNamespaces.Delete(sns); err != nil {
		t.Fatal(err)
	}
	check("tenant Pod deleted, super Namespace not cached")
}
