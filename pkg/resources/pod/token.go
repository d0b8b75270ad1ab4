package pod

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Service-account tokens of tenant Pods.
//
// A tenant Pod's projected serviceAccountToken sources (the kube-api-access-* volume that the
// tenant's ServiceAccount admission adds, and any the user wrote) must carry a token issued by
// the TENANT apiserver: the Pod talks to its tenant, and a super-cluster token must never reach
// a tenant Pod. So the syncer, like a kubelet (pkg/kubelet/token in Kubernetes), requests each
// token with the TokenRequest API (KEP-1205, bound service-account tokens) from the tenant
// apiserver, bound to the tenant Pod (so it dies with the Pod), and carries the tokens in the
// super Pod itself: annotation AnnotationTokenPrefix+n holds the token of the Pod's n-th
// serviceAccountToken source, AnnotationTenantCA the tenant's root CA (kube-root-ca.crt, which
// would otherwise be the super cluster's). In the super Pod each serviceAccountToken source is
// replaced by a downwardAPI source projecting that annotation at the same path, and references
// to kube-root-ca.crt read AnnotationTenantCA. Creating the super Pod is therefore the only
// super write a Pod's tokens cost, and a refresh is one patch of its annotations (vcluster
// carries tokens the same way). A new Pod's TokenRequests are made when the syncer sees it,
// while it waits for a worker (TokenPrefetcher), so its worker does not wait for them; for a
// Pod cached trimmed they start from the cached Pod while its full spec is read
// (prefetchTokens), so they add no round trip of their own to the Pod's creation. Tokens are
// refreshed when 80% of their lifetime has passed, the kubelet's rule; the kubelet rewrites
// downwardAPI files when the annotations change (within its sync period, about a minute, far
// inside the remaining 20%).
//
// The super Pod cache drops these annotations (TrimSuperPod): they would cost about 1.5 KB per
// token per cached Pod, and checkpoints of the cache must never hold tenant credentials.
//
// Super Pods created by earlier versions of the syncer project their tokens from a Secret
// named by AnnotationTokenSecret; those keep being refreshed through that Secret
// (ensureSecretTokens) until they are gone.

const (
	// AnnotationTokenPrefix followed by n (0, 1, ...) is the super Pod annotation holding the
	// tenant token of the tenant Pod's n-th projected serviceAccountToken source, counted over
	// all its projected volumes in order.
	AnnotationTokenPrefix = conversion.Domain + "/sa-token."
	// AnnotationTenantCA on a super Pod holds the tenant's root CA bundle (the tenant's
	// kube-root-ca.crt ca.crt) for Pods that read kube-root-ca.crt.
	AnnotationTenantCA = conversion.Domain + "/tenant-ca.crt"
	// AnnotationTokenSecret on a super Pod created by an earlier version names the super
	// Secret that holds its tenant tokens.
	AnnotationTokenSecret = "tenancy.vcsyncer.io/sa-token-secret"
	// AnnotationTokenRefresh on a super Pod is when (RFC 3339) its tenant tokens are refreshed
	// next. Set when the super Pod is created (with its tokens) and by each refresh; a super
	// Pod without it carries no tenant tokens.
	AnnotationTokenRefresh = "tenancy.vcsyncer.io/sa-token-refresh"
	// LabelTokenSecret marks the token Secrets earlier versions wrote (AnnotationTokenSecret);
	// its value is the Secret's own name (TokenSecretName, 34 characters).
	LabelTokenSecret = "tenancy.vcsyncer.io/sa-token"
	// tenantCAKey is the token Secret key holding the tenant's root CA bundle.
	tenantCAKey = "tenant-ca.crt"
	// rootCAConfigMap is the ConfigMap every Kubernetes namespace gets with the cluster's CA.
	rootCAConfigMap = "kube-root-ca.crt"
	// defaultTokenSeconds is the projected token lifetime when the source sets none (the API
	// default of ServiceAccountTokenProjection.expirationSeconds).
	defaultTokenSeconds = 3600
)

