package service

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// allocField names a Service field the super cluster allocates.
type allocField int

const (
	fieldClusterIP allocField = iota
	fieldNodePort
	fieldHealthCheckNodePort
)

// allocRefusal is one requested value the super apiserver's Service registry could not
// allocate.
type allocRefusal struct {
	field allocField
	// port is the index in spec.ports (fieldNodePort only).
	port int
	// message is the apiserver's.
	message string
}

var nodePortField = regexp.MustCompile(`^spec\.ports\[(\d+)\]\.nodePort$`)

// allocationRefusals returns the requested values err (the answer to a create or update of a
// Service) says the super cluster could not allocate, or nil when err is something else. The
// forms come from the apiserver's Service registry (pkg/registry/core/service/storage,
// alloc.go): a requested ClusterIP that is taken or outside the range is 422 Invalid on field
// spec.clusterIPs ("failed to allocate IP ..."); a requested nodePort, 422 Invalid on
// spec.ports[i].nodePort ("provided port is already allocated", "... not in the valid
// range"); a requested healthCheckNodePort, 500 Internal Error "failed to allocate requested
// HealthCheck NodePort N: ...".
func allocationRefusals(err error) []allocRefusal {
	if err == nil {
		return nil
	}
	var out []allocRefusal
	if apierrors.IsInvalid(err) {
		if st, ok := err.(apierrors.APIStatus); ok && st.Status().Details != nil {
			for _, c := range st.Status().Details.Causes {
				switch {
				case c.Field == "spec.clusterIPs" || c.Field == "spec.clusterIP":
					if strings.Contains(c.Message, "allocate") || strings.Contains(c.Message, "range") {
						out = append(out, allocRefusal{field: fieldClusterIP, message: c.Message})
					}
				case nodePortField.MatchString(c.Field):
					if strings.Contains(c.Message, "allocated") || strings.Contains(c.Message, "range") {
						i, _ := strconv.Atoi(nodePortField.FindStringSubmatch(c.Field)[1])
						out = append(out, allocRefusal{field: fieldNodePort, port: i, message: c.Message})
					}
				}
			}
		}
		return out
	}
	if apierrors.IsInternalError(err) && strings.Contains(err.Error(), "failed to allocate requested HealthCheck NodePort") {
		return []allocRefusal{{field: fieldHealthCheckNodePort, message: err.Error()}}
	}
	return nil
}

// allocWriter is the super Service client of one tenant Service's downward reconcile. It asks
// the super cluster for the tenant's own ClusterIPs and node ports (Desired puts them in the
// object), and when the super cluster cannot allocate one of them it decides, value by value:
//   - a ClusterIP: let the super cluster allocate one from its shared range (the tenant is
//     told by the upward path, condition reason ClusterIPMismatch), when the tenant holds fewer
//     such addresses than services.maxSharedClusterIPs (takeShared); otherwise refuse (rule
//     sharedClusterIP, refuseShared);
//   - a nodePort or healthCheckNodePort the tenant allocated itself (no client but the syncer
//     owns the field, ExplicitFields): let the super cluster allocate one, or keep the super
//     copy's value on update; the upward path writes the super's nodePort into the tenant
//     Service;
//   - one a tenant client asked for: refuse. The tenant Service gets a Warning Event and the
//     condition Synced=False (reason NodePortUnavailable or HealthCheckNodePortUnavailable),
//     and the write fails with resources.ErrRejected: it is not retried on a timer; the
//     Service's next change (or a remediation scan) tries again.
type allocWriter struct {
	reconcile.Writer[*corev1.Service]
	c *tenant.Cluster
	// tenantSvc is the tenant Service (from the cache) being reconciled.
	tenantSvc *corev1.Service
	// existing returns the cached super copy (for the values to keep on update).
	existing func() (*corev1.Service, bool)
	// reserved is resources.Env.ReservedServiceIP (nil: nothing reserved).
	reserved func(c *tenant.Cluster, ip netip.Addr) bool
	// takeShared takes a slot of services.maxSharedClusterIPs for the super copy before a new
	// copy whose own ClusterIP the super cluster refused is let take an address of the shared
	// range; it returns the refusal when the tenant holds its cap (nil func: no cap).
	takeShared func() *policy.Denial
}

