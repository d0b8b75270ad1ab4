package tenant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/policy"
)

// Finalizer is put on every Tenant so its super-cluster objects are cleaned up before the
// Tenant disappears.
const Finalizer = "tenancy.vcsyncer.io/cleanup"

// Condition reasons.
const (
	ReasonSecretNotFound      = "SecretNotFound"
	ReasonSecretKeyMissing    = "SecretKeyMissing"
	ReasonNamespaceNotWatched = "SecretNamespaceNotWatched"
	ReasonInvalidKubeconfig   = "InvalidKubeconfig"
	// ReasonPolicyNotFound: spec.policyName names a TenantPolicy that does not exist.
	ReasonPolicyNotFound = "PolicyNotFound"
	ReasonValid          = "Valid"
	ReasonUnreachable    = "Unreachable"
	// ReasonUnauthorized: the tenant apiserver refused the kubeconfig's credentials (401/403).
	ReasonUnauthorized = "Unauthorized"
	// ReasonDuplicateControlPlane: another Tenant already syncs the same control plane.
	ReasonDuplicateControlPlane = "DuplicateControlPlane"
	ReasonReachable             = "Reachable"
	ReasonWaiting               = "WaitingForConnection"
	ReasonCachesSynced          = "CachesSynced"
	ReasonCachesSyncing         = "CachesSyncing"
	ReasonPaused                = "Paused"
	ReasonDeleting              = "Deleting"
	// ReasonMemoryBoundReached: some of the tenant's objects are kept out of the
	// syncer's memory (HeldBytes); ReasonWithinBound: none are.
	ReasonMemoryBoundReached = "MemoryBoundReached"
	ReasonWithinBound        = "WithinBound"
	// ReasonTooManyObjects: the tenant has more objects than limits.maxCachedObjects; its
	// sync is suspended (Synced=False, WithinMemoryBound=False, a Warning Event).
	ReasonTooManyObjects = "TooManyObjects"
)

// ReasonInlineCredentialsRequired is the KubeconfigValid=False reason (and Warning Event
// reason) for a kubeconfig whose current context reads a file, runs a plugin, picks a proxy,
// uses basic authentication or impersonates (ErrInlineCredentialsRequired); the message names
// each refused field and what to write instead.
const ReasonInlineCredentialsRequired = "InlineCredentialsRequired"

// Reconciler is the Tenant controller: it validates the kubeconfig Secret, starts and stops
// tenant Clusters in the Registry, reports conditions, and cleans up on deletion.
type Reconciler struct {
	// Client is the super cluster's (cached) client; Secrets are cached only in
	// KubeconfigNamespace.
	Client client.Client
	// Registry receives the running Clusters.
	Registry *Registry
	// KubeconfigNamespace is the only namespace whose Secrets are read.
	KubeconfigNamespace string
	// Recorder writes Events on Tenant objects in the super cluster.
	Recorder record.EventRecorder
	// Sharding, if set, limits this replica to the Tenants the shard ring gives it, claimed in
	// status.shard; Handover is then required. Nil: this replica syncs every Tenant.
	Sharding Sharding
	// Handover drains and adopts tenants that move between shards (with Sharding).
	Handover Handover

	events chan event.TypedGenericEvent[*tenancyv1alpha1.Tenant]
	// primeRanges records every Tenant's Service ranges once, at the first reconcile.
	primeRanges sync.Once
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the controller with mgr. It returns an error when a dependency
// is missing.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Registry == nil || r.KubeconfigNamespace == "" || r.Recorder == nil {
		return errors.New("tenant.Reconciler needs Client, Registry, KubeconfigNamespace and Recorder")
	}
	if r.Sharding != nil && r.Handover == nil {
		return errors.New("tenant.Reconciler with Sharding needs Handover")
	}
	r.events = make(chan event.TypedGenericEvent[*tenancyv1alpha1.Tenant], 1024)
	return ctrl.NewControllerManagedBy(mgr).
		Named("tenant").
		For(&tenancyv1alpha1.Tenant{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.tenantsForSecret),
			builder.WithPredicates()).
		Watches(&tenancyv1alpha1.TenantPolicy{}, handler.EnqueueRequestsFromMapFunc(r.tenantsForPolicy)).
		WatchesRawSource(source.Channel(r.events, &handler.TypedEnqueueRequestForObject[*tenancyv1alpha1.Tenant]{})).
		Complete(r)
}

