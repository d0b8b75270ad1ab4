package pod

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/priorityclass"
	"github.com/vcsyncer/syncer/pkg/resources/storageclass"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// ReasonNodeNotFound is the Event reason for a tenant Pod whose preset spec.nodeName names no
// super Node.
const ReasonNodeNotFound = "NodeNotFound"

// ReasonTokenSyncFailed is the Event reason for a tenant Pod whose service-account tokens could
// not be requested from the tenant or written into the super cluster.
const ReasonTokenSyncFailed = "TokenSyncFailed"

// ReasonSuperPodLost is the status reason of a tenant Pod whose bound super Pod disappeared.
const ReasonSuperPodLost = "SuperPodLost"

func reconcileDownward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	superNS := resources.SuperNamespace(c, ns)
	if err := admit.CheckNamespaceCollision(env, c, ns); err != nil {
		return err // another tenant namespace of this tenant holds the super namespace
	}
	t, err := podcache.ListerOf(c.Informers.Core().V1().Pods().Informer()).Pods(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	tFound := err == nil
	s, err := podcache.ListerOf(env.SuperInformers.Core().V1().Pods().Informer()).Pods(superNS).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	sFound := err == nil
	superPods := env.Super.CoreV1().Pods(superNS)
	holdSlot := false // an admission slot taken below is kept (its super Pod was created)

	if sFound && conversion.HoldsOtherNamespace(s, c.UID, ns) {
		_, holder, _ := conversion.HeldNamespace(s)
		return admit.RefuseNamespaceCollision(c, ns, superNS, holder)
	}
	if sFound {
		o, owned := conversion.OwnerOf(s)
		if !owned || o.TenantUID != c.UID {
			if tFound {
				c.Recorder.Eventf(t, corev1.EventTypeWarning, "SyncConflict",
					"Pod %s/%s exists in the super cluster and is not owned by this tenant; not syncing", superNS, name)
			}
			return fmt.Errorf("Pod %s/%s: %w", superNS, name, resources.ErrNotOwned)
		}
		if tFound && o.UID != string(t.UID) {
			// The tenant Pod was recreated under the same name: the super Pod is stale, unless
			// the tenant cache lags behind the tenant (confirmed by a live read).
			if live, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && string(live.UID) == o.UID {
				return fmt.Errorf("Pod %s/%s: the tenant cache has an older Pod than the tenant; retrying", ns, name)
			}
			if err := reconcile.DeleteSuper(ctx, superPods, s); err != nil {
				return err
			}
			return fmt.Errorf("Pod %s/%s: deleted the stale super Pod of a recreated tenant Pod, will recreate", superNS, name)
		}
	}

	if tFound && t.DeletionTimestamp.IsZero() {
		if d := admit.HeldOut(c, resources.KindPod, t); d != nil {
			return refuseHeldOut(ctx, c, t, sFound, d)
		}
	}

	switch {
	case !tFound:
		admit.QuotaAdmitted(c, resources.KindPod, ns, name)
		admit.Gone(c, resources.KindPod, ns, name)
		resources.LeaveBudget(env, c, resources.KindPod, superNS, name)
		if sFound && s.DeletionTimestamp.IsZero() {
			// Deleting a running super Pod cannot be undone: confirm with the apiserver that
			// the tenant Pod is gone (the tenant cache can lag, e.g. right after a resume from
			// a checkpoint).
			if live, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && string(live.UID) == s.Annotations[conversion.AnnotationUID] {
				return fmt.Errorf("Pod %s/%s: not in the tenant cache yet but present in the tenant; retrying", ns, name)
			} else if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			return reconcile.DeleteSuper(ctx, superPods, s)
		}
		return nil

	case !t.DeletionTimestamp.IsZero():
		if sFound {
			if s.DeletionTimestamp.IsZero() {
				uid := s.UID
				// Clamped to the policy's bound, and never a force deletion (policy.DeletionGracePeriod).
				grace, changed := policy.DeletionGracePeriod(c.Policy().Pods(), t.DeletionGracePeriodSeconds)
				if changed != nil {
					admit.Filtered(c, resources.KindPod, t, policy.RuleTerminationGracePeriod, t.ResourceVersion, changed)
				}
				return client404(superPods.Delete(ctx, name, metav1.DeleteOptions{
					GracePeriodSeconds: grace,
					Preconditions:      &metav1.Preconditions{UID: &uid},
				}))
			}
			return nil // the super Pod's deletion event brings us back
		}
		// The super Pod is gone: finish the tenant Pod's graceful deletion, as a kubelet would,
		// leaving a disrupted Pod in a terminal phase first (a Job's podFailurePolicy waits
		// for it).
		if cond := disruptionOf(env, t); cond != nil && t.Status.Phase != corev1.PodSucceeded && t.Status.Phase != corev1.PodFailed {
			if err := disrupted(ctx, env, c, t, *cond, true, nil); err != nil {
				return err
			}
		}
		zero := int64(0)
		uid := t.UID
		return client404(c.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{
			GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid},
		}))

	case !sFound:
		if wasRunInSuper(t) {
			// Failing a Pod cannot be undone: confirm with the apiserver that the super Pod is
			// gone. The cache can lag behind it, e.g. right after a resume from a checkpoint,
			// while the watch replays what happened since the checkpoint was taken.
			if _, err := superPods.Get(ctx, name, metav1.GetOptions{}); err == nil {
				return fmt.Errorf("Pod %s/%s: not in the cache yet but present in the super cluster; retrying", superNS, name)
			} else if !apierrors.IsNotFound(err) {
				return err
			}
			if cond := disruptionOf(env, t); cond != nil {
				// Evicted, preempted, or deleted by the taint manager or the Pod GC: a
				// disruption, not a loss.
				return disrupted(ctx, env, c, t, *cond, true, nil)
			}
			return markLost(ctx, c, t)
		}
		if admit.IsRejected(c, resources.KindPod, t) {
			return nil // the super cluster refused this version under this policy (rejectedBySuper)
		}
		if t.Spec.NodeName != "" && !presetNodeAllowed(env, c, t.Spec.NodeName) {
			// As in a cluster where no kubelet has that name: the Pod never runs.
			c.Recorder.Eventf(t, corev1.EventTypeWarning, ReasonNodeNotFound,
				"spec.nodeName %q is preset and is not one of this tenant's virtual Nodes; the Pod will not run", t.Spec.NodeName)
			return nil
		}
		// The tenant's budget (limits.quota over all of its namespaces), from the syncer's
		// counts, before any apiserver is asked anything: a Pod without room waits, parked
		// until room appears, at no cost to either apiserver (budget.go).
		budget, wait, err := admitBudget(ctx, env, c, t, superNS)
		if err != nil || wait {
			return err
		}
		defer budget.Done()
		// The quota's Pod count, from the super cache, before any apiserver is asked (a Pod the
		// quota has no room for is retried with backoff; each retry stays this cheap). Checked
		// again below once the namespace and its quota surely exist.
		quotaProbe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: superNS}}
		if d := admit.CheckQuota(env, c, resources.KindPod, ns, quotaProbe); d != nil {
			return reportQuota(ctx, c, t, d, nil)
		}
		// The admission window paces new super Pods that the super scheduler will place; it is
		// asked before anything costly (a tenant read, tokens) is done for a Pod that waits.
		if t.Spec.NodeName == "" && env.PodAdmission != nil {
			ok, took := env.PodAdmission.Admit(c.Name, ns, name, superNS)
			if !ok {
				return nil // run again when granted a slot
			}
			if took {
				defer func() {
					if !holdSlot {
						env.PodAdmission.Abort(superNS, name)
					}
				}()
			}
		}
		// The tenant cache holds a Pod not yet bound with its whole spec: the super Pod is made
		// from it, and its tokens were requested when it arrived if the policy allowed it
		// (TokenPrefetcher), else they are requested once the policy has decided (below). Else (a
		// trimmed Pod: bound, e.g. a preset spec.nodeName, or one restored from a checkpoint)
		// the full spec is read once, at least as new as the cached copy (served from the
		// tenant apiserver's watch cache), and the tokens are requested from the cached Pod
		// meanwhile; they are used only if the full spec asks for the same tokens. Not for a
		// Pod that will wait for its ServiceAccount's super copy (checked below): each of its
		// retries would ask again.
		obj, _, _ := c.Informers.Core().V1().Pods().Informer().GetIndexer().GetByKey(ns + "/" + name)
		full, cached := cachedFullPod(obj)
		prefetchCtx, cancelPrefetch := context.WithCancel(ctx)
		defer cancelPrefetch()
		var prefetch *tokenPrefetch
		if !cached && serviceAccountCopied(env, superNS, t.Spec.ServiceAccountName) {
			limit := -1
			if m := c.Policy().Pods().MaxServiceAccountTokens; m != nil {
				limit = int(*m)
			}
			prefetch = prefetchTokens(prefetchCtx, c, t, limit)
		}
		if !cached {
			if full, err = c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{ResourceVersion: t.ResourceVersion}); err != nil {
				return fmt.Errorf("failed to read tenant Pod %s/%s: %w", ns, name, err)
			}
		}
		if full.UID != t.UID {
			return fmt.Errorf("tenant Pod %s/%s was recreated; will retry", ns, name)
		}
		if full.Spec.NodeName != t.Spec.NodeName {
			// Bound in the tenant after the cached copy was read (a Binding the tenant posted):
			// the preset-node check above ran on the cached copy, so wait for the cache.
			return fmt.Errorf("tenant Pod %s/%s: spec.nodeName changed to %q since it was cached; will retry", ns, name, full.Spec.NodeName)
		}
		if wait, err := recheckBudget(ctx, c, budget, full); err != nil || wait {
			return err
		}
		// The policy decides before anything is written for the Pod (its super namespace,
		// tokens, the super Pod).
		localRC, err := localRuntimeClass(ctx, env, c, &full.Spec)
		if err != nil {
			return err
		}
		if d := policyDenial(env, c, ns, &full.Spec, localRC); d != nil {
			return refuse(ctx, c, full, d)
		}
		if _, err := admit.EnsureSuperNamespace(ctx, env, c, ns); err != nil {
			return err
		}
		if d := admit.CheckQuota(env, c, resources.KindPod, ns, quotaProbe); d != nil {
			return reportQuota(ctx, c, t, d, nil)
		}
		if sa := full.Spec.ServiceAccountName; !serviceAccountCopied(env, superNS, sa) {
			// The super apiserver refuses a Pod whose ServiceAccount is missing: wait for the
			// ServiceAccount's super copy (its arrival enqueues this Pod again).
			return fmt.Errorf("Pod %s/%s waits for the super copy of ServiceAccount %s", ns, name, sa)
		}
		if !priorityClassAllowed(env, c, full) {
			// Rejected early, with a PriorityClassNotPublic Event and condition.
			msg := priorityClassNotPublic(full.Spec.PriorityClassName)
			_, err := setNotScheduled(ctx, c, full, priorityclass.ReasonPriorityClassNotPublic, msg)
			if err == nil {
				reportOwner(ctx, c, full, priorityclass.ReasonPriorityClassNotPublic, msg)
			}
			return err
		}
		want, filtered := desired(c, full, superNS, nil)
		if localRC {
			runtime := "the super cluster's default runtime"
			if rc := want.Spec.RuntimeClassName; rc != nil {
				runtime = "the RuntimeClass " + *rc + " of the tenant's policy"
			}
			c.Recorder.Eventf(full, corev1.EventTypeNormal, ReasonLocalRuntimeClass,
				"RuntimeClass %s exists only in this cluster; the Pod runs with %s", *full.Spec.RuntimeClassName, runtime)
		}
		droppedTemplateMeta := confineEphemeralClaims(env, c, ns, &want.Spec)
		admit.ReportDroppedMeta(c, resources.KindPod, full, want, droppedTemplateMeta...)
		if filtered != nil {
			// Filtered, not refused: reported (once per Pod version), and the Pod is synced.
			admit.Deny(c, resources.KindPod, full, filtered)
		} else {
			admit.Admitted(c, resources.KindPod, ns, name)
		}
		if pc := full.Spec.PriorityClassName; pc != "" && priorityclass.IsPublic(env, pc) && policy.PriorityClassAllowed(c.Policy().Pods(), pc) {
			want.Spec.PriorityClassName = pc
		}
		// A preset spec.nodeName naming an existing super Node (a vNode's name) is honoured.
		want.Spec.NodeName = full.Spec.NodeName
		// Its cpu and memory too, before the super Pod is created.
		if d := admit.CheckQuota(env, c, resources.KindPod, ns, want); d != nil {
			return reportQuota(ctx, c, t, d, nil)
		}
		// Fields a Pod cannot change later: the tenant apiserver's address and the DNS.
		setAPIServerAccess(&want.Spec, c.APIServerHost, c.APIServerPort, env.ClusterDomain)
		if err := setTenantDNS(env, c, &want.Spec, ns); err != nil {
			return err
		}
		// The tokens travel in the super Pod's annotations: creating it is the only write.
		if tokensNeeded(&full.Spec) {
			started := time.Now()
			tokens, next, err := podTokens(ctx, env, c, full, prefetch)
			metrics.PodCreationCall(c.Name, metrics.CallTokenRequest, time.Since(started))
			var ann map[string]string
			if err == nil {
				ann, err = tokenAnnotations(c, full, tokens, next)
			}
			if err != nil {
				c.Recorder.Eventf(full, corev1.EventTypeWarning, ReasonTokenSyncFailed,
					"service-account tokens for the super-cluster copy not written (will retry): %v", err)
				return err
			}
			maps.Copy(want.Annotations, ann)
		}
		annotateCharge(budget, want)
		if env.PodEchoes != nil {
			env.PodEchoes.Expect(superNS, name, string(full.UID))
		}
		started := time.Now()
		err = reconcile.CreatePod(ctx, env.Super, superNS, want, metav1.CreateOptions{FieldManager: reconcile.FieldManager})
		if err == nil {
			metrics.PodCreationCall(c.Name, metrics.CallSuperCreate, time.Since(started))
			if env.PodEchoes != nil {
				env.PodEchoes.Answered(superNS, name)
			}
		} else if env.PodEchoes != nil {
			env.PodEchoes.Forget(superNS, name)
		}
		// The slot stays taken by the new Pod until it is bound.
		holdSlot = err == nil
		budget.WriteEnded(err)
		if holdSlot && env.PodAdmission != nil && want.Spec.NodeName == "" {
			env.PodAdmission.Created(superNS, name)
		}
		if err != nil {
			if apierrors.IsAlreadyExists(err) {
				return reconcile.Conflict(ctx, c, superPods, t, resources.KindPod, superNS, name, err)
			}
			if d := admit.QuotaExceededDenial(fmt.Sprintf("Pod %s/%s", ns, name), err); d != nil {
				return reportQuota(ctx, c, t, d, err)
			}
			if reconcile.Rejected(err) {
				return rejectedBySuper(ctx, c, t, err)
			}
			return reconcile.Report(c, t, resources.KindPod, "create", err)
		}
		if filtered != nil {
			// The super Pod exists: the record of the filtered part must not make remediation
			// skip the Pod.
			admit.Admitted(c, resources.KindPod, ns, name)
		}
		admit.QuotaAdmitted(c, resources.KindPod, ns, name)
		return nil

	default:
		if cond := resources.Disruption(&s.Status); cond != nil && !s.DeletionTimestamp.IsZero() &&
			cond.Reason != resources.ReasonTerminationByKubelet && t.Status.Phase != corev1.PodSucceeded && t.Status.Phase != corev1.PodFailed {
			// The super cluster is deleting the super Pod as a disruption: the tenant Pod
			// goes the same way now, so its controller replaces it while the super Pod
			// terminates (as on a real cluster); its deletion finishes once the super Pod is
			// gone.
			return disrupted(ctx, env, c, t, *cond, false, s.DeletionGracePeriodSeconds)
		}
		reportEphemeralContainers(c, t)
		if due, _ := tokenRefreshDue(s, time.Now()); due {
			full, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("failed to read tenant Pod %s/%s: %w", ns, name, err)
			}
			if full.UID != t.UID {
				return fmt.Errorf("tenant Pod %s/%s was recreated; will retry", ns, name)
			}
			if err := syncTokens(ctx, env, c, full, s); err != nil {
				return err
			}
		}
		if err := copyTenantConditions(ctx, superPods, t, s); err != nil {
			return reconcile.Report(c, t, resources.KindPod, "update the status of", err)
		}
		want := Desired(c, t, superNS, s)
		if !NeedsUpdate(want, s) {
			return nil
		}
		patch, err := UpdatePatch(want, s)
		if err != nil || patch == nil {
			return err
		}
		if _, err := superPods.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: reconcile.FieldManager}); err != nil {
			return reconcile.Report(c, t, resources.KindPod, "update", err)
		}
		return nil
	}
}

