package service

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Services.
var Resource = resourceKind{resources.Funcs{
	Name: resources.KindService,
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		return c.Informers.Core().V1().Services().Informer()
	},
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperInformers.Core().V1().Services().Informer()
	},
	Down: reconcileDownward,
	Up:   reconcileUpward,
}}

// reconcileUpward copies the super Service's load-balancer status into the tenant Service,
// writes the super cluster's nodePorts into it where the tenant did not set them
// (writeBackNodePorts), and sets its ConditionSynced (with a Warning Event for a new problem)
// when its ClusterIPs or node ports are not the super copy's, back to True (reason InSync)
// when a Service that had it False (a refusal included) now agrees; it removes the label
// tenancy.vcsyncer.io/refused of a Service refused earlier.
func reconcileUpward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	t, s, ok, err := reconcile.UpwardPair[*corev1.Service](c, c.Informers.Core().V1().Services().Lister().Services(ns),
		env.SuperInformers.Core().V1().Services().Lister().Services(resources.SuperNamespace(c, ns)), name)
	if !ok || err != nil {
		return err
	}
	patched, patchRefused, err := writeBackNodePorts(ctx, c, t, s)
	if err != nil || patched {
		return err // a patched Service comes back with its own event
	}
	var lb *corev1.LoadBalancerStatus
	if !equality.Semantic.DeepEqual(t.Status.LoadBalancer, s.Status.LoadBalancer) {
		lb = &s.Status.LoadBalancer
	}
	if err := setSyncedCondition(ctx, c, t, lb, syncedCondition(c, t, s, patchRefused)); err != nil {
		return err
	}
	// It has a super copy: no longer refused, its name answers again in the tenant DNS.
	return setRefusedLabel(ctx, c, t, "")
}

// reconcileDownward is the kind's downward reconciler: the generic one (reconcile.Reconcile),
// with a writer that allocates the super Service's addresses (allocWriter).
func reconcileDownward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Core().V1().Services().Lister()
	sl := env.SuperInformers.Core().V1().Services().Lister()
	superNS := resources.SuperNamespace(c, ns)
	tObj, err := tl.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		forgetRefusals(c, ns, name)
	}
	// The checks of the policy that are not about the Service alone: how many addresses of the
	// super cluster's shared range the tenant holds (services.maxSharedClusterIPs), checked
	// before a super copy that would take one is created.
	var reservedKey string
	waits := false // parked for room in the tenant's budget (Spec.Waits)
	// A stub (tenant.IsHeldOut) is refused by reconcile.Reconcile; nothing is checked on it.
	stub := tObj != nil && tenant.IsHeldOut(tObj)
	if tObj != nil && !stub && tObj.DeletionTimestamp.IsZero() && policy.CheckService(c.Policy().Services(), tObj) == nil {
		if _, err := sl.Services(superNS).Get(name); apierrors.IsNotFound(err) && takesShared(c, tObj) {
			key := superNS + "/" + name
			if d := shared.reserve(c, sl, tObj, key); d != nil {
				return refuseShared(ctx, c, tObj, d)
			}
			reservedKey = key
		}
		admit.Filtered(c, resources.KindService, tObj, policy.RuleSharedClusterIP, "", nil)
	}
	err = reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*corev1.Service]{
		Kind:   resources.KindService,
		Tenant: func(ns string) reconcile.Getter[*corev1.Service] { return tl.Services(ns) },
		Super:  func(ns string) reconcile.Getter[*corev1.Service] { return sl.Services(ns) },
		Client: func(ns string) reconcile.Writer[*corev1.Service] {
			w := env.Super.CoreV1().Services(ns)
			if tObj == nil || ns != superNS {
				return w
			}
			return allocWriter{Writer: w, c: c, tenantSvc: tObj, reserved: env.ReservedServiceIP, existing: func() (*corev1.Service, bool) {
				s, err := sl.Services(ns).Get(name)
				return s, err == nil
			}, takeShared: func() *policy.Denial {
				key := superNS + "/" + name
				d := shared.reserve(c, sl, tObj, key)
				if d == nil {
					reservedKey = key // released below when the create fails
				}
				return d
			}}
		},
		Refuse: func(o *corev1.Service) *policy.Denial { return policy.CheckService(c.Policy().Services(), o) },
		// Waiting for room in the tenant's budget: no shared address is held meanwhile, and
		// the tenant sees why on the Service itself.
		Waits: func(o *corev1.Service, hasCopy bool, d *policy.Denial) error {
			waits = true
			if hasCopy {
				return nil // an update waits: the super copy serves as it is, the Event says why
			}
			if reservedKey != "" {
				shared.release(c, reservedKey)
				reservedKey = ""
			}
			return markRefused(ctx, c, o, d.Reason(), d.Error())
		},
		Desired: func(o *corev1.Service, superNS string, existing *corev1.Service, has bool) *corev1.Service {
			if !has {
				existing = nil
			}
			return Desired(c, o, superNS, existing)
		},
		Equal: Equal,
	})
	if err != nil && reservedKey != "" {
		shared.release(c, reservedKey)
	}
	if d := refusedByPolicy(c, tObj); d != nil && !stub {
		// Refused (reported by reconcile.Reconcile: admit.Deny), with no super copy: the
		// tenant sees why on the Service itself.
		if err != nil {
			return err
		}
		return markRefused(ctx, c, tObj, d.Reason(), d.Error())
	}
	if errors.Is(err, admit.ErrNoQuotaRoom) && tObj != nil && !stub && tObj.DeletionTimestamp.IsZero() {
		if _, gerr := sl.Services(superNS).Get(name); apierrors.IsNotFound(gerr) {
			// Waiting for room (reported by admit.DenyQuota): retried with backoff.
			if merr := markRefused(ctx, c, tObj, policy.ReasonQuotaExceeded, err.Error()); merr != nil {
				return fmt.Errorf("%w (condition not written: %w)", err, merr)
			}
		}
		return err
	}
	if err == nil && !waits && tObj != nil && !stub && tObj.DeletionTimestamp.IsZero() {
		// Synced: what it asked for and did not get is reported once per spec.
		admit.Filtered(c, resources.KindService, tObj, policy.RuleExternalIPs, specVersion(tObj), policy.ExternalIPsDenial(tObj))
	}
	return err
}

