package namespace

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// withLimitRange gives c the built-in policy plus a LimitRange (none is built in: it changes
// tenant Pods; a provider may still set one).
func withLimitRange(c *tenant.Cluster) *tenant.Cluster {
	c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{
		LimitRange: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
			Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}))
	return c
}

// The namespace reconcile (run for every namespace on a policy change, and on the bounds'
// own super events) recreates a ResourceQuota or LimitRange deleted in the super cluster.
func TestDownwardRepairsBounds(t *testing.T) {
	ctx := context.Background()
	tns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "ns-uid"}}
	tenantCS := fake.NewClientset(tns)
	c := &tenant.Cluster{Name: "t", UID: "u", Client: tenantCS, Informers: informers.NewSharedInformerFactory(tenantCS, 0),
		Recorder: record.NewFakeRecorder(10)}
	withLimitRange(c)
	if err := c.Informers.Core().V1().Namespaces().Informer().GetIndexer().Add(tns); err != nil {
		t.Fatal(err)
	}
	sns := resources.DesiredNamespace(&resources.Env{}, c, tns, nil)
	sns.UID = "super-ns-uid"
	superCS := fake.NewClientset(sns)
	env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0)}
	admit.BoundsInformers(env)
	if err := (Resource).SuperInformer(env).GetIndexer().Add(sns); err != nil {
		t.Fatal(err)
	}
	if err := (Resource).Downward(ctx, env, c, "", "shop"); err != nil {
		t.Fatalf("Downward = %v, want nil (a pending quota status is not the namespace's error)", err)
	}
	if _, err := superCS.CoreV1().ResourceQuotas(sns.Name).Get(ctx, admit.QuotaName, metav1.GetOptions{}); err != nil {
		t.Errorf("quota not recreated: %v", err)
	}
	if _, err := superCS.CoreV1().LimitRanges(sns.Name).Get(ctx, admit.LimitRangeName, metav1.GetOptions{}); err != nil {
		t.Errorf("limit range not recreated: %v", err)
	}
}