// tokenAnnotation returns the super Pod annotation of the n-th serviceAccountToken source.
func tokenAnnotation(n int) string { return AnnotationTokenPrefix + strconv.Itoa(n) }

// annotationRef returns the downward-API field path of super Pod annotation key.
func annotationRef(key string) string { return "metadata.annotations['" + key + "']" }

// IsCredentialAnnotation reports whether super Pod annotation key holds tenant credentials
// (a token or the tenant CA): never cached, never copied anywhere.
func IsCredentialAnnotation(key string) bool {
	return strings.HasPrefix(key, AnnotationTokenPrefix) || key == AnnotationTenantCA
}

// TokenSecretName returns the name of the super Secret holding the tenant tokens of the tenant
// Pod with UID podUID: "vcsyncer-sa-token-" and 16 hex digits of SHA-256(UID), 34 characters.
func TokenSecretName(podUID types.UID) string {
	sum := sha256.Sum256([]byte(podUID))
	return "vcsyncer-sa-token-" + hex.EncodeToString(sum[:8])
}

// tokenKey returns the key, in a token Secret of an earlier version (AnnotationTokenSecret),
// of the token of source i of projected volume vol.
func tokenKey(vol string, i int) string { return vol + "." + strconv.Itoa(i) + ".token" }

// tokenSource is one projected serviceAccountToken source of a tenant Pod: the n-th over all
// its projected volumes, source i of volume vol.
type tokenSource struct {
	n   int
	vol string
	i   int
	src corev1.ServiceAccountTokenProjection
}

// tokenSources lists the projected serviceAccountToken sources of spec in order, and whether
// the Pod reads kube-root-ca.crt anywhere (refersToRootCA), so needs the tenant CA.
func tokenSources(spec *corev1.PodSpec) (out []tokenSource, needsCA bool) {
	needsCA = refersToRootCA(spec)
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for i, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				out = append(out, tokenSource{n: len(out), vol: v.Name, i: i, src: *s.ServiceAccountToken})
			}
		}
	}
	return out, needsCA
}

// sameTokenRequests reports whether a and b ask for the same tokens: the same number of
// sources with, in order, the same audience and lifetime.
func sameTokenRequests(a, b []tokenSource) bool {
	return slices.EqualFunc(a, b, func(x, y tokenSource) bool {
		return x.src.Audience == y.src.Audience && tokenSeconds(x.src) == tokenSeconds(y.src)
	})
}

// tokenSeconds returns the lifetime a source asks for, in seconds (defaultTokenSeconds when
// it sets none).
func tokenSeconds(s corev1.ServiceAccountTokenProjection) int64 {
	if s.ExpirationSeconds != nil {
		return *s.ExpirationSeconds
	}
	return defaultTokenSeconds
}

