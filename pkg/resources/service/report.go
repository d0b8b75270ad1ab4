package service

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ConditionSynced is the condition type the syncer sets in a tenant Service's
// status.conditions when the Service's addresses or ports in the tenant are not the ones that
// work in the super cluster (False), and back to True once they agree. A Service that never
// had a problem has no such condition.
const ConditionSynced = "tenancy.vcsyncer.io/Synced"

// Reasons of ConditionSynced; each False one also is the reason of a Warning Event on the
// tenant Service, recorded when the condition's message changes.
const (
	// policy.ReasonPolicyDenied: the tenant's policy dropped part of the Service from its
	// super copy (spec.externalIPs, rule externalIPs) or refused a super copy
	// (services.maxSharedClusterIPs, rule sharedClusterIP); the message starts with the rule.
	// Its Warning Event and count come from admit.Filtered, once per spec.

	// ReasonInSync: ClusterIPs and node ports agree with the super copy.
	ReasonInSync = "InSync"
	// ReasonClusterIPMismatch: the super copy has other ClusterIPs than the tenant Service
	// shows (the tenant's are outside the Tenant's spec.serviceCIDRs, or were taken or out
	// of range in the super cluster). Pods reach the Service at the super address; the
	// tenant's is immutable, so this lasts until the Service is recreated.
	ReasonClusterIPMismatch = "ClusterIPMismatch"
	// ReasonNodePortUnavailable: a nodePort a tenant client set is allocated to another
	// Service in the super cluster (or outside its range): the Service has no super copy, or
	// its copy keeps its previous port. The Service is not given another port.
	ReasonNodePortUnavailable = "NodePortUnavailable"
	// ReasonNodePortMismatch: the super cluster allocated another nodePort for a port the
	// tenant did not set and writing it into the tenant Service failed.
	ReasonNodePortMismatch = "NodePortMismatch"
	// ReasonHealthCheckNodePortUnavailable: as ReasonNodePortUnavailable, for a
	// healthCheckNodePort a tenant client set.
	ReasonHealthCheckNodePortUnavailable = "HealthCheckNodePortUnavailable"
	// ReasonHealthCheckNodePortMismatch: the healthCheckNodePort the tenant apiserver allocated
	// was taken in the super cluster, which allocated another; neither apiserver lets it change
	// while the Service keeps externalTrafficPolicy Local.
	ReasonHealthCheckNodePortMismatch = "HealthCheckNodePortMismatch"
)

// refusalKey is the key of tenant Service ns/name's allocation refusals in
// tenant.Cluster.Refusals, one per reason.
func refusalKey(ns, name, reason string) string {
	return "Service/" + ns + "/" + name + "#allocation#" + reason
}

// specVersion identifies the spec of tenant Service t: a hash of it. Services have no
// metadata.generation (the apiserver leaves it 0), and their resourceVersion changes with the
// syncer's own status writes.
func specVersion(t *corev1.Service) string {
	b, _ := json.Marshal(&t.Spec)
	h := fnv.New64a()
	h.Write(b)
	return strconv.FormatUint(h.Sum64(), 16)
}

// recordRefusal records that the super cluster refused a value a tenant client set in
// Service t at its current spec, for reason.
func recordRefusal(c *tenant.Cluster, t *corev1.Service, reason string) {
	c.Refusals.Record(refusalKey(t.Namespace, t.Name, reason), specVersion(t), "", policy.Rule(reason))
}

// refused reports whether recordRefusal recorded reason for t's current spec.
func refused(c *tenant.Cluster, t *corev1.Service, reason string) bool {
	return c.Refusals.Refused(refusalKey(t.Namespace, t.Name, reason), specVersion(t), "")
}

// forgetRefusals drops the records of tenant Service ns/name.
func forgetRefusals(c *tenant.Cluster, ns, name string) {
	for _, r := range []string{ReasonNodePortUnavailable, ReasonHealthCheckNodePortUnavailable} {
		c.Refusals.Forget(refusalKey(ns, name, r))
	}
}

// tenantIPs returns the ClusterIPs of tenant Service t that the super copy is asked for: all
// of them when each is inside one of ranges (Tenant spec.serviceCIDRs), else nil. Headless
// and ExternalName Services have none.
func tenantIPs(ranges []netip.Prefix, t *corev1.Service) []string {
	ips := t.Spec.ClusterIPs
	if len(ips) == 0 && t.Spec.ClusterIP != "" {
		ips = []string{t.Spec.ClusterIP}
	}
	if len(ips) == 0 || t.Spec.ClusterIP == corev1.ClusterIPNone || t.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil || !slices.ContainsFunc(ranges, func(p netip.Prefix) bool { return p.Contains(a) }) {
			return nil
		}
	}
	return slices.Clone(ips)
}

