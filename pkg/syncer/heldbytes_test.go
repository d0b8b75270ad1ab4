package syncer

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// heldPolicy sets tenant c's limits.maxCachedBytes.
func heldPolicy(c *tenant.Cluster, cachedBytes string) {
	q := resource.MustParse(cachedBytes)
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		MaxCachedBytes: &q, Quota: corev1.ResourceList{}, LimitRange: []corev1.LimitRangeItem{}}}))
}

// A ConfigMap held out of the tenant cache (a stub beyond limits.maxCachedBytes) is read from
// the tenant apiserver, put in the cache in full and enqueued once room appears (here: the cap
// is raised); deleting a held object frees its bytes.
func TestHeldOutObjectIsReadmittedWhenRoomAppears(t *testing.T) {
	ctx := context.Background()
	s, c := capFixture(t, "held", 100)
	heldPolicy(c, "1Ki")
	mk := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"},
			Data: map[string]string{"v": strings.Repeat("x", 800)}}
	}
	idx := configmap.Resource.TenantInformer(c).GetIndexer()
	for _, name := range []string{"a", "b"} {
		o := mk(name)
		if _, err := c.Client.CoreV1().ConfigMaps("app").Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := idx.Add(c.Readmit(o)); err != nil {
			t.Fatal(err)
		}
	}
	cached, _, _ := idx.GetByKey("app/b")
	if !tenant.IsHeldOut(cached) {
		t.Fatal("b fits beside a in 1Ki: the fixture is wrong")
	}
	if s.gate.ReadmitOnce(c) {
		t.Error("ReadmitOnce reported more work with no room")
	}
	if cached, _, _ := idx.GetByKey("app/b"); !tenant.IsHeldOut(cached) {
		t.Fatal("b was readmitted without room")
	}
	heldPolicy(c, "4Ki")
	before := s.down.Size()
	s.gate.ReadmitOnce(c)
	cached, _, _ = idx.GetByKey("app/b")
	if cm, ok := cached.(*corev1.ConfigMap); !ok || tenant.IsHeldOut(cm) || len(cm.Data["v"]) != 800 {
		t.Fatalf("b is not in the cache in full after the cap was raised: %+v", cached)
	}
	if held, out := c.Held.Totals(); out != 0 || held < 1600 {
		t.Errorf("held %d bytes, %d held out; want both held, none out", held, out)
	}
	if s.down.Size() <= before {
		t.Error("the readmitted ConfigMap was not enqueued")
	}
	a, _, _ := idx.GetByKey("app/a")
	s.gate.ReleaseHeld(c, "ConfigMap", a)
	if held, _ := c.Held.Totals(); held >= 1600 {
		t.Errorf("deleting a freed nothing: %d bytes held", held)
	}
}
