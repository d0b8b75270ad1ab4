// Package service syncs Services downward (spec) and upward (load-balancer status).
//
// The super cluster allocates ClusterIPs and node ports: the tenant's allocated values
// (clusterIP, clusterIPs, nodePort, healthCheckNodePort) are never copied; on update the super
// object's own allocations are kept. A headless Service (clusterIP "None") stays headless.
// spec.externalIPs is never copied: in a shared cluster it would let one tenant intercept
// traffic to any address (CVE-2020-8554).
//
// The tenant's policy (policy.CheckService) decides which Services get a super copy at all:
// by default only ClusterIP Services (headless ones included), without externalTrafficPolicy
// Local, loadBalancerIP or loadBalancerClass. A refused Service has no super copy (one synced
// under an earlier policy is deleted) and is reported once (resources.Deny).
package service

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/syncer/downward"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Services.
type Resource struct{}

var _ resources.Resource = Resource{}

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindService }

// TenantInformer implements resources.Resource.
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return c.Informers.Core().V1().Services().Informer()
}

// SuperInformer implements resources.Resource.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperInformers.Core().V1().Services().Informer()
}

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Core().V1().Services().Lister()
	sl := env.SuperInformers.Core().V1().Services().Lister()
	return downward.Reconcile(ctx, env, c, ns, name, downward.Spec[*corev1.Service]{
		Kind:   resources.KindService,
		Tenant: func(ns string) downward.Getter[*corev1.Service] { return tl.Services(ns) },
		Super:  func(ns string) downward.Getter[*corev1.Service] { return sl.Services(ns) },
		Client: func(ns string) downward.Writer[*corev1.Service] { return env.Super.CoreV1().Services(ns) },
		Refuse: func(o *corev1.Service) *policy.Denial { return policy.CheckService(c.Policy().Services(), o) },
		Desired: func(o *corev1.Service, superNS string, existing *corev1.Service, has bool) *corev1.Service {
			if !has {
				existing = nil
			}
			return Desired(c, o, superNS, existing)
		},
		Equal: Equal,
	})
}

// Desired returns the super copy of tenant Service o in superNS. existing (nil when creating)
// supplies the values the super cluster allocated.
func Desired(c *tenant.Cluster, o *corev1.Service, superNS string, existing *corev1.Service) *corev1.Service {
	spec := *o.Spec.DeepCopy()
	headless := spec.ClusterIP == corev1.ClusterIPNone
	spec.ClusterIP, spec.ClusterIPs = "", nil
	if headless {
		spec.ClusterIP, spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
	}
	spec.HealthCheckNodePort = 0
	// externalIPs let a Service capture traffic for any address on every node
	// (CVE-2020-8554): a tenant must not set them in the shared super cluster.
	if len(spec.ExternalIPs) > 0 {
		spec.ExternalIPs = nil
		// The tenant apiserver defaulted externalTrafficPolicy because of the externalIPs; a
		// ClusterIP Service without them must not have one.
		if spec.Type == corev1.ServiceTypeClusterIP || spec.Type == "" {
			spec.ExternalTrafficPolicy = ""
		}
	}
	// IP families follow the super cluster's allocation, not the tenant's.
	spec.IPFamilies = nil
	for i := range spec.Ports {
		spec.Ports[i].NodePort = 0
	}
	if existing != nil {
		keepAllocated(&spec, &existing.Spec)
	}
	return &corev1.Service{ObjectMeta: resources.DesiredMeta(c, o, superNS, existing), Spec: spec}
}

// keepAllocated copies the super cluster's allocations into spec where the tenant's spec
// still asks for them.
func keepAllocated(spec, have *corev1.ServiceSpec) {
	if spec.Type != corev1.ServiceTypeExternalName {
		spec.ClusterIP, spec.ClusterIPs = have.ClusterIP, have.ClusterIPs
		spec.IPFamilies = have.IPFamilies
		if spec.IPFamilyPolicy == nil {
			spec.IPFamilyPolicy = have.IPFamilyPolicy
		}
	}
	if spec.InternalTrafficPolicy == nil {
		spec.InternalTrafficPolicy = have.InternalTrafficPolicy
	}
	if spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer {
		for i := range spec.Ports {
			for _, hp := range have.Ports {
				if hp.Port == spec.Ports[i].Port && hp.Protocol == spec.Ports[i].Protocol {
					spec.Ports[i].NodePort = hp.NodePort
				}
			}
		}
		if spec.Type == corev1.ServiceTypeLoadBalancer && spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
			spec.HealthCheckNodePort = have.HealthCheckNodePort
		}
	}
	if spec.AllocateLoadBalancerNodePorts == nil {
		spec.AllocateLoadBalancerNodePorts = have.AllocateLoadBalancerNodePorts
	}
}

// Equal reports whether the super Service has the desired spec and metadata.
func Equal(want, have *corev1.Service) bool {
	return resources.MetaEqual(want, have) && equality.Semantic.DeepEqual(want.Spec, have.Spec)
}

// Upward implements resources.Resource: it copies the super Service's load-balancer status
// into the tenant Service.
func (Resource) Upward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	t, s, ok, err := downward.UpwardPair[*corev1.Service](c, c.Informers.Core().V1().Services().Lister().Services(ns),
		env.SuperInformers.Core().V1().Services().Lister().Services(resources.SuperNamespace(c, ns)), name)
	if !ok || err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(t.Status.LoadBalancer, s.Status.LoadBalancer) {
		return nil
	}
	u := t.DeepCopy()
	u.Status.LoadBalancer = *s.Status.LoadBalancer.DeepCopy()
	_, err = c.Client.CoreV1().Services(ns).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: downward.FieldManager})
	return err
}