// rewriteProjectedTokens replaces, in spec, the n-th projected serviceAccountToken source with
// a downwardAPI source projecting super Pod annotation tokenAnnotation(n) at the same path (the
// volume's mode applies, as it did to the token), and every reference to kube-root-ca.crt with
// the tenant CA in AnnotationTenantCA (rewriteRootCARefs). It turns off automounting so the super
// cluster's ServiceAccount admission never mounts a super token. It returns whether any
// source or reference was rewritten (false: the Pod needs no tenant tokens).
func rewriteProjectedTokens(spec *corev1.PodSpec) bool {
	rewrote := false
	n := 0
	caRef := func(path string, mode *int32) corev1.DownwardAPIVolumeFile {
		return corev1.DownwardAPIVolumeFile{Path: path, Mode: mode,
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: annotationRef(AnnotationTenantCA)}}
	}
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
				*s = corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
					Path:     s.ServiceAccountToken.Path,
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: annotationRef(tokenAnnotation(n))},
				}}}}
				n++
				rewrote = true
			case s.ConfigMap != nil && s.ConfigMap.Name == rootCAConfigMap:
				// kube-root-ca.crt holds one key, ca.crt.
				items := []corev1.DownwardAPIVolumeFile{caRef("ca.crt", nil)}
				if len(s.ConfigMap.Items) > 0 {
					items = nil
					for _, it := range s.ConfigMap.Items {
						if it.Key == "ca.crt" {
							items = append(items, caRef(it.Path, it.Mode))
						}
					}
				}
				if len(items) == 0 {
					// Items that name no key of kube-root-ca.crt: nothing of it would be
					// projected, so the source is dropped (below).
					*s = corev1.VolumeProjection{}
					continue
				}
				*s = corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{Items: items}}
				rewrote = true
			}
		}
	}
	if rewriteRootCARefs(spec) {
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
// volumes, env configMapKeyRef of ca.crt, envFrom) at the tenant CA in super Pod annotation
// AnnotationTenantCA: in the super namespace kube-root-ca.crt is the SUPER cluster's CA, which
// the super cluster's controller-manager publishes there. envFrom of kube-root-ca.crt is
// dropped: its only key, ca.crt, is not a valid variable name, so the kubelet sets nothing from
// it anyway. An env reference to another key of kube-root-ca.crt is left as it is: the super
// namespace's kube-root-ca.crt has no other key either, so it fails (or, optional, stays unset)
// as it would in the tenant. It returns whether anything was rewritten.
func rewriteRootCARefs(spec *corev1.PodSpec) bool {
	rewrote := false
	ref := func() *corev1.ObjectFieldSelector {
		return &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: annotationRef(AnnotationTenantCA)}
	}
	for i := range spec.Volumes {
		cm := spec.Volumes[i].ConfigMap
		if cm == nil || cm.Name != rootCAConfigMap {
			continue
		}
		items := []corev1.DownwardAPIVolumeFile{{Path: "ca.crt", FieldRef: ref()}}
		if len(cm.Items) > 0 {
			items = nil
			for _, it := range cm.Items {
				if it.Key == "ca.crt" {
					items = append(items, corev1.DownwardAPIVolumeFile{Path: it.Path, Mode: it.Mode, FieldRef: ref()})
				}
			}
		}
		if len(items) == 0 {
			// Items that name no key of kube-root-ca.crt: an empty directory, as the tenant's
			// kubelet would mount.
			spec.Volumes[i].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
			continue
		}
		spec.Volumes[i].VolumeSource = corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: items, DefaultMode: cm.DefaultMode,
		}}
		rewrote = true
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			for j := range cs[i].Env {
				vf := cs[i].Env[j].ValueFrom
				if vf == nil || vf.ConfigMapKeyRef == nil || vf.ConfigMapKeyRef.Name != rootCAConfigMap || vf.ConfigMapKeyRef.Key != "ca.crt" {
					continue
				}
				cs[i].Env[j].ValueFrom = &corev1.EnvVarSource{FieldRef: ref()}
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

// tokenRefreshDue reports whether the tenant tokens of super Pod s (its metadata: a cached Pod
// is not decoded for it) must be (re)written now, and otherwise how long until they must be. A
// Pod without tenant tokens (no AnnotationTokenRefresh and no token Secret of an earlier
// version) never needs them.
func tokenRefreshDue(s metav1.Object, now time.Time) (due bool, after time.Duration) {
	ann := s.GetAnnotations()
	v, ok := ann[AnnotationTokenRefresh]
	if !ok && ann[AnnotationTokenSecret] == "" {
		return false, 0
	}
	at, err := time.Parse(time.RFC3339, v)
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

// maxTokenBytes bounds one token a tenant apiserver issues: a bound service-account token (a
// signed JWT) is one or two KiB, and a tenant admin's apiserver may answer anything (its
// whole answer is bounded by the tenant Client, 64 KiB for a TokenRequest). A super Pod whose
// tokens and tenant CA pass the super apiserver's 256 KiB of annotations is refused by it:
// that tenant's Pod only.
const maxTokenBytes = 16 << 10

// requestTokens requests, from the tenant apiserver, a token for every source in srcs of tenant
// Pod p (its name, namespace, UID and ServiceAccount are used), bound to that Pod. The
// TokenRequests run concurrently, at most tokenRequestConcurrency at a time; the first that
// fails cancels the others. It returns the tokens in the order of srcs and when they must be
// refreshed (refreshAt of the token that expires first; at the latest in 24 hours). Errors: a
// TokenRequest refused by the tenant (e.g. the ServiceAccount is gone) or timed out, or a
// token longer than maxTokenBytes.
func requestTokens(ctx context.Context, c *tenant.Cluster, p *corev1.Pod, srcs []tokenSource) ([]string, time.Time, error) {
	now := time.Now()
	next := now.Add(24 * time.Hour)
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	issued := make([]*authenticationv1.TokenRequest, len(srcs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(tokenRequestConcurrency)
	for i, ts := range srcs {
		g.Go(func() error {
			secs := tokenSeconds(ts.src)
			var auds []string
			if ts.src.Audience != "" {
				auds = []string{ts.src.Audience}
			}
			tr, err := c.Client.CoreV1().ServiceAccounts(p.Namespace).CreateToken(gctx, sa, &authenticationv1.TokenRequest{
				Spec: authenticationv1.TokenRequestSpec{
					Audiences: auds, ExpirationSeconds: &secs,
					BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID},
				},
			}, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("TokenRequest for ServiceAccount %s/%s in the tenant: %w", p.Namespace, sa, err)
			}
			if n := len(tr.Status.Token); n > maxTokenBytes {
				return fmt.Errorf("TokenRequest for ServiceAccount %s/%s in the tenant: the token is %d bytes, more than the %d a super Pod carries", p.Namespace, sa, n, maxTokenBytes)
			}
			issued[i] = tr
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, time.Time{}, err
	}
	out := make([]string, len(srcs))
	for i := range srcs {
		out[i] = issued[i].Status.Token
		if at := refreshAt(now, issued[i].Status.ExpirationTimestamp.Time); at.Before(next) {
			next = at
		}
	}
	return out, next, nil
}

// maxTenantCABytes bounds the tenant CA bundle carried in a super Pod's annotations: the
// super apiserver refuses more than 256 KiB of annotations in all, and a tenant admin can write
// anything into its own kube-root-ca.crt (a real CA bundle is a few KiB; Mozilla's whole root
// store is about 220 KiB).
const maxTenantCABytes = 128 << 10

// tenantCA returns the tenant's root CA bundle (ca.crt of kube-root-ca.crt in tenant namespace
// ns, from the tenant cache). Errors: the ConfigMap not cached (yet), or its ca.crt larger than
// maxTenantCABytes (the caller reports TokenSyncFailed; nothing is requested or written).
func tenantCA(c *tenant.Cluster, ns string) (string, error) {
	cm, err := c.Informers.Core().V1().ConfigMaps().Lister().ConfigMaps(ns).Get(rootCAConfigMap)
	if err != nil {
		return "", fmt.Errorf("tenant root CA ConfigMap %s/%s: %w", ns, rootCAConfigMap, err)
	}
	if n := len(cm.Data["ca.crt"]); n > maxTenantCABytes {
		return "", fmt.Errorf("tenant root CA ConfigMap %s/%s: ca.crt is %d bytes, more than the %d a super Pod can carry", ns, rootCAConfigMap, n, maxTenantCABytes)
	}
	return cm.Data["ca.crt"], nil
}

// tokenAnnotations returns the super Pod annotations that carry the tokens of tenant Pod full
// (its full spec): tokenAnnotation(n) for each source, AnnotationTenantCA when the Pod reads
// kube-root-ca.crt, and AnnotationTokenRefresh. tokens are the tokens of the Pod's sources in
// order (requestTokens), next their refresh time.
func tokenAnnotations(c *tenant.Cluster, full *corev1.Pod, tokens []string, next time.Time) (map[string]string, error) {
	out := make(map[string]string, len(tokens)+2)
	for n, tok := range tokens {
		out[tokenAnnotation(n)] = tok
	}
	if _, needsCA := tokenSources(&full.Spec); needsCA {
		ca, err := tenantCA(c, full.Namespace)
		if err != nil {
			return nil, err
		}
		out[AnnotationTenantCA] = ca
	}
	out[AnnotationTokenRefresh] = next.UTC().Format(time.RFC3339)
	return out, nil
}

// tokenPrefetch is a round of TokenRequests started from the cached tenant Pod (whose trimmed
// spec keeps its serviceAccountToken sources, conversion.TrimPodSpec) while the rest of the
// super Pod is prepared, so the tokens cost no round trip of their own on the way to the super
// Pod's creation.
type tokenPrefetch struct {
	srcs   []tokenSource
	done   chan struct{}
	tokens []string
	next   time.Time
	err    error
	// at is when the round was made, key the namespace/name of its Pod, timer its expiry once
	// issued (TokenPrefetcher's rounds; timer guarded by its mutex).
	at    time.Time
	key   string
	timer *time.Timer
}

// prefetchTokens starts requestTokens for cached tenant Pod t's token sources, at most limit of
// them (the tenant policy's pods.maxServiceAccountTokens; a Pod over it is refused anyway, so
// nothing is asked for it), and returns at once; nil when the cached Pod has no sources or more
// than limit (limit < 0: no limit). The requests end with ctx.
func prefetchTokens(ctx context.Context, c *tenant.Cluster, t *corev1.Pod, limit int) *tokenPrefetch {
	srcs, _ := tokenSources(&t.Spec)
	if len(srcs) == 0 || limit >= 0 && len(srcs) > limit {
		return nil
	}
	p := &tokenPrefetch{srcs: srcs, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.tokens, p.next, p.err = requestTokens(ctx, c, t, srcs)
	}()
	return p
}

// podTokens returns the tokens of tenant Pod full (its full spec) and their refresh time:
// those requested for it before a worker took it (env.PodTokens, TokenPrefetcher: a Pod's
// UID names one spec, whose volumes and ServiceAccount cannot change; as many as the spec
// has sources), else those of prefetch when it asked for the same tokens (sameTokenRequests;
// the Pod's UID is checked by the caller), else requested now. Errors: those of
// requestTokens, or ctx ending first.
func podTokens(ctx context.Context, env *resources.Env, c *tenant.Cluster, full *corev1.Pod, prefetch *tokenPrefetch) ([]string, time.Time, error) {
	srcs, _ := tokenSources(&full.Spec)
	if env.PodTokens != nil {
		tokens, next, ok, err := env.PodTokens.Take(ctx, c.Name, full.Namespace, full.Name, full.UID)
		if ok && err != nil {
			return nil, time.Time{}, err
		}
		if ok && len(tokens) == len(srcs) {
			return tokens, next, nil
		}
	}
	if prefetch == nil || !sameTokenRequests(prefetch.srcs, srcs) {
		return requestTokens(ctx, c, full, srcs)
	}
	select {
	case <-prefetch.done:
		return prefetch.tokens, prefetch.next, prefetch.err
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
}

// refreshTokens writes fresh tenant tokens for super Pod superPod (the cached super Pod) of
// tenant Pod full (its full spec) with one merge patch of the super Pod's token annotations
// (tokenAnnotations), or, for a super Pod of an earlier version, through its token Secret
// (ensureSecretTokens). Errors: those of requestTokens and tenantCA, or a failed super write;
// all are retried by the caller.
func refreshTokens(ctx context.Context, env *resources.Env, c *tenant.Cluster, full, superPod *corev1.Pod) error {
	if superPod.Annotations[AnnotationTokenSecret] != "" {
		_, err := ensureSecretTokens(ctx, env, c, full, superPod)
		return err
	}
	if _, err := tokenAnnotations(c, full, nil, time.Time{}); err != nil {
		return err // the tenant CA is unusable: no TokenRequest is spent on the refresh
	}
	srcs, _ := tokenSources(&full.Spec)
	tokens, next, err := requestTokens(ctx, c, full, srcs)
	if err != nil {
		return err
	}
	ann, err := tokenAnnotations(c, full, tokens, next)
	if err != nil {
		return err
	}
	// The UID makes the patch fail (409) if the super Pod was replaced since it was cached.
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"uid": superPod.UID, "annotations": ann}})
	if _, err := env.Super.CoreV1().Pods(superPod.Namespace).Patch(ctx, superPod.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return fmt.Errorf("failed to write the refreshed tokens to super Pod %s/%s: %w", superPod.Namespace, superPod.Name, err)
	}
	return nil
}

// ensureSecretTokens refreshes the tenant tokens of a super Pod of an earlier version, which
// projects them from its token Secret (AnnotationTokenSecret): requestTokens for tenant Pod
// full, writeTokenSecret, then it records the next refresh time on the super Pod
// (AnnotationTokenRefresh). It returns that time. Errors: those of requestTokens and
// tenantCA, the Secret name taken by an object the syncer does not own
// (resources.ErrNotOwned), or a failed super write; all are retried by the caller.
func ensureSecretTokens(ctx context.Context, env *resources.Env, c *tenant.Cluster, full, superPod *corev1.Pod) (time.Time, error) {
	srcs, needsCA := tokenSources(&full.Spec)
	tokens, next, err := requestTokens(ctx, c, full, srcs)
	if err != nil {
		return time.Time{}, err
	}
	data := map[string][]byte{}
	for i, ts := range srcs {
		data[tokenKey(ts.vol, ts.i)] = []byte(tokens[i])
	}
	if needsCA {
		ca, err := tenantCA(c, full.Namespace)
		if err != nil {
			return time.Time{}, err
		}
		data[tenantCAKey] = []byte(ca)
	}
	if err := writeTokenSecret(ctx, env, superPod, superPod.Annotations[AnnotationTokenSecret], data); err != nil {
		return time.Time{}, err
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{AnnotationTokenRefresh: next.UTC().Format(time.RFC3339)},
	}})
	if _, err := env.Super.CoreV1().Pods(superPod.Namespace).Patch(ctx, superPod.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: reconcile.FieldManager}); err != nil {
		return time.Time{}, fmt.Errorf("failed to record the token refresh time on super Pod %s/%s: %w", superPod.Namespace, superPod.Name, err)
	}
	return next, nil
}