// refuseShared reports that tenant Service t is refused by rule sharedClusterIP (d): a
// PolicyDenied Warning Event and a count once per spec and policy generation
// (admit.Filtered), and the condition tenancy.vcsyncer.io/Synced=False, reason
// PolicyDenied, and label tenancy.vcsyncer.io/refused (markRefused). It returns nil (no retry: the Service is tried again when it or the policy
// changes) or the error of the status write (retried).
func refuseShared(ctx context.Context, c *tenant.Cluster, t *corev1.Service, d *policy.Denial) error {
	admit.Filtered(c, resources.KindService, t, policy.RuleSharedClusterIP, specVersion(t), d)
	return markRefused(ctx, c, t, d.Reason(), d.Error())
}

// Forget drops what the kind records about the named tenant (called when it is removed).
func (resourceKind) Forget(tenantName string) { shared.forget(tenantName) }

type resourceKind struct{ resources.Funcs }

var _ resources.Resource = Resource

// Desired returns the super copy of tenant Service o in superNS. existing (nil when creating)
// supplies the values the super cluster allocated. The copy asks for o's ClusterIPs when
// they are all inside c's Service ranges (tenant.Cluster.ServiceCIDRs), and for o's node ports
// and healthCheckNodePort; the allocWriter decides what to do when the super cluster cannot
// allocate them.
func Desired(c *tenant.Cluster, o *corev1.Service, superNS string, existing *corev1.Service) *corev1.Service {
	spec := *o.Spec.DeepCopy()
	headless := spec.ClusterIP == corev1.ClusterIPNone
	spec.ClusterIP, spec.ClusterIPs = "", nil
	if headless {
		spec.ClusterIP, spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
	} else if ips := tenantIPs(c.ServiceCIDRs(), o); ips != nil {
		spec.ClusterIP, spec.ClusterIPs = ips[0], ips
	}
	// ExternalIPs let a Service capture traffic for any address on every node
	// (CVE-2020-8554): a tenant must not set them in the shared super cluster.
	if len(spec.ExternalIPs) > 0 {
		spec.ExternalIPs = nil
		// The tenant apiserver defaulted externalTrafficPolicy because of the externalIPs; a
		// ClusterIP Service without them must not have one.
		if spec.Type == corev1.ServiceTypeClusterIP || spec.Type == "" {
			spec.ExternalTrafficPolicy = ""
		}
	}
	// IP families follow the super cluster's allocation (from the requested ClusterIPs, or
	// Its own), not the tenant's.
	spec.IPFamilies = nil
	nodePorts := spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer
	if !nodePorts {
		for i := range spec.Ports {
			spec.Ports[i].NodePort = 0
		}
	}
	if spec.Type != corev1.ServiceTypeLoadBalancer || spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
		spec.HealthCheckNodePort = 0
	}
	if existing != nil {
		keepAllocated(&spec, &existing.Spec)
	}
	return &corev1.Service{ObjectMeta: resources.DesiredMeta(c, o, superNS, existing), Spec: spec}
}

// keepAllocated copies the super cluster's allocations into spec where they cannot change
// (ClusterIPs, IP families; a healthCheckNodePort while the Service stays LoadBalancer with
// externalTrafficPolicy Local: the registry refuses to change it) or where the tenant's spec
// asks for none (a nodePort 0: a LoadBalancer with allocateLoadBalancerNodePorts false).
func keepAllocated(spec, have *corev1.ServiceSpec) {
	if spec.Type != corev1.ServiceTypeExternalName && have.Type != corev1.ServiceTypeExternalName {
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
			if spec.Ports[i].NodePort == 0 {
				spec.Ports[i].NodePort = superNodePort(&corev1.Service{Spec: *have}, keyOf(spec.Ports[i]))
			}
		}
		if spec.Type == corev1.ServiceTypeLoadBalancer && spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal &&
			(have.HealthCheckNodePort != 0 || spec.HealthCheckNodePort == 0) {
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
