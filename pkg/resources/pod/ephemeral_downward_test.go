package pod

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// An ephemeral volume template whose data source is not one of the tenant's own claims in the
// Pod's namespace refuses the Pod (rule storageDataSource): no super Pod, a Warning Event,
// PodScheduled=False with reason PolicyDenied, one count; an own claim is allowed.
func TestDownwardEphemeralDataSource(t *testing.T) {
	snapshots := "snapshot.storage.k8s.io"
	other := "other"
	for name, tc := range map[string]struct {
		spec    corev1.PersistentVolumeClaimSpec
		refused bool
	}{
		"own claim": {spec: corev1.PersistentVolumeClaimSpec{
			DataSource: &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}}},
		"VolumeSnapshot": {refused: true, spec: corev1.PersistentVolumeClaimSpec{
			DataSource: &corev1.TypedLocalObjectReference{APIGroup: &snapshots, Kind: "VolumeSnapshot", Name: "snap"}}},
		"claim of another namespace": {refused: true, spec: corev1.PersistentVolumeClaimSpec{
			DataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "src", Namespace: &other}}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tenantName := "te-" + strings.ReplaceAll(name, " ", "-")
			p := ephemeralPod(metav1.ObjectMeta{}, tc.spec)
			p.Spec.NodeName = ""
			p.Spec.Volumes = p.Spec.Volumes[len(p.Spec.Volumes)-1:] // no projected tokens (no TokenRequest)
			p.Spec.Containers[0].VolumeMounts = nil
			p.Spec.PriorityClassName = ""
			p.Status = corev1.PodStatus{Phase: corev1.PodPending}
			p.ResourceVersion = "1"
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "ns-uid"}}
			tenantCS := fake.NewClientset(p.DeepCopy(), ns.DeepCopy())
			rec := record.NewFakeRecorder(10)
			c := &tenant.Cluster{Name: tenantName, UID: "uid-1", Client: tenantCS,
				Informers: informers.NewSharedInformerFactory(tenantCS, 0), Recorder: rec}
			// No quota: the fake super cluster has no quota controller to compute one.
			c.SetPolicy(policy.Resolve(nil, &tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{Quota: corev1.ResourceList{}}}))
			mustAddErr(t, c.Informers.Core().V1().Pods().Informer().GetIndexer().Add(p))
			mustAddErr(t, c.Informers.Core().V1().Namespaces().Informer().GetIndexer().Add(ns))
			superCS := fake.NewClientset()
			env := &resources.Env{Super: superCS, SuperInformers: informers.NewSharedInformerFactory(superCS, 0),
				SuperVolumes: informers.NewSharedInformerFactory(superCS, 0), SuperNodes: informers.NewSharedInformerFactory(superCS, 0)}
			env.SuperNodes.Core().V1().Nodes().Informer()
			env.SuperInformers.Core().V1().Pods().Informer()
			env.SuperInformers.Core().V1().Namespaces().Informer()
			env.SuperVolumes.Storage().V1().StorageClasses().Informer()

			d0 := metrics.PolicyDenials(tenantName, string(resources.KindPod), string(policy.RuleStorageDataSource))
			if err := reconcileDownward(ctx, env, c, "shop", "web"); err != nil {
				t.Fatalf("Downward: %v", err)
			}
			superNS := resources.SuperNamespace(c, "shop")
			_, err := superCS.CoreV1().Pods(superNS).Get(ctx, "web", metav1.GetOptions{})
			denials := metrics.PolicyDenials(tenantName, string(resources.KindPod), string(policy.RuleStorageDataSource)) - d0
			if !tc.refused {
				if err != nil || denials != 0 {
					t.Fatalf("allowed Pod: super Pod err %v, denials %v", err, denials)
				}
				return
			}
			if !apierrors.IsNotFound(err) {
				t.Errorf("refused Pod has a super Pod (err %v)", err)
			}
			if denials != 1 {
				t.Errorf("denials = %v, want 1", denials)
			}
			restest.WantOneEvent(t, rec, "Warning "+policy.ReasonPolicyDenied+" storageDataSource: ")
			tp, err := tenantCS.CoreV1().Pods("shop").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, cond := range tp.Status.Conditions {
				if cond.Type == corev1.PodScheduled {
					found = cond.Status == corev1.ConditionFalse && cond.Reason == policy.ReasonPolicyDenied &&
						strings.HasPrefix(cond.Message, "storageDataSource: ")
				}
			}
			if !found {
				t.Errorf("tenant Pod conditions %+v, want PodScheduled=False reason PolicyDenied", tp.Status.Conditions)
			}
			// The status write brings the Pod back (an update event): nothing is reported again.
			mustAddErr(t, c.Informers.Core().V1().Pods().Informer().GetIndexer().Update(tp))
			if err := reconcileDownward(ctx, env, c, "shop", "web"); err != nil {
				t.Fatalf("second Downward: %v", err)
			}
			if n := metrics.PolicyDenials(tenantName, string(resources.KindPod), string(policy.RuleStorageDataSource)) - d0; n != 1 || len(rec.Events) != 0 {
				t.Errorf("after the second pass: denials %v, %d more Events; want 1 and none", n, len(rec.Events))
			}
		})
	}
}

func mustAddErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
