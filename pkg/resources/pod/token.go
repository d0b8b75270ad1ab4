package pod

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/syncer/downward"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Service-account tokens of tenant Pods.
//
// A tenant Pod's projected serviceAccountToken sources (the kube-api-access-* volume that the
// tenant's ServiceAccount admission adds, and any the user wrote) must carry a token issued by
// the TENANT apiserver: the Pod talks to its tenant, and a super-cluster token must never reach
// a tenant Pod. So the syncer, like a kubelet (pkg/kubelet/token in Kubernetes), requests each
// token with the TokenRequest API (KEP-1205, bound service-account tokens) from the tenant
// apiserver, bound to the tenant Pod (so it dies with the Pod), and writes the tokens into one
// super Secret per Pod. In the super Pod, each serviceAccountToken source is replaced by a
// secret source projecting the same path from that Secret, and the tenant's root CA
// (kube-root-ca.crt, which would otherwise be the super cluster's) comes from the same Secret.
// The Secret is owned by the super Pod (ownerReference), so the super cluster's garbage
// collector deletes it with the Pod. The tokens are requested just before the super Pod is
// created (so it is created with its next refresh time) and the Secret is written right after.
// Tokens are refreshed when 80% of their lifetime has passed, the kubelet's rule; a Pending
// super Pod whose Secret went missing (a failed write, a restart in between) gets it again.

const (
	// AnnotationTokenSecret on a super Pod names the super Secret that holds its tenant tokens.
	AnnotationTokenSecret = "tenancy.vcsyncer.io/sa-token-secret"
	// AnnotationTokenRefresh on a super Pod is when (RFC 3339) its tenant tokens are refreshed
	// next. Set when the super Pod is created (the tokens are requested just before) and after
	// each refresh.
	AnnotationTokenRefresh = "tenancy.vcsyncer.io/sa-token-refresh"
	// LabelTokenSecret marks the token Secrets the syncer writes; its value is the Secret's own
	// name (TokenSecretName, 34 characters).
	LabelTokenSecret = "tenancy.vcsyncer.io/sa-token"
	// tenantCAKey is the Secret key holding the tenant's root CA bundle.
	tenantCAKey = "tenant-ca.crt"
	// rootCAConfigMap is the ConfigMap every Kubernetes namespace gets with the cluster's CA.
	rootCAConfigMap = "kube-root-ca.crt"
	// defaultTokenSeconds is the projected token lifetime when the source sets none (the API
	// default of ServiceAccountTokenProjection.expirationSeconds).
	defaultTokenSeconds = 3600
)

// TokenSecretName returns the name of the super Secret holding the tenant tokens of the tenant
// Pod with UID podUID: "vcsyncer-sa-token-" and 16 hex digits of SHA-256(UID), 34 characters.
func TokenSecretName(podUID types.UID) string {
	sum := sha256.Sum256([]byte(podUID))
	return "vcsyncer-sa-token-" + hex.EncodeToString(sum[:8])
}

// tokenKey returns the Secret key of the token of source i of projected volume vol.
func tokenKey(vol string, i int) string { return vol + "." + strconv.Itoa(i) + ".token" }

// tokenSource is one projected serviceAccountToken source of a tenant Pod.
type tokenSource struct {
	key string
	src corev1.ServiceAccountTokenProjection
}

// tokenSources lists the projected serviceAccountToken sources of spec with their Secret keys,
// and whether the Pod reads kube-root-ca.crt anywhere (refersToRootCA), so needs the tenant CA.
func tokenSources(spec *corev1.PodSpec) (out []tokenSource, needsCA bool) {
	needsCA = refersToRootCA(spec)
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for i, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				out = append(out, tokenSource{key: tokenKey(v.Name, i), src: *s.ServiceAccountToken})
			}
		}
	}
	return out, needsCA
}

