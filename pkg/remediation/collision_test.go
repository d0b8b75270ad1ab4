package remediation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8srecord "k8s.io/client-go/tools/record"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
)

// The objects of a tenant namespace refused for a namespace collision (admit.Deny of the
// Namespace) are not synced on purpose: a scan does not requeue them as missing.
func TestScanSkipsObjectsOfARefusedNamespace(t *testing.T) {
	f := newFixture(t)
	c := f.addTenant("t1", true, true)
	c.Recorder = k8srecord.NewFakeRecorder(10)
	tns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app", UID: "tns-app", ResourceVersion: "3"}}
	mustAdd(t, c.Informers.Core().V1().Namespaces().Informer().GetIndexer(), tns)
	mustAdd(t, f.tenantStore(c, configmap.Resource), tenantConfigMap("cfg"))
	admit.Deny(c, resources.KindNamespace, tns, policy.Deny(policy.RuleNamespaceCollision, "test"))
	runSteps(t, f, c, []scanStep{{}, {}, {}})

	// Admitted (the name became free): missing objects are found again.
	admit.Admitted(c, resources.KindNamespace, "", "app")
	runSteps(t, f, c, []scanStep{{}, {want: []recorded{{req: req(c, resources.KindConfigMap, "cfg")}}}})
}
