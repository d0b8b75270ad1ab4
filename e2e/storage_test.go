package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const annotationSuperName = "tenancy.vcsyncer.io/super-name"

// superVolumeName is the documented mapping of a tenant claim's preset volumeName to a super
// PV: "<tenant>-<6 hex of sha256(tenant UID)>-<volumeName>".
func superVolumeName(tenant, tenantUID, volume string) string {
	sum := sha256.Sum256([]byte(tenantUID))
	return tenant + "-" + hex.EncodeToString(sum[:])[:6] + "-" + volume
}

// createStaticVolumes plays the super-cluster admin: for every tenant it creates the super PVs
// of staticVolumes (NFS, ReadWriteMany, no class) under the tenant's mapped names.
func (rw *realWorld) createStaticVolumes(t *testing.T) {
	for _, tu := range rw.tenants {
		for name, size := range staticVolumes {
			pv := &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: superVolumeName(tu.name, tu.uid, name)},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
					PersistentVolumeSource: corev1.PersistentVolumeSource{
						NFS: &corev1.NFSVolumeSource{Server: "10.200.0.250", Path: "/" + tu.name + "/" + name},
					},
				},
			}
			if _, err := rw.super.Client.CoreV1().PersistentVolumes().Create(t.Context(), pv, metav1.CreateOptions{}); err != nil {
				t.Fatalf("failed to create static super PV %s: %v", pv.Name, err)
			}
		}
	}
}

// loadClaims reads the tenant's claims in the test namespaces, its PVs and the super claims.
func (rw *realWorld) loadClaims(ctx context.Context, v *tenantView) error {
	tcs, err := v.tu.cp.Client.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, o := range tcs.Items {
		if rw.namespaces[o.Namespace] {
			v.claims = append(v.claims, o)
		}
	}
	pvs, err := v.tu.cp.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	v.pvs = map[string]*corev1.PersistentVolume{}
	for i := range pvs.Items {
		v.pvs[pvs.Items[i].Name] = &pvs.Items[i]
	}
	scs, err := rw.super.Client.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, v.tu.selector())
	if err != nil {
		return err
	}
	v.superClaim = map[string]*corev1.PersistentVolumeClaim{}
	for i := range scs.Items {
		o := &scs.Items[i]
		v.superClaim[o.Annotations[annotationNamespace]+"/"+o.Annotations[annotationName]] = o
		v.superIn["PersistentVolumeClaim "+o.Namespace+"/"+o.Name] = o.Annotations[annotationNamespace]
	}
	// A generic ephemeral volume's claim (controller owner: a Pod) is not copied: the super
	// cluster's ephemeral-volume controller makes its own claim of the same name for the super Pod.
	for _, tc := range v.claims {
		if ref := metav1.GetControllerOf(&tc); ref == nil || ref.Kind != "Pod" || v.superNS[tc.Namespace] == "" {
			continue
		}
		sc, err := rw.super.Client.CoreV1().PersistentVolumeClaims(v.superNS[tc.Namespace]).Get(ctx, tc.Name, metav1.GetOptions{})
		if err == nil {
			v.superClaim[tc.Namespace+"/"+tc.Name] = sc
		}
	}
	return nil
}

// checkClaims checks every tenant claim: Bound, as its super copy, to a tenant PV whose
// claimRef names it (namespace, name, UID) and which mirrors the super claim's PV; claims of
// unservedClaims stay Pending without a super copy.
func (rw *realWorld) checkClaims(r *report, v *tenantView) {
	for i := range v.claims {
		tc := &v.claims[i]
		if tc.DeletionTimestamp != nil {
			continue
		}
		r.counts["PersistentVolumeClaims"]++
		path := "(made by a controller)"
		rw.mu.Lock()
		if m := rw.accepted[objKey{Kind: "PersistentVolumeClaim", Namespace: tc.Namespace, Name: tc.Name}]; m != nil {
			path = m.Path
		}
		rw.mu.Unlock()
		id := v.tu.name + ": PersistentVolumeClaim " + tc.Namespace + "/" + tc.Name + " (" + path + ")"
		sc := v.superClaim[tc.Namespace+"/"+tc.Name]
		if ref := metav1.GetControllerOf(tc); ref != nil && ref.Kind == "Pod" && v.refusedPods[tc.Namespace+"/"+ref.Name] {
			if sc != nil || tc.Status.Phase != corev1.ClaimPending {
				r.add(reqClaims, "%s belongs to Pod %s, which the tenant policy refuses, but it has a super copy (%v) and phase %s",
					id, ref.Name, sc != nil, tc.Status.Phase)
				continue
			}
			rw.observe(path, "ephemeral claim %s/%s of the refused Pod %s stays Pending without a super claim", tc.Namespace, tc.Name, ref.Name)
			continue
		}
		if rule, ok := refusedClaim(tc.Namespace, tc.Name); ok {
			if sc != nil || tc.Status.Phase != corev1.ClaimPending {
				r.add(reqClaims, "%s must be refused by the tenant policy (%s: %s), but it has a super copy (%v) and phase %s",
					id, rule.Rule, rule.Why, sc != nil, tc.Status.Phase)
				continue
			}
			rw.observe(path, "claim %s/%s refused by the tenant policy (%s); Pending without a super copy", tc.Namespace, tc.Name, rule.Rule)
			continue
		}
		if why, ok := unservedClaims[path]; ok {
			if sc != nil || tc.Status.Phase != corev1.ClaimPending {
				r.add(reqClaims, "%s must not be served (%s), but it has a super copy (%v) and phase %s", id, why, sc != nil, tc.Status.Phase)
				continue
			}
			rw.observe(path, "claim %s/%s not served as designed; Pending without a super copy", tc.Namespace, tc.Name)
			continue
		}
		switch {
		case sc == nil:
			r.add(reqClaims, "%s has no super copy", id)
			r.suspect(v.tu, "PersistentVolumeClaim", tc.Namespace, tc.Name)
		case sc.Status.Phase != corev1.ClaimBound || tc.Status.Phase != corev1.ClaimBound:
			r.add(reqClaims, "%s is %s in the tenant, its super copy %s", id, tc.Status.Phase, sc.Status.Phase)
			r.suspect(v.tu, "PersistentVolumeClaim", tc.Namespace, tc.Name)
		default:
			pv := v.pvs[tc.Spec.VolumeName]
			if pv == nil {
				r.add(reqClaims, "%s names tenant PV %q, which does not exist", id, tc.Spec.VolumeName)
				continue
			}
			if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != tc.Namespace || ref.Name != tc.Name || ref.UID != tc.UID {
				r.add(reqClaims, "%s: tenant PV %s has claimRef %+v", id, pv.Name, ref)
			}
			if pv.Annotations[annotationSuperName] != sc.Spec.VolumeName || pv.Status.Phase != corev1.VolumeBound {
				r.add(reqClaims, "%s: tenant PV %s mirrors %q (super claim's PV %s), phase %s", id, pv.Name,
					pv.Annotations[annotationSuperName], sc.Spec.VolumeName, pv.Status.Phase)
			}
			rw.observe(path, "claim %s/%s Bound to tenant PV %s (super PV %s)", tc.Namespace, tc.Name, pv.Name, sc.Spec.VolumeName)
		}
	}
}

// refusedClaim returns the refusedClaims entry that tenant claim ns/name falls under.
func refusedClaim(ns, name string) (policyRule, bool) {
	for prefix, rule := range refusedClaims {
		if strings.HasPrefix(ns+"/"+name, prefix) {
			return rule, true
		}
	}
	return policyRule{}, false
}