// maxReservedRetries bounds how often a new super copy whose allocated ClusterIP lies in
// another tenant's Service range is deleted and created again.
const maxReservedRetries = 8

// inReservedRange returns the first ClusterIP of super Service s that lies in another
// tenant's Service range, or "".
func (a allocWriter) inReservedRange(s *corev1.Service) string {
	if a.reserved == nil || s == nil {
		return ""
	}
	for _, ip := range s.Spec.ClusterIPs {
		if addr, err := netip.ParseAddr(ip); err == nil && a.reserved(a.c, addr) {
			return ip
		}
	}
	return ""
}

// maxAllocAttempts bounds the writes of one create or update: the registry reports one
// refused value per answer (ClusterIPs first, then node ports, then the health-check port).
const maxAllocAttempts = 4

// Create implements reconcile.Writer. A super copy to which the super cluster allocated a
// ClusterIP inside another tenant's Service range (it picks addresses at random over its whole
// range, which holds the tenants' ranges) is deleted and created again, at most
// maxReservedRetries times: holding such an address would let this tenant's Service answer
// where the other tenant's own DNS sends its Pods. After that the create fails and is retried.
func (a allocWriter) Create(ctx context.Context, obj *corev1.Service, opts metav1.CreateOptions) (*corev1.Service, error) {
	for try := 0; ; try++ {
		got, err := a.write(ctx, obj, nil, func(o *corev1.Service) (*corev1.Service, error) { return a.Writer.Create(ctx, o, opts) })
		ip := a.inReservedRange(got)
		if err != nil || ip == "" {
			return got, err
		}
		uid := got.UID
		if derr := a.Delete(ctx, got.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); derr != nil && !apierrors.IsNotFound(derr) {
			return nil, fmt.Errorf("super Service %s/%s got ClusterIP %s of another tenant's Service range and could not be deleted: %w", got.Namespace, got.Name, ip, derr)
		}
		if try+1 >= maxReservedRetries {
			return nil, fmt.Errorf("super Service %s/%s: the super cluster gave %d addresses in other tenants' Service ranges in a row (last %s); will retry",
				got.Namespace, got.Name, maxReservedRetries, ip)
		}
	}
}

// Update implements reconcile.Writer.
func (a allocWriter) Update(ctx context.Context, obj *corev1.Service, opts metav1.UpdateOptions) (*corev1.Service, error) {
	existing, _ := a.existing()
	return a.write(ctx, obj, existing, func(o *corev1.Service) (*corev1.Service, error) { return a.Writer.Update(ctx, o, opts) })
}

func (a allocWriter) write(ctx context.Context, want, existing *corev1.Service, do func(*corev1.Service) (*corev1.Service, error)) (*corev1.Service, error) {
	var explicit *Explicit
	for attempt := 1; ; attempt++ {
		got, err := do(want)
		refused := allocationRefusals(err)
		if len(refused) == 0 || attempt == maxAllocAttempts {
			if err == nil {
				forgetRefusals(a.c, a.tenantSvc.Namespace, a.tenantSvc.Name)
			}
			return got, err
		}
		want = want.DeepCopy()
		changed := false
		for _, r := range refused {
			switch r.field {
			case fieldClusterIP:
				if existing == nil && want.Spec.ClusterIP != "" && want.Spec.ClusterIP != corev1.ClusterIPNone {
					// The super cluster will allocate from its shared range: that counts
					// against services.maxSharedClusterIPs like any shared address.
					if a.takeShared != nil {
						if d := a.takeShared(); d != nil {
							if err := refuseShared(ctx, a.c, a.tenantSvc, d); err != nil {
								return nil, err
							}
							return nil, fmt.Errorf("%w: %s", resources.ErrRejected, d.Error())
						}
					}
					want.Spec.ClusterIP, want.Spec.ClusterIPs = "", nil
					changed = true
				}
			case fieldNodePort, fieldHealthCheckNodePort:
				if explicit == nil {
					e, gerr := a.explicitFields(ctx)
					if gerr != nil {
						return nil, gerr
					}
					explicit = &e
				}
				if r.field == fieldNodePort && r.port < len(want.Spec.Ports) {
					p := &want.Spec.Ports[r.port]
					if explicit.NodePorts[keyOf(*p)] {
						return nil, a.refuse(ctx, existing, ReasonNodePortUnavailable, fmt.Sprintf(
							"nodePort %d of port %s is not available in the super cluster (%s)", p.NodePort, portName(*p), r.message))
					}
					p.NodePort = superNodePort(existing, keyOf(*p))
					changed = true
				}
				if r.field == fieldHealthCheckNodePort && want.Spec.HealthCheckNodePort != 0 {
					if explicit.HealthCheckNodePort {
						return nil, a.refuse(ctx, existing, ReasonHealthCheckNodePortUnavailable, fmt.Sprintf(
							"healthCheckNodePort %d is not available in the super cluster (%s)", want.Spec.HealthCheckNodePort, r.message))
					}
					want.Spec.HealthCheckNodePort = 0
					if existing != nil {
						want.Spec.HealthCheckNodePort = existing.Spec.HealthCheckNodePort
					}
					changed = true
				}
			}
		}
		if !changed {
			return got, err
		}
	}
}