// syncedCondition returns the ConditionSynced that tenant Service t should carry given its
// super copy s (nil when everything agrees), and patchErr, the error of writing the super
// cluster's node ports into t (nil: none or no write).
func syncedCondition(c *tenant.Cluster, t, s *corev1.Service, patchErr error) *metav1.Condition {
	var reason string
	var msgs []string
	add := func(r, m string) {
		if reason == "" {
			reason = r
		}
		msgs = append(msgs, m)
	}
	if d := policy.ExternalIPsDenial(t); d != nil {
		add(policy.ReasonPolicyDenied, d.Error()) // its Event and count: admit.Filtered, downward
	}
	if t.Spec.Type != corev1.ServiceTypeExternalName && t.Spec.ClusterIP != "" && t.Spec.ClusterIP != corev1.ClusterIPNone &&
		s.Spec.ClusterIP != "" && !slices.Equal(clusterIPs(t), clusterIPs(s)) {
		why := "the Tenant has no spec.serviceCIDRs"
		switch {
		case tenantIPs(c.ServiceCIDRs(), t) != nil:
			why = "the super cluster did not allocate it (taken, or outside its Service range)"
		case len(c.ServiceCIDRs()) > 0:
			why = "it is outside the Tenant's spec.serviceCIDRs " + joinPrefixes(c.ServiceCIDRs())
		}
		add(ReasonClusterIPMismatch, fmt.Sprintf("Pods reach this Service at ClusterIP %s in the super cluster, not at %s: %s",
			strings.Join(clusterIPs(s), ","), strings.Join(clusterIPs(t), ","), why))
	}
	for _, tp := range t.Spec.Ports {
		sp := superNodePort(s, keyOf(tp))
		if tp.NodePort == 0 || sp == tp.NodePort {
			continue
		}
		switch {
		case refused(c, t, ReasonNodePortUnavailable):
			keeps := fmt.Sprintf("its copy keeps nodePort %d", sp)
			if sp == 0 {
				keeps = "its copy keeps its previous spec"
			}
			add(ReasonNodePortUnavailable, fmt.Sprintf("nodePort %d of port %s is not available in the super cluster; %s",
				tp.NodePort, portName(tp), keeps))
		case sp != 0 && patchErr != nil:
			add(ReasonNodePortMismatch, fmt.Sprintf("the super cluster allocated nodePort %d for port %s (%d was taken there); writing it into this Service failed: %v",
				sp, portName(tp), tp.NodePort, patchErr))
		}
	}
	if th, sh := t.Spec.HealthCheckNodePort, s.Spec.HealthCheckNodePort; th != 0 && th != sh {
		switch {
		case refused(c, t, ReasonHealthCheckNodePortUnavailable):
			add(ReasonHealthCheckNodePortUnavailable, fmt.Sprintf("healthCheckNodePort %d is not available in the super cluster; its copy keeps %d", th, sh))
		case sh != 0:
			add(ReasonHealthCheckNodePortMismatch, fmt.Sprintf("the super cluster allocated healthCheckNodePort %d (%d was taken there); "+
				"load balancers probe %d, and the field cannot change while externalTrafficPolicy is Local", sh, th, sh))
		}
	}
	if reason == "" {
		return nil
	}
	return &metav1.Condition{Type: ConditionSynced, Status: metav1.ConditionFalse, Reason: reason, Message: strings.Join(msgs, "; ")}
}

func clusterIPs(s *corev1.Service) []string {
	if len(s.Spec.ClusterIPs) > 0 {
		return s.Spec.ClusterIPs
	}
	if s.Spec.ClusterIP != "" {
		return []string{s.Spec.ClusterIP}
	}
	return nil
}

func joinPrefixes(ps []netip.Prefix) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(out, ",")
}