// Notify asks the controller to re-read the named Tenant's state (used by Clusters).
func (r *Reconciler) Notify(name string) {
	if r.events == nil {
		return
	}
	t := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}
	select {
	case r.events <- event.TypedGenericEvent[*tenancyv1alpha1.Tenant]{Object: t}:
	default: // a notification is already pending; the periodic resync catches up
	}
}

func (r *Reconciler) tenantsForSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var list tenancyv1alpha1.TenantList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, t := range list.Items {
		ref := t.Spec.KubeconfigSecretRef
		if ref.Namespace == o.GetNamespace() && ref.Name == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: t.Name}})
		}
	}
	return out
}

// tenantsForPolicy maps a TenantPolicy to the Tenants it applies to: every Tenant for the
// "default" policy (all inherit from it), else those naming it.
func (r *Reconciler) tenantsForPolicy(ctx context.Context, o client.Object) []reconcile.Request {
	var list tenancyv1alpha1.TenantList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, t := range list.Items {
		if o.GetName() == tenancyv1alpha1.DefaultPolicyName || t.Spec.PolicyName == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: t.Name}})
		}
	}
	return out
}

// resolvePolicy returns the Tenant's effective policy: its spec.policyName TenantPolicy over
// the "default" one over the built-in defaults (policy.Resolve). A named policy that does not
// exist sets PolicyValid=False and gives the built-in defaults alone (the strictest), never
// "default" alone: an admin who named a stricter policy must not get a looser one by a typo.
func (r *Reconciler) resolvePolicy(ctx context.Context, t *tenancyv1alpha1.Tenant) (*policy.Effective, error) {
	get := func(name string) (*tenancyv1alpha1.TenantPolicySpec, bool, error) {
		p := &tenancyv1alpha1.TenantPolicy{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, p); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("failed to read TenantPolicy %s: %w", name, err)
		}
		return &p.Spec, true, nil
	}
	def, _, err := get(tenancyv1alpha1.DefaultPolicyName)
	if err != nil {
		return nil, err
	}
	name := t.Spec.PolicyName
	if name == "" || name == tenancyv1alpha1.DefaultPolicyName {
		setCondition(t, tenancyv1alpha1.ConditionPolicyValid, metav1.ConditionTrue, ReasonValid, "policy: the default TenantPolicy (or built-in defaults)")
		return policy.Resolve(def, nil), nil
	}
	named, found, err := get(name)
	if err != nil {
		return nil, err
	}
	if !found {
		msg := fmt.Sprintf("TenantPolicy %q does not exist; the built-in defaults apply", name)
		if c := meta.FindStatusCondition(t.Status.Conditions, tenancyv1alpha1.ConditionPolicyValid); c == nil || c.Status != metav1.ConditionFalse {
			r.Recorder.Event(t, corev1.EventTypeWarning, ReasonPolicyNotFound, msg)
		}
		setCondition(t, tenancyv1alpha1.ConditionPolicyValid, metav1.ConditionFalse, ReasonPolicyNotFound, msg)
		return policy.Default(), nil
	}
	setCondition(t, tenancyv1alpha1.ConditionPolicyValid, metav1.ConditionTrue, ReasonValid, fmt.Sprintf("policy: TenantPolicy %q over the default one", name))
	return policy.Resolve(def, named), nil
}