// superNodePort returns the nodePort of port k in the super copy s (0 when s is nil or has none).
func superNodePort(s *corev1.Service, k PortKey) int32 {
	if s == nil {
		return 0
	}
	for _, p := range s.Spec.Ports {
		if keyOf(p) == k {
			return p.NodePort
		}
	}
	return 0
}

// portName returns "80/TCP" (or "http 80/TCP" for a named port).
func portName(p corev1.ServicePort) string {
	k := keyOf(p)
	s := fmt.Sprintf("%d/%s", k.Port, k.Protocol)
	if p.Name != "" {
		s = p.Name + " " + s
	}
	return s
}

// explicitFields reads the tenant Service from the tenant apiserver (the cache has no
// managedFields) and returns which of its node ports a tenant client asked for.
func (a allocWriter) explicitFields(ctx context.Context) (Explicit, error) {
	live, err := a.c.Client.CoreV1().Services(a.tenantSvc.Namespace).Get(ctx, a.tenantSvc.Name, metav1.GetOptions{})
	if err != nil {
		return Explicit{}, fmt.Errorf("reading tenant Service %s/%s for its explicit node ports: %w", a.tenantSvc.Namespace, a.tenantSvc.Name, err)
	}
	if live.UID != a.tenantSvc.UID {
		return Explicit{}, fmt.Errorf("tenant Service %s/%s was recreated; retrying", a.tenantSvc.Namespace, a.tenantSvc.Name)
	}
	return ExplicitFields(live), nil
}

// refuse reports that the super cluster cannot allocate a value a tenant client asked for:
// it records the refusal for the tenant Service's generation (the upward path reads it), sets
// the condition Synced=False on the tenant Service (reason and msg; with a super copy
// existing, the upward path's condition for it) and records a Warning Event (once per change
// of the message). It returns an error wrapping resources.ErrRejected.
func (a allocWriter) refuse(ctx context.Context, existing *corev1.Service, reason, msg string) error {
	recordRefusal(a.c, a.tenantSvc, reason)
	var cond *metav1.Condition
	if existing != nil {
		cond = syncedCondition(a.c, a.tenantSvc, existing, nil)
	}
	if cond == nil {
		if existing == nil {
			msg += "; the Service has no copy in the super cluster until this changes"
		} else {
			msg += "; its super copy keeps its previous spec until this changes"
		}
		cond = &metav1.Condition{Type: ConditionSynced, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
	}
	if err := setSyncedCondition(ctx, a.c, a.tenantSvc, nil, cond); err != nil {
		return err // retried: the refusal is reported first
	}
	if existing == nil {
		if err := setRefusedLabel(ctx, a.c, a.tenantSvc, reason); err != nil {
			return err
		}
	}
	return fmt.Errorf("%w: Service %s/%s: %s", resources.ErrRejected, a.tenantSvc.Namespace, a.tenantSvc.Name, msg)
}