// reportEphemeralContainers reports the ephemeral containers of tenant Pod t (kubectl debug),
// which its super Pod never gets (desired drops them): a PolicyDenied Warning Event and one
// count with rule ephemeralContainer, once per set of ephemeral container names (a container
// added later is reported again).
func reportEphemeralContainers(c *tenant.Cluster, t *corev1.Pod) {
	names := make([]string, len(t.Spec.EphemeralContainers))
	for i, e := range t.Spec.EphemeralContainers {
		names[i] = e.Name
	}
	admit.Filtered(c, resources.KindPod, t, policy.RuleEphemeralContainer, strings.Join(names, ","), policy.EphemeralContainers(names))
}

// syncTokens writes fresh tenant service-account tokens for super Pod superPod (see
// refreshTokens); the next refresh is found by TokenRefreshesDue. A failure is reported as a TokenSyncFailed
// Event on the tenant Pod and returned (the request is retried with backoff).
func syncTokens(ctx context.Context, env *resources.Env, c *tenant.Cluster, full, superPod *corev1.Pod) error {
	if !superPod.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := refreshTokens(ctx, env, c, full, superPod); err != nil {
		c.Recorder.Eventf(full, corev1.EventTypeWarning, ReasonTokenSyncFailed,
			"service-account tokens for the super-cluster copy not written (will retry): %v", err)
		return err
	}
	return nil
}

