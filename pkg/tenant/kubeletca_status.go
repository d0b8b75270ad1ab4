package tenant

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// Reasons of the KubeletClientCAValid condition (and of its Warning Events).
const (
	// ReasonKubeletClientCANotSet: the Tenant has no spec.kubeletClientCA (the kubelet API
	// serves none of its requests).
	ReasonKubeletClientCANotSet = "NotSet"
	// ReasonInvalidKubeletClientCA: spec.kubeletClientCA is not a PEM bundle of CA
	// certificates.
	ReasonInvalidKubeletClientCA = "InvalidKubeletClientCA"
	// ReasonSharedKubeletClientCA: a CA of spec.kubeletClientCA (by public key) is in
	// another Tenant's too.
	ReasonSharedKubeletClientCA = "SharedKubeletClientCA"
)

// caKeys caches the public-key digests of the CAs of each spec.kubeletClientCA seen, by the
// digest of the bundle: every reconcile compares the Tenant's CAs with every other Tenant's,
// and parses each bundle once. Entries are never removed; a bundle is a few KB at most and
// the set only grows with distinct bundles registered.
var caKeys sync.Map // [32]byte (bundle digest) -> []string (CA key digests) of valid bundles

// kubeletCAKeys returns the digests of the public keys of bundle's CA certificates, or an
// error when it is not a valid bundle (ParseCABundle).
func kubeletCAKeys(bundle string) ([]string, error) {
	sum := sha256.Sum256([]byte(bundle))
	if v, ok := caKeys.Load(sum); ok {
		return v.([]string), nil
	}
	if _, err := ParseCABundle([]byte(bundle)); err != nil {
		return nil, err
	}
	var keys []string
	for rest := []byte(bundle); ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		k := sha256.Sum256(c.RawSubjectPublicKeyInfo)
		keys = append(keys, string(k[:]))
	}
	caKeys.Store(sum, keys)
	return keys, nil
}

// kubeletCAStatus sets the KubeletClientCAValid condition of t: False when
// spec.kubeletClientCA is invalid or shares a CA (same public key: the same certificate, or
// one re-issued for the same key, verifies the same client certificates) with another
// Tenant's, which makes the kubelet API refuse both tenants' requests (401). A change of the
// condition writes a Warning Event when it becomes False, and asks the Tenants sharing the CA
// now or before to be reconciled, so that theirs follows (each notifies only on a change of
// its own condition: no loop).
func (r *Reconciler) kubeletCAStatus(ctx context.Context, t *tenancyv1alpha1.Tenant) {
	prev := meta.FindStatusCondition(t.Status.Conditions, tenancyv1alpha1.ConditionKubeletClientCAValid)
	status, reason, msg, shared := r.kubeletCAState(ctx, t)
	if prev != nil && prev.Status == status && prev.Reason == reason && prev.Message == msg {
		return
	}
	setCondition(t, tenancyv1alpha1.ConditionKubeletClientCAValid, status, reason, msg)
	if status == metav1.ConditionFalse {
		r.Recorder.Event(t, corev1.EventTypeWarning, reason, msg)
	}
	notify := shared
	if prev != nil && prev.Reason == ReasonSharedKubeletClientCA {
		notify = append(notify, sharedNames(prev.Message)...)
	}
	for _, n := range notify {
		r.Notify(n)
	}
}

// kubeletCAState computes the KubeletClientCAValid condition of t and the names of the
// Tenants that share a CA with it.
func (r *Reconciler) kubeletCAState(ctx context.Context, t *tenancyv1alpha1.Tenant) (metav1.ConditionStatus, string, string, []string) {
	if t.Spec.KubeletClientCA == "" {
		return metav1.ConditionTrue, ReasonKubeletClientCANotSet,
			"no spec.kubeletClientCA: the kubelet API (kubectl logs, exec, attach, port-forward) serves no request for this tenant", nil
	}
	mine, err := kubeletCAKeys(t.Spec.KubeletClientCA)
	if err != nil {
		return metav1.ConditionFalse, ReasonInvalidKubeletClientCA,
			fmt.Sprintf("spec.kubeletClientCA: %v; the kubelet API refuses this tenant's requests (401)", err), nil
	}
	var list tenancyv1alpha1.TenantList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Tenants to compare kubelet client CAs failed")
		return metav1.ConditionUnknown, ReasonWaiting, "failed to list Tenants to compare kubelet client CAs", nil
	}
	var shared []string
	for i := range list.Items {
		o := &list.Items[i]
		if o.UID == t.UID || o.Name == t.Name || o.Spec.KubeletClientCA == "" {
			continue
		}
		theirs, err := kubeletCAKeys(o.Spec.KubeletClientCA)
		if err != nil {
			continue
		}
		for _, k := range mine {
			if containsString(theirs, k) {
				shared = append(shared, o.Name)
				break
			}
		}
	}
	if len(shared) > 0 {
		sort.Strings(shared)
		return metav1.ConditionFalse, ReasonSharedKubeletClientCA,
			fmt.Sprintf("a CA of spec.kubeletClientCA is also in the spec.kubeletClientCA of %s: the kubelet API attributes a certificate it signs to no tenant, so it refuses both tenants' requests (401); give each Tenant a CA of its own", quoteTenants(shared)), shared
	}
	return metav1.ConditionTrue, ReasonValid, "spec.kubeletClientCA holds CA certificates no other Tenant's holds", nil
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// quoteTenants writes names as `Tenant "a", Tenant "b"`; sharedNames reads them back.
func quoteTenants(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("Tenant %q", n)
	}
	return strings.Join(parts, ", ")
}

// sharedNames returns the Tenant names a SharedKubeletClientCA message names.
func sharedNames(msg string) []string {
	var out []string
	for _, f := range strings.Split(msg, "Tenant \"")[1:] {
		if i := strings.IndexByte(f, '"'); i > 0 {
			out = append(out, f[:i])
		}
	}
	return out
}