// applySynced puts cond (nil: everything agrees) into conds. An agreeing Service gets
// ConditionSynced=True only when it has the condition already. It returns whether conds
// changed and whether the change is a new problem (a False condition with another reason or
// message), which deserves a Warning Event.
func applySynced(conds *[]metav1.Condition, cond *metav1.Condition, generation int64) (changed, warn bool) {
	old := meta.FindStatusCondition(*conds, ConditionSynced)
	if cond == nil {
		if old == nil || old.Status == metav1.ConditionTrue {
			return false, false
		}
		cond = &metav1.Condition{Type: ConditionSynced, Status: metav1.ConditionTrue, Reason: ReasonInSync,
			Message: "ClusterIPs and node ports are the ones that work in the super cluster"}
	}
	cond.ObservedGeneration = generation
	if old != nil && old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.ObservedGeneration == generation {
		return false, false
	}
	warn = cond.Status == metav1.ConditionFalse && (old == nil || old.Status != cond.Status || old.Reason != cond.Reason || old.Message != cond.Message)
	meta.SetStatusCondition(conds, *cond)
	return true, warn
}

// setSyncedCondition writes cond (nil: everything agrees) and, when lb is not nil, the
// load-balancer status into tenant Service t's status when they change it, and records a
// Warning Event (reason cond.Reason) for a new problem. t is the cached object; the write goes
// through the status subresource, so its metadata is not written.
func setSyncedCondition(ctx context.Context, c *tenant.Cluster, t *corev1.Service, lb *corev1.LoadBalancerStatus, cond *metav1.Condition) error {
	return writeSynced(ctx, c, t, lb, cond, true)
}

// writeSynced is setSyncedCondition; with events false it records no Warning Event (the
// caller's refusal report has one with the same reason).
func writeSynced(ctx context.Context, c *tenant.Cluster, t *corev1.Service, lb *corev1.LoadBalancerStatus, cond *metav1.Condition, events bool) error {
	u := t.DeepCopy()
	changed := false
	if lb != nil {
		u.Status.LoadBalancer = *lb.DeepCopy()
		changed = true
	}
	condChanged, warn := applySynced(&u.Status.Conditions, cond, t.Generation)
	if !changed && !condChanged {
		return nil
	}
	if _, err := c.Client.CoreV1().Services(t.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return err
	}
	if warn && events && cond.Reason != policy.ReasonPolicyDenied {
		// A PolicyDenied condition's Event (and count) is recorded by admit.Filtered.
		c.Recorder.Event(t, corev1.EventTypeWarning, cond.Reason, cond.Message)
	}
	return nil
}

// patchOp is one JSON patch (RFC 6902) operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// writeBackNodePorts writes the super copy s's nodePort into tenant Service t for every port
// whose values differ and that no tenant client set (ExplicitFields of the live tenant
// Service): the nodePort of a Service is mutable, so the tenant then shows the port that
// works. The write is a JSON patch conditional on the live resourceVersion, so a concurrent
// change of the tenant Service makes it fail (and retry) instead of overwriting it. It returns whether it patched, and the error of the patch or read; a 422
// answer (the tenant apiserver has the port allocated to another of its Services, or refused
// the change) is returned as refused, to be reported, not retried.
func writeBackNodePorts(ctx context.Context, c *tenant.Cluster, t, s *corev1.Service) (patched bool, refusedErr, err error) {
	if t.Spec.Type != s.Spec.Type || (t.Spec.Type != corev1.ServiceTypeNodePort && t.Spec.Type != corev1.ServiceTypeLoadBalancer) {
		return false, nil, nil
	}
	differs := false
	for _, tp := range t.Spec.Ports {
		if sp := superNodePort(s, keyOf(tp)); sp != 0 && sp != tp.NodePort {
			differs = true
		}
	}
	if !differs || refused(c, t, ReasonNodePortUnavailable) {
		return false, nil, nil
	}
	live, err := c.Client.CoreV1().Services(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
	if err != nil {
		return false, nil, err
	}
	if live.UID != t.UID {
		return false, nil, nil // recreated: its own events follow
	}
	explicit := ExplicitFields(live)
	// The resourceVersion read makes the write conditional (409 Conflict when the Service
	// changed since the read), as for an update.
	ops := []patchOp{{Op: "replace", Path: "/metadata/resourceVersion", Value: live.ResourceVersion}}
	for i, lp := range live.Spec.Ports {
		k := keyOf(lp)
		if sp := superNodePort(s, k); sp != 0 && sp != lp.NodePort && !explicit.NodePorts[k] {
			ops = append(ops, patchOp{Op: "replace", Path: fmt.Sprintf("/spec/ports/%d/nodePort", i), Value: sp})
		}
	}
	if len(ops) == 1 {
		return false, nil, nil
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return false, nil, err
	}
	_, err = c.Client.CoreV1().Services(t.Namespace).Patch(ctx, t.Name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: reconcile.FieldManager})
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		return false, err, nil
	}
	return err == nil, nil, err
}