// rewriteProjectedTokens replaces, in spec, every projected serviceAccountToken source with a
// source from the token Secret secretName (same path, mode from the volume), and every
// projected kube-root-ca.crt ConfigMap source with the tenant CA from that Secret. It turns off
// automounting so the super cluster's ServiceAccount admission never mounts a super token. It
// returns whether any source was rewritten (false: no Secret is needed).
func rewriteProjectedTokens(spec *corev1.PodSpec, secretName string) bool {
	rewrote := false
	for vi := range spec.Volumes {
		v := &spec.Volumes[vi]
		if v.Projected == nil {
			continue
		}
		defer func(v *corev1.Volume) {
			v.Projected.Sources = slices.DeleteFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool {
				return equality.Semantic.DeepEqual(s, corev1.VolumeProjection{})
			})
		}(v)
		for i := range v.Projected.Sources {
			s := &v.Projected.Sources[i]
			switch {
			case s.ServiceAccountToken != nil:
				path := s.ServiceAccountToken.Path
				*s = corev1.VolumeProjection{Secret: &corev1.SecretProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: secretName},
					Items:                []corev1.KeyToPath{{Key: tokenKey(v.Name, i), Path: path}},
				}}
				rewrote = true
			case s.ConfigMap != nil && s.ConfigMap.Name == rootCAConfigMap:
				// kube-root-ca.crt holds one key, ca.crt. Items must never end up empty: an
				// empty list would project every key of the token Secret.
				items := []corev1.KeyToPath{{Key: tenantCAKey, Path: "ca.crt"}}
				if len(s.ConfigMap.Items) > 0 {
					items = nil
					for _, it := range s.ConfigMap.Items {
						if it.Key == "ca.crt" {
							items = append(items, corev1.KeyToPath{Key: tenantCAKey, Path: it.Path, Mode: it.Mode})
						}
					}
				}
				if len(items) == 0 {
					// Items that name no key of kube-root-ca.crt: nothing of it would be
					// projected, so the source is dropped (below).
					*s = corev1.VolumeProjection{}
					continue
				}
				*s = corev1.VolumeProjection{Secret: &corev1.SecretProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: secretName},
					Items:                items, Optional: s.ConfigMap.Optional,
				}}
				rewrote = true
			}
		}
	}
	if rewriteRootCARefs(spec, secretName) {
		rewrote = true
	}
	f := false
	spec.AutomountServiceAccountToken = &f
	return rewrote
}

// refersToRootCA reports whether spec reads the kube-root-ca.crt ConfigMap anywhere (a
// projected source, a configMap volume, an env configMapKeyRef or an envFrom).
func refersToRootCA(spec *corev1.PodSpec) bool {
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == rootCAConfigMap {
			return true
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil && s.ConfigMap.Name == rootCAConfigMap {
					return true
				}
			}
		}
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name == rootCAConfigMap {
					return true
				}
			}
			for _, e := range c.EnvFrom {
				if e.ConfigMapRef != nil && e.ConfigMapRef.Name == rootCAConfigMap {
					return true
				}
			}
		}
	}
	return false
}

// rewriteRootCARefs points the plain references to kube-root-ca.crt in spec (configMap
// volumes, env configMapKeyRef, envFrom) at the tenant CA in the token Secret secretName: in
// the super namespace kube-root-ca.crt is the SUPER cluster's CA, which the super cluster's
// controller-manager publishes there. envFrom of kube-root-ca.crt is dropped: its only key,
// ca.crt, is not a valid variable name, so the kubelet sets nothing from it anyway. It returns
// whether anything was rewritten.
func rewriteRootCARefs(spec *corev1.PodSpec, secretName string) bool {
	rewrote := false
	for i := range spec.Volumes {
		cm := spec.Volumes[i].ConfigMap
		if cm == nil || cm.Name != rootCAConfigMap {
			continue
		}
		items := []corev1.KeyToPath{{Key: tenantCAKey, Path: "ca.crt"}}
		if len(cm.Items) > 0 {
			items = nil
			for _, it := range cm.Items {
				if it.Key == "ca.crt" {
					items = append(items, corev1.KeyToPath{Key: tenantCAKey, Path: it.Path, Mode: it.Mode})
				}
			}
		}
		if len(items) == 0 {
			// Items that name no key of kube-root-ca.crt: mount an empty directory instead of
			// every key of the token Secret.
			spec.Volumes[i].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
			continue
		}
		spec.Volumes[i].VolumeSource = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secretName, Items: items, DefaultMode: cm.DefaultMode, Optional: cm.Optional,
		}}
		rewrote = true
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			for j := range cs[i].Env {
				vf := cs[i].Env[j].ValueFrom
				if vf == nil || vf.ConfigMapKeyRef == nil || vf.ConfigMapKeyRef.Name != rootCAConfigMap {
					continue
				}
				key := tenantCAKey
				if vf.ConfigMapKeyRef.Key != "ca.crt" {
					key = "absent." + vf.ConfigMapKeyRef.Key // no such key in kube-root-ca.crt either
				}
				cs[i].Env[j].ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: secretName}, Key: key, Optional: vf.ConfigMapKeyRef.Optional,
				}}
				rewrote = true
			}
			cs[i].EnvFrom = slices.DeleteFunc(cs[i].EnvFrom, func(e corev1.EnvFromSource) bool {
				return e.ConfigMapRef != nil && e.ConfigMapRef.Name == rootCAConfigMap
			})
			if len(cs[i].EnvFrom) == 0 {
				cs[i].EnvFrom = nil
			}
		}
	}
	return rewrote
}