// writeTokenSecret creates or replaces the token Secret name of a super Pod of an earlier
// version in the super Pod's namespace. The Secret is labelled LabelTokenSecret and owned by
// the super Pod; an existing Secret without that owner is never touched (resources.ErrNotOwned).
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
	_, err := secrets.Create(ctx, want, metav1.CreateOptions{FieldManager: reconcile.FieldManager})
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
	if _, err := secrets.Update(ctx, want, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil {
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
// now (AnnotationTokenRefresh not after now, or unreadable), read from the super Pod cache.
// The syncer calls it periodically and enqueues the result downward, so no per-Pod timer is
// held in memory.
func TokenRefreshesDue(env *resources.Env, now time.Time) []resources.Request {
	var out []resources.Request
	for _, obj := range env.SuperInformers.Core().V1().Pods().Informer().GetStore().List() {
		p, ok := obj.(metav1.Object) // the metadata is all it reads
		if !ok || !podcache.Is(obj) || !p.GetDeletionTimestamp().IsZero() {
			continue
		}
		if due, _ := tokenRefreshDue(p, now); !due {
			continue
		}
		if o, owned := conversion.OwnerOf(p); owned {
			out = append(out, resources.Request{Tenant: o.Tenant, Kind: resources.KindPod, Namespace: o.Namespace, Name: o.Name})
		}
	}
	return out
}

// tokensNeeded reports whether a super Pod of tenant Pod spec (its full spec) carries tenant
// tokens or the tenant CA: it has a projected serviceAccountToken source or reads
// kube-root-ca.crt.
func tokensNeeded(spec *corev1.PodSpec) bool {
	srcs, needsCA := tokenSources(spec)
	return len(srcs) > 0 || needsCA
}
