package pod

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/priorityclass"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// priorityClassAllowed reports whether tenant Pod p (its full spec) may be created in the super
// cluster: its priorityClassName is none, a built-in system class (dropped in the super Pod
// unless public: system classes would let a tenant preempt other tenants), or a public super
// class (priorityclass.IsPublic, kept). Otherwise the super cluster's Priority admission would refuse the
// Pod (or, for a super class of the same name that is not public, give it a priority the tenant
// never chose), so the Pod is rejected early: it gets a PriorityClassNotPublic Warning Event in
// the tenant (and, from the caller, condition PodScheduled=False with that reason) and stays
// Pending; false is returned.
func priorityClassAllowed(env *resources.Env, c *tenant.Cluster, p *corev1.Pod) bool {
	pc := p.Spec.PriorityClassName
	if priorityClassUsable(env, pc) {
		return true
	}
	c.Recorder.Event(p, corev1.EventTypeWarning, priorityclass.ReasonPriorityClassNotPublic, priorityClassNotPublic(pc))
	return false
}

// priorityClassUsable reports whether a Pod naming priorityClassName pc may be created in the
// super cluster (priorityClassAllowed, which also reports a Pod that may not): none, a
// built-in system class, or a public super class.
func priorityClassUsable(env *resources.Env, pc string) bool {
	return pc == "" || slices.Contains(systemPriorityClasses, pc) || priorityclass.IsPublic(env, pc)
}

// priorityClassNotPublic is the message of the Event and condition of a Pod naming PriorityClass
// pc, which is not public.
func priorityClassNotPublic(pc string) string {
	return fmt.Sprintf("priorityClassName %q is not a public PriorityClass of the super cluster (label %s=%s); the Pod will not run",
		pc, conversion.LabelPublic, conversion.PublicValue)
}