// wasRunInSuper reports whether the tenant Pod was bound by the syncer (a PodScheduled
// condition or a host IP, which only binding and the upward status copy set), as opposed to
// a Pod created with spec.nodeName preset.
func wasRunInSuper(t *corev1.Pod) bool {
	if t.Spec.NodeName == "" {
		return false
	}
	if t.Status.HostIP != "" {
		return true
	}
	for _, cond := range t.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// markLost sets a bound tenant Pod whose super Pod disappeared to phase Failed with dead
// containers (lostStatus), so that its controller replaces it instead of it staying Running
// forever.
func markLost(ctx context.Context, c *tenant.Cluster, t *corev1.Pod) error {
	if t.Status.Phase == corev1.PodSucceeded || t.Status.Phase == corev1.PodFailed {
		return nil
	}
	if tns, err := c.Informers.Core().V1().Namespaces().Lister().Get(t.Namespace); err == nil && !tns.DeletionTimestamp.IsZero() {
		return nil // the namespace is going away; its Pods are deleted anyway
	}
	// The same from the apiserver: the cache can lag (e.g. right after a resume from a
	// checkpoint) while the super namespace, and with it the super Pod, is already gone.
	if tns, err := c.Client.CoreV1().Namespaces().Get(ctx, t.Namespace, metav1.GetOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	} else if err != nil || !tns.DeletionTimestamp.IsZero() {
		return nil
	}
	u := t.DeepCopy()
	u.Status = *lostStatus(t, metav1.Now())
	if _, err := c.Client.CoreV1().Pods(t.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return fmt.Errorf("failed to mark tenant Pod %s/%s lost: %w", t.Namespace, t.Name, err)
	}
	c.Recorder.Event(t, corev1.EventTypeWarning, ReasonSuperPodLost, u.Status.Message)
	return nil
}

// refuse reports that tenant Pod p (its full spec) is refused by the tenant's policy and is
// not synced: its PodScheduled condition is set to False with reason policy.ReasonPolicyDenied
// and d's message (as the scheduler reports an unschedulable Pod; written only when the
// condition differs, so a refused Pod causes no write loop), then admit.Deny records the
// Warning Event and the count for the Pod's version after that write (so the informer's
// event for it reports nothing again); a new report also goes to the Pod's controller
// (reportOwner). It returns nil: the Pod is retried when it or the policy changes, not on a
// timer; only a failed status write is returned (and retried).
func refuse(ctx context.Context, c *tenant.Cluster, p *corev1.Pod, d *policy.Denial) error {
	obj := p
	msg := d.Error()
	cond := scheduledCondition(p)
	if cond == nil || cond.Status != corev1.ConditionFalse || cond.Reason != d.Reason() || cond.Message != msg {
		u := p.DeepCopy()
		want := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: d.Reason(),
			Message: msg, LastTransitionTime: metav1.Now()}
		if cond != nil && cond.Status == corev1.ConditionFalse {
			want.LastTransitionTime = cond.LastTransitionTime
		}
		if c := scheduledCondition(u); c != nil {
			*c = want
		} else {
			u.Status.Conditions = append(u.Status.Conditions, want)
		}
		updated, err := c.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager})
		if err != nil {
			return fmt.Errorf("failed to mark tenant Pod %s/%s refused by policy (%s): %w", p.Namespace, p.Name, d.Rule, err)
		}
		obj = updated
	}
	if admit.Deny(c, resources.KindPod, obj, d) {
		reportOwner(ctx, c, p, d.Reason(), msg)
	}
	return nil
}