// Reconcile brings one Tenant's Cluster in line with its spec and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx).WithValues("tenant", req.Name)
	ctx = ctrl.LoggerInto(ctx, log)

	t := &tenancyv1alpha1.Tenant{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		if apierrors.IsNotFound(err) {
			r.Registry.remove(req.Name)
			r.Registry.setRanges(req.Name, nil)
			if r.Handover != nil {
				r.Handover.SetClaimed(req.Name, false)
			}
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	// Every Tenant's Service ranges, synced here or not: another tenant's Service must never
	// be given an address from them. The first reconcile records all of them, before any
	// tenant starts syncing Services.
	r.primeRanges.Do(func() {
		var list tenancyv1alpha1.TenantList
		if err := r.Client.List(ctx, &list); err == nil {
			for i := range list.Items {
				ps, _ := parseServiceCIDRs(list.Items[i].Spec.ServiceCIDRs)
				if ps == nil {
					ps = []netip.Prefix{}
				}
				r.Registry.setRanges(list.Items[i].Name, ps)
			}
		}
	})
	ranges, _ := parseServiceCIDRs(t.Spec.ServiceCIDRs)
	if ranges == nil {
		ranges = []netip.Prefix{}
	}
	r.Registry.setRanges(t.Name, ranges)
	if r.Sharding != nil {
		if proceed, res, err := r.shard(ctx, t); !proceed {
			return res, err
		}
	}
	if !t.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, t)
	}
	if controllerutil.AddFinalizer(t, Finalizer) {
		if err := r.Client.Update(ctx, t); err != nil {
			return reconcile.Result{}, fmt.Errorf("failed to add finalizer: %w", err)
		}
	}

	original := t.DeepCopy()
	defer func() {
		t.Status.ObservedGeneration = t.Generation
		t.Status.SuperNamespacePrefix = conversion.SuperNamespacePrefix(t.Name, string(t.UID))
		// meta.SetStatusCondition keeps lastTransitionTime unless the status changes, so an
		// unchanged status compares equal and is not written.
		if equality.Semantic.DeepEqual(original.Status, t.Status) {
			return
		}
		// A merge patch of status only: no conflict with concurrent spec or metadata writes.
		if err := r.Client.Status().Patch(ctx, t, client.MergeFrom(original)); err != nil && !apierrors.IsNotFound(err) {
			reterr = errors.Join(reterr, fmt.Errorf("failed to update Tenant status: %w", err))
		}
		if reterr != nil {
			res = reconcile.Result{}
		}
	}()
	return r.reconcileNormal(ctx, t)
}