// tokenRefreshDue reports whether the tenant tokens of super Pod s must be (re)written now, and
// otherwise how long until they must be. A Pod without a token Secret never needs one.
func tokenRefreshDue(s *corev1.Pod, now time.Time) (due bool, after time.Duration) {
	if s.Annotations[AnnotationTokenSecret] == "" {
		return false, 0
	}
	at, err := time.Parse(time.RFC3339, s.Annotations[AnnotationTokenRefresh])
	if err != nil {
		return true, 0 // never written, or unreadable: write now
	}
	if d := at.Sub(now); d > 0 {
		return false, d
	}
	return true, 0
}

// refreshAt returns when a token issued at issued and expiring at exp is refreshed: after 80%
// of its lifetime, the kubelet's rule (pkg/kubelet/token: requiresRefresh), and at least every
// 24 hours.
func refreshAt(issued, exp time.Time) time.Time {
	at := issued.Add(exp.Sub(issued) * 8 / 10)
	if limit := issued.Add(24 * time.Hour); at.After(limit) {
		at = limit
	}
	return at
}

// tokenRequestConcurrency is how many TokenRequests of one Pod are in flight at once: a Pod
// has at most the tenant policy's pods.maxServiceAccountTokens sources (built-in 8), so its
// tokens take at most two round trips to the tenant apiserver instead of eight.
const tokenRequestConcurrency = 4

// requestTokens requests, from the tenant apiserver, a token for every projected
// serviceAccountToken source of tenant Pod full (its full spec), bound to that Pod, and reads the
// tenant root CA when the Pod refers to kube-root-ca.crt. The TokenRequests run concurrently,
// at most tokenRequestConcurrency at a time; the first that fails cancels the others. It returns
// the token Secret's data and when the tokens must be refreshed (refreshAt of the token that
// expires first; at the latest in 24 hours). Errors: a TokenRequest refused by the tenant (e.g.
// the ServiceAccount is gone) or timed out, or the tenant's kube-root-ca.crt not cached yet.
func requestTokens(ctx context.Context, c *tenant.Cluster, full *corev1.Pod) (map[string][]byte, time.Time, error) {
	srcs, needsCA := tokenSources(&full.Spec)
	data := map[string][]byte{}
	now := time.Now()
	next := now.Add(24 * time.Hour)
	sa := full.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	issued := make([]*authenticationv1.TokenRequest, len(srcs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(tokenRequestConcurrency)
	for i, ts := range srcs {
		g.Go(func() error {
			secs := int64(defaultTokenSeconds)
			if ts.src.ExpirationSeconds != nil {
				secs = *ts.src.ExpirationSeconds
			}
			var auds []string
			if ts.src.Audience != "" {
				auds = []string{ts.src.Audience}
			}
			tr, err := c.Client.CoreV1().ServiceAccounts(full.Namespace).CreateToken(gctx, sa, &authenticationv1.TokenRequest{
				Spec: authenticationv1.TokenRequestSpec{
					Audiences: auds, ExpirationSeconds: &secs,
					BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: full.Name, UID: full.UID},
				},
			}, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("TokenRequest for ServiceAccount %s/%s in the tenant: %w", full.Namespace, sa, err)
			}
			issued[i] = tr
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, time.Time{}, err
	}
	for i, ts := range srcs {
		data[ts.key] = []byte(issued[i].Status.Token)
		if at := refreshAt(now, issued[i].Status.ExpirationTimestamp.Time); at.Before(next) {
			next = at
		}
	}
	if needsCA {
		cm, err := c.Informers.Core().V1().ConfigMaps().Lister().ConfigMaps(full.Namespace).Get(rootCAConfigMap)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("tenant root CA ConfigMap %s/%s: %w", full.Namespace, rootCAConfigMap, err)
		}
		data[tenantCAKey] = []byte(cm.Data["ca.crt"])
	}
	return data, next, nil
}

// ensureTokens refreshes the tenant tokens of super Pod superPod (the live or cached super Pod;
// its UID becomes the Secret's owner): requestTokens for tenant Pod full, writeTokenSecret,
// then it records the next refresh time on the super Pod (AnnotationTokenRefresh). It returns
// that time. Errors: those of requestTokens, the Secret name taken by an object the syncer does
// not own (resources.ErrNotOwned), or a failed super write; all are retried by the caller.
func ensureTokens(ctx context.Context, env *resources.Env, c *tenant.Cluster, full, superPod *corev1.Pod) (time.Time, error) {
	data, next, err := requestTokens(ctx, c, full)
	if err != nil {
		return time.Time{}, err
	}
	if err := writeTokenSecret(ctx, env, superPod, superPod.Annotations[AnnotationTokenSecret], data); err != nil {
		return time.Time{}, err
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{AnnotationTokenRefresh: next.UTC().Format(time.RFC3339)},
	}})
	if _, err := env.Super.CoreV1().Pods(superPod.Namespace).Patch(ctx, superPod.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: downward.FieldManager}); err != nil {
		return time.Time{}, fmt.Errorf("failed to record the token refresh time on super Pod %s/%s: %w", superPod.Namespace, superPod.Name, err)
	}
	return next, nil
}