// refuseHeldOut refuses tenant Pod t, a stub in the tenant cache (kept out of the syncer's
// memory: refusal d, rule objectSize or cachedBytes), once per version: no super Pod is created
// (an existing one, created before the Pod grew, is left as it was and keeps running, its
// status no longer copied up), a PolicyDenied Event, and, when there is no super Pod, the
// usual PodScheduled=False condition with reason PolicyDenied, written as a patch of that
// condition alone (the stub has no status to write from). The patch makes a new version of
// the Pod; the refusal is recorded at that version, so its watch event is not refused again.
func refuseHeldOut(ctx context.Context, c *tenant.Cluster, t *corev1.Pod, sFound bool, d *policy.Denial) error {
	if admit.IsRefused(c, resources.KindPod, t) {
		return nil
	}
	obj := t
	if !sFound {
		written, err := setNotScheduled(ctx, c, t, policy.ReasonPolicyDenied, d.Error())
		if err != nil {
			return fmt.Errorf("failed to mark tenant Pod %s/%s refused by policy (%s): %w", t.Namespace, t.Name, d.Rule, err)
		}
		obj = written
	}
	admit.Deny(c, resources.KindPod, obj, d)
	return nil
}

// scheduledCondition returns a pointer to p's PodScheduled condition (nil when it has none).
func scheduledCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func client404(err error) error {
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// presetNodeAllowed reports whether a tenant Pod may be bound directly to super Node name: only
// when the super Node exists and the super scheduler already placed one of the tenant's Pods
// there (so the tenant has a vNode of that name). A tenant cannot pick arbitrary super Nodes,
// such as control-plane Nodes, by name.
func presetNodeAllowed(env *resources.Env, c *tenant.Cluster, name string) bool {
	// Decided from super-side state only: a tenant admin can create a Node labelled as a
	// vNode in the tenant, so the tenant's Nodes prove nothing.
	if _, err := env.SuperNodes.Core().V1().Nodes().Lister().Get(name); err != nil {
		return false
	}
	sel := labels.SelectorFromSet(labels.Set{conversion.LabelTenantUID: c.UID})
	pods, err := podcache.ListerOf(env.SuperInformers.Core().V1().Pods().Informer()).List(sel)
	if err != nil {
		return false
	}
	for _, p := range pods {
		if p.Spec.NodeName == name && conversion.OwnedByTenant(p, c.UID) {
			return true
		}
	}
	return false
}

// serviceAccountCopied reports whether ServiceAccount sa of a tenant Pod exists in super
// namespace superNS (the super cache): always for "" and "default", which every namespace
// has; otherwise once its super copy is cached.
func serviceAccountCopied(env *resources.Env, superNS, sa string) bool {
	if sa == "" || sa == "default" {
		return true
	}
	_, err := env.SuperInformers.Core().V1().ServiceAccounts().Lister().ServiceAccounts(superNS).Get(sa)
	return err == nil
}

// policyDenial is the tenant policy's refusal of a Pod with spec in tenant namespace ns, nil
// when it allows it: the Pod rules (checkPolicy; without the RuntimeClass when localRC, a
// class only the tenant has, which the Pod runs without), its claims' data sources and their
// StorageClasses.
func policyDenial(env *resources.Env, c *tenant.Cluster, ns string, spec *corev1.PodSpec, localRC bool) *policy.Denial {
	checked := spec
	if localRC {
		s := *spec
		s.RuntimeClassName = nil
		checked = &s
	}
	if d := checkPolicy(env, c, checked); d != nil {
		return d
	}
	if d := policy.PodClaimDataSources(c.Policy().Storage(), ns, spec); d != nil {
		return d
	}
	return storageclass.PodClaimClassDenial(env, c.Policy().Storage(), spec)
}

// cachedFullPod returns a copy of the tenant Pod cached as obj when the cache holds its whole
// spec (podcache.Pod.Full: the tenant transform keeps the spec of a Pod not yet bound), which
// the caller may modify; false for a trimmed cached Pod or anything else (a plain *corev1.Pod
// included: only the transform's form says whether the spec is whole).
func cachedFullPod(obj any) (*corev1.Pod, bool) {
	cp, ok := obj.(*podcache.Pod)
	if !ok || !cp.Full() {
		return nil, false
	}
	p, err := cp.Pod()
	if err != nil {
		return nil, false
	}
	return p.DeepCopy(), true
}