func (r *Reconciler) reconcileNormal(ctx context.Context, t *tenancyv1alpha1.Tenant) (reconcile.Result, error) {
	r.kubeletCAStatus(ctx, t)
	if t.Spec.Paused {
		r.Registry.remove(t.Name)
		setCondition(t, tenancyv1alpha1.ConditionSynced, metav1.ConditionFalse, ReasonPaused, "spec.paused is true; super-cluster objects are kept")
		t.Status.Phase = tenancyv1alpha1.TenantPaused
		return reconcile.Result{}, nil
	}

	cfg, hash, reason, msg := r.loadKubeconfig(ctx, t)
	if cfg == nil {
		// Without a usable kubeconfig the tenant is not synced: a Secret removed or broken
		// on purpose must stop the syncer from acting for that tenant.
		r.Registry.remove(t.Name)
		setCondition(t, tenancyv1alpha1.ConditionKubeconfigValid, metav1.ConditionFalse, reason, msg)
		setCondition(t, tenancyv1alpha1.ConditionConnected, metav1.ConditionUnknown, ReasonWaiting, "no usable kubeconfig")
		setCondition(t, tenancyv1alpha1.ConditionSynced, metav1.ConditionFalse, ReasonWaiting, "no usable kubeconfig")
		t.Status.Phase = tenancyv1alpha1.TenantPending
		r.Recorder.Event(t, corev1.EventTypeWarning, reason, msg)
		return reconcile.Result{}, nil // the Secret watch triggers the next attempt
	}
	setCondition(t, tenancyv1alpha1.ConditionKubeconfigValid, metav1.ConditionTrue, ReasonValid, "kubeconfig Secret is usable")

	pol, err := r.resolvePolicy(ctx, t)
	if err != nil {
		return reconcile.Result{}, err
	}
	c, running := r.Registry.Get(t.Name)
	overflowed := running && c.Held.Overflowed()
	notLocal := running && c.APIServicesNotLocal()
	if !running || c.kubeconfigHash != hash || c.UID != string(t.UID) || overflowed || notLocal {
		nc, err := newCluster(t.Name, string(t.UID), cfg, hash, t.EffectiveWeight(), r.Registry.RequestTimeout, r.Notify, r.Registry.NewInformers)
		if err != nil {
			setCondition(t, tenancyv1alpha1.ConditionKubeconfigValid, metav1.ConditionFalse, ReasonInvalidKubeconfig, err.Error())
			t.Status.Phase = tenancyv1alpha1.TenantPending
			return reconcile.Result{}, nil
		}
		nc.restored = r.Registry.Restored
		nc.SetPolicy(pol)                           // before it starts: its first sync already follows the policy
		_ = nc.SetServiceCIDRs(t.Spec.ServiceCIDRs) // likewise; an error is logged below
		_ = nc.SetKubeletClientCA(t.Spec.KubeletClientCA)
		switch {
		case overflowed:
			// The caches took more of the tenant's objects than limits.maxCachedObjects: they
			// are dropped with the old Cluster, and the new one waits before it counts again.
			nc.suspend = suspension{delay: r.Registry.nextSuspendDelay(t.Name), objects: int64(c.Held.Entries())}
			ctrl.LoggerFrom(ctx).Info("Restarting tenant connection", "reason", "too many objects", "objects", nc.suspend.objects)
		case notLocal:
			// A watched API is served by another server: the caches are dropped, and the new
			// Cluster checks again (CheckAPIServices) before it lists, with backoff.
			ctrl.LoggerFrom(ctx).Info("Restarting tenant connection", "reason", "a watched API is served by another server")
		case running:
			ctrl.LoggerFrom(ctx).Info("Restarting tenant connection", "reason", "kubeconfig changed")
		}
		r.Registry.put(nc)
		c = nc
	}
	c.setWeight(t.EffectiveWeight())
	if err := c.SetServiceCIDRs(t.Spec.ServiceCIDRs); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Ignoring invalid Service ranges")
	}
	if err := c.SetKubeletClientCA(t.Spec.KubeletClientCA); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Ignoring invalid kubelet client CA; the tenant's kubelet requests are refused")
	}
	if c.SetPolicy(pol) {
		ctrl.LoggerFrom(ctx).Info("Applying changed tenant policy", "generation", pol.Generation)
		r.Registry.policyChanged(c)
	}

	wasSuspended := isSuspended(t)
	setConnectionStatus(t, c.State())
	setMemoryBoundStatus(t, &c.Held, c.State())
	if s := c.State(); s.Suspended && !wasSuspended {
		r.Recorder.Event(t, corev1.EventTypeWarning, ReasonTooManyObjects, suspendedMessage(s))
	}
	// Clusters notify on change; this periodic requeue is a safety net for missed notifications.
	return reconcile.Result{RequeueAfter: time.Minute}, nil
}

// loadKubeconfig reads and validates the Tenant's kubeconfig Secret (ParseKubeconfig). It
// returns a nil config with a condition reason and message when the kubeconfig cannot be used;
// the caller reports them as KubeconfigValid=False and a Warning Event, and the Secret watch
// brings the next attempt (no requeue).
func (r *Reconciler) loadKubeconfig(ctx context.Context, t *tenancyv1alpha1.Tenant) (*rest.Config, string, string, string) {
	ref := t.Spec.KubeconfigSecretRef
	if ref.Namespace != r.KubeconfigNamespace {
		return nil, "", ReasonNamespaceNotWatched, fmt.Sprintf("kubeconfig Secrets must be in namespace %q (the syncer's --kubeconfig-namespace), not %q", r.KubeconfigNamespace, ref.Namespace)
	}
	sec := &corev1.Secret{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", ReasonSecretNotFound, fmt.Sprintf("Secret %s/%s not found; syncing starts when it appears", ref.Namespace, ref.Name)
		}
		return nil, "", ReasonSecretNotFound, fmt.Sprintf("failed to read Secret %s/%s: %v", ref.Namespace, ref.Name, err)
	}
	data, ok := sec.Data[ref.KubeconfigKey()]
	if !ok || len(data) == 0 {
		return nil, "", ReasonSecretKeyMissing, fmt.Sprintf("Secret %s/%s has no key %q", ref.Namespace, ref.Name, ref.KubeconfigKey())
	}
	cfg, err := ParseKubeconfig(data)
	if errors.Is(err, ErrInlineCredentialsRequired) {
		return nil, "", ReasonInlineCredentialsRequired, err.Error()
	}
	if err != nil {
		return nil, "", ReasonInvalidKubeconfig, err.Error()
	}
	sum := sha256.Sum256(data)
	return cfg, hex.EncodeToString(sum[:]), "", ""
}