// A Pending super Pod with a token Secret is checked for a lost Secret (a failed write, or a
// restart between the Pod's creation and the Secret's) while its age is within
// [tokenSecretCheckAge, tokenSecretCheckUntil]: younger, its Secret write is almost always still
// running; the upper bound keeps Pods that stay Pending for long (unschedulable ones) from
// costing a live GET every refresh scan forever.
const (
	tokenSecretCheckAge   = 30 * time.Second
	tokenSecretCheckUntil = 10 * time.Minute
)

// awaitsTokenSecret reports whether super Pod s has a token Secret, has not started (phase
// Pending) and is in the age window above at now.
func awaitsTokenSecret(s *corev1.Pod, now time.Time) bool {
	age := now.Sub(s.CreationTimestamp.Time)
	return s.Annotations[AnnotationTokenSecret] != "" && (s.Status.Phase == corev1.PodPending || s.Status.Phase == "") &&
		age > tokenSecretCheckAge && age < tokenSecretCheckUntil
}

// tokenSecretMissing reports, for a super Pod that awaitsTokenSecret, whether its token Secret
// is absent from the super cluster (a live GET: token Secrets are not cached).
func tokenSecretMissing(ctx context.Context, env *resources.Env, s *corev1.Pod) (bool, error) {
	name := s.Annotations[AnnotationTokenSecret]
	if !awaitsTokenSecret(s, time.Now()) {
		return false, nil
	}
	_, err := env.Super.CoreV1().Secrets(s.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// writeTokenSecret creates or replaces the token Secret name in the super Pod's namespace. The
// Secret is labelled LabelTokenSecret and owned by the super Pod; an existing Secret without
// that owner is never touched (resources.ErrNotOwned).
func writeTokenSecret(ctx context.Context, env *resources.Env, superPod *corev1.Pod, name string, data map[string][]byte) error {
	secrets := env.Super.CoreV1().Secrets(superPod.Namespace)
	ctrl := true
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: superPod.Namespace,
			Labels: map[string]string{
				LabelTokenSecret: name,
				// Not conversion.LabelManagedBy: the Secret maps to no tenant Secret, and the
				// Secret kind's reconciler must not treat it as an orphaned copy.
				conversion.LabelTenantUID: superPod.Labels[conversion.LabelTenantUID],
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: superPod.Name, UID: superPod.UID, Controller: &ctrl,
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	_, err := secrets.Create(ctx, want, metav1.CreateOptions{FieldManager: downward.FieldManager})
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create token Secret %s/%s: %w", superPod.Namespace, name, err)
	}
	existing, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if !ownedBy(existing, superPod.UID) {
		return fmt.Errorf("token Secret %s/%s: %w", superPod.Namespace, name, resources.ErrNotOwned)
	}
	want.ResourceVersion = existing.ResourceVersion
	if _, err := secrets.Update(ctx, want, metav1.UpdateOptions{FieldManager: downward.FieldManager}); err != nil {
		return fmt.Errorf("failed to update token Secret %s/%s: %w", superPod.Namespace, name, err)
	}
	return nil
}

func ownedBy(o metav1.Object, uid types.UID) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == uid && ref.Kind == "Pod" {
			return true
		}
	}
	return false
}

// TokenRefreshesDue returns the tenant Pods whose super copies' tokens must be refreshed by
// now (AnnotationTokenRefresh not after now, or never written), or whose super copies still
// wait for their token Secret (awaitsTokenSecret), read from the super Pod cache.
// The syncer calls it periodically and enqueues the result downward, so no per-Pod timer is
// held in memory.
func TokenRefreshesDue(env *resources.Env, now time.Time) []resources.Request {
	var out []resources.Request
	for _, obj := range env.SuperInformers.Core().V1().Pods().Informer().GetStore().List() {
		p, ok := obj.(*corev1.Pod)
		if !ok || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if due, _ := tokenRefreshDue(p, now); !due && !awaitsTokenSecret(p, now) {
			continue
		}
		if o, owned := conversion.OwnerOf(p); owned {
			out = append(out, resources.Request{Tenant: o.Tenant, Kind: resources.KindPod, Namespace: o.Namespace, Name: o.Name})
		}
	}
	return out
}