func (r *Reconciler) reconcileDelete(ctx context.Context, t *tenancyv1alpha1.Tenant) (reconcile.Result, error) {
	r.Registry.remove(t.Name)
	if !controllerutil.ContainsFinalizer(t, Finalizer) {
		return reconcile.Result{}, nil
	}
	if t.Status.Phase != tenancyv1alpha1.TenantTerminating {
		t.Status.Phase = tenancyv1alpha1.TenantTerminating
		setCondition(t, tenancyv1alpha1.ConditionSynced, metav1.ConditionFalse, ReasonDeleting, "deleting the tenant's super-cluster namespaces")
		if err := r.Client.Status().Update(ctx, t); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	remaining, err := CleanupSuperNamespaces(ctx, r.Client, string(t.UID))
	if err != nil {
		return reconcile.Result{}, err
	}
	if remaining > 0 {
		ctrl.LoggerFrom(ctx).V(2).Info("Waiting for super namespaces to be deleted", "remaining", remaining)
		return reconcile.Result{RequeueAfter: 2 * time.Second}, nil
	}
	controllerutil.RemoveFinalizer(t, Finalizer)
	if err := r.Client.Update(ctx, t); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{}, nil
}

// CleanupSuperNamespaces deletes every super namespace owned by the tenant with the given UID
// (selected by label, confirmed by annotation) and returns how many still exist. It is the
// cleanup policy for a removed Tenant: everything the syncer created lives in those namespaces.
func CleanupSuperNamespaces(ctx context.Context, c client.Client, tenantUID string) (int, error) {
	var list corev1.NamespaceList
	if err := c.List(ctx, &list, client.MatchingLabels{
		conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: tenantUID,
	}); err != nil {
		return 0, fmt.Errorf("failed to list super namespaces of tenant: %w", err)
	}
	n := 0
	for i := range list.Items {
		ns := &list.Items[i]
		if !conversion.OwnedByTenant(ns, tenantUID) {
			continue
		}
		n++
		if ns.DeletionTimestamp.IsZero() {
			if err := c.Delete(ctx, ns, client.Preconditions{UID: &ns.UID}); client.IgnoreNotFound(err) != nil {
				return n, fmt.Errorf("failed to delete super namespace %s: %w", ns.Name, err)
			}
		}
	}
	return n, nil
}

func setCondition(t *tenancyv1alpha1.Tenant, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&t.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: t.Generation,
	})
}

// setConnectionStatus sets the Connected and Synced conditions and the phase of a Tenant whose
// kubeconfig is usable, from its Cluster's state. A failed connection gives Connected=False and
// Synced=False with the same reason (Unreachable, Unauthorized or DuplicateControlPlane: not
// "waiting for caches", which will not fill until the cause is fixed) and the phase PhaseOf.
func setConnectionStatus(t *tenancyv1alpha1.Tenant, s State) {
	failed := !s.Connected && s.LastError != ""
	reason := s.LastReason
	if reason == "" {
		reason = ReasonUnreachable
	}
	switch {
	case s.Connected:
		setCondition(t, tenancyv1alpha1.ConditionConnected, metav1.ConditionTrue, ReasonReachable, "tenant apiserver answers")
	case failed:
		setCondition(t, tenancyv1alpha1.ConditionConnected, metav1.ConditionFalse, reason, s.LastError)
	default:
		setCondition(t, tenancyv1alpha1.ConditionConnected, metav1.ConditionUnknown, ReasonWaiting, "probing tenant apiserver")
	}
	switch {
	case failed:
		setCondition(t, tenancyv1alpha1.ConditionSynced, metav1.ConditionFalse, reason, notSyncingMessage(reason, s.Synced))
	case s.Suspended:
		setCondition(t, tenancyv1alpha1.ConditionSynced, metav1.ConditionFalse, ReasonTooManyObjects, suspendedMessage(s))
	case s.Synced:
		setCondition(t, tenancyv1alpha1.ConditionSynced, metav1.ConditionTrue, ReasonCachesSynced, "caches synced; objects are being synced")
	default:
		setCondition(t, tenancyv1alpha1.ConditionSynced, metav1.ConditionFalse, ReasonCachesSyncing, "waiting for tenant caches")
	}
	t.Status.Phase = PhaseOf(s)
}

// setMemoryBoundStatus sets the WithinMemoryBound condition from the tenant's HeldBytes: False
// (reason MemoryBoundReached) while objects are held out. The message names no live counts, so
// the status is written only when the condition changes; vcsyncer_tenant_cached_bytes and
// vcsyncer_tenant_held_out_objects give the figures.
func setMemoryBoundStatus(t *tenancyv1alpha1.Tenant, h *HeldBytes, s State) {
	if s.Suspended {
		setCondition(t, tenancyv1alpha1.ConditionWithinMemoryBound, metav1.ConditionFalse, ReasonTooManyObjects, suspendedMessage(s))
		return
	}
	if _, out := h.Totals(); out > 0 {
		setCondition(t, tenancyv1alpha1.ConditionWithinMemoryBound, metav1.ConditionFalse, ReasonMemoryBoundReached,
			"some of the tenant's objects are kept out of the syncer's memory and not synced (over the policy's limits.maxObjectBytes, or beyond limits.maxCachedBytes in all); each has a PolicyDenied Event; they are synced when others are deleted or the policy allows more")
		return
	}
	setCondition(t, tenancyv1alpha1.ConditionWithinMemoryBound, metav1.ConditionTrue, ReasonWithinBound,
		"the syncer holds every object of the tenant it caches")
}

// isSuspended reports whether t's Synced condition says its sync is suspended.
func isSuspended(t *tenancyv1alpha1.Tenant) bool {
	c := meta.FindStatusCondition(t.Status.Conditions, tenancyv1alpha1.ConditionSynced)
	return c != nil && c.Reason == ReasonTooManyObjects
}

// suspendedMessage is the message of a suspended tenant's conditions and Event (State.Suspended).
func suspendedMessage(s State) string {
	if s.CountError != "" {
		return fmt.Sprintf("not syncing: the syncer could not check the tenant's APIs or count its objects (%s), so it does not watch it (its super-cluster objects are kept); it counts again with backoff (2s doubling to 10m) or when the policy changes, and syncing resumes once a count finds at most limits.maxCachedObjects (%d)",
			s.CountError, s.ObjectLimit)
	}
	return fmt.Sprintf("not syncing: the tenant has %d objects of the kinds the syncer caches, more than the policy's limits.maxCachedObjects (%d); the syncer does not watch it (its super-cluster objects are kept) and counts again with backoff (30s doubling to 10m) or when the policy changes; syncing resumes once it has at most that many",
		s.Objects, s.ObjectLimit)
}

// notSyncingMessage is the Synced=False message for a failed connection with reason.
func notSyncingMessage(reason string, wasSynced bool) string {
	resume := "syncing starts"
	if wasSynced {
		resume = "syncing resumes"
	}
	switch reason {
	case ReasonDuplicateControlPlane:
		return "not syncing: another Tenant syncs this control plane; remove one of the two Tenants"
	case ReasonUnauthorized:
		return "not syncing: the tenant apiserver refuses the kubeconfig's credentials; " + resume + " when it accepts them"
	default:
		return "the tenant apiserver is unreachable; " + resume + " when it answers"
	}
}

// PhaseOf returns the phase of a Tenant with a usable kubeconfig whose Cluster is in state s:
// after a failed probe DuplicateControlPlane, Unauthorized or Unreachable by the failure's
// reason (State.LastReason); else Running once the caches synced, Connecting before.
func PhaseOf(s State) tenancyv1alpha1.TenantPhase {
	switch {
	case !s.Connected && s.LastError != "":
		switch s.LastReason {
		case ReasonDuplicateControlPlane:
			return tenancyv1alpha1.TenantDuplicateControlPlane
		case ReasonUnauthorized:
			return tenancyv1alpha1.TenantUnauthorized
		}
		return tenancyv1alpha1.TenantUnreachable
	case s.Suspended:
		return tenancyv1alpha1.TenantSuspended
	case s.Synced:
		return tenancyv1alpha1.TenantRunning
	default:
		return tenancyv1alpha1.TenantConnecting
	}
}
