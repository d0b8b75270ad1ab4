package pod

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// kubeletValue resolves a downward-API field path against p as a kubelet does
// (k8s.io/kubernetes pkg/fieldpath.ExtractFieldPathAsString) for the metadata paths.
func kubeletValue(t *testing.T, p *corev1.Pod, path string) string {
	t.Helper()
	if k, ok := subscript(path, "metadata.labels['"); ok {
		return p.Labels[k]
	}
	if k, ok := subscript(path, "metadata.annotations['"); ok {
		return p.Annotations[k]
	}
	switch path {
	case "metadata.labels":
		return formatMap(p.Labels)
	case "metadata.annotations":
		// The one documented difference: kubectl's last-applied-configuration is left out
		// (the tenant caches drop it).
		return formatMap(withoutLastApplied(p.Annotations))
	case "metadata.name":
		return p.Name
	case "metadata.namespace":
		return p.Namespace
	case "metadata.uid":
		return string(p.UID)
	}
	t.Fatalf("path %q not handled", path)
	return ""
}

// fieldRefs lists the downward-API field paths of spec; of a super Pod's spec (super), without
// the references to its token and CA annotations that replace serviceAccountToken sources.
func fieldRefs(spec *corev1.PodSpec, super bool) []string {
	var out []string
	eachFieldRef(spec, func(f *corev1.ObjectFieldSelector) {
		if k, ok := subscript(f.FieldPath, "metadata.annotations['"); ok && super && IsCredentialAnnotation(k) {
			return // a token or CA source of the syncer's, in place of a serviceAccountToken source
		}
		out = append(out, f.FieldPath)
	})
	return out
}

// A container of the super Pod reads, through every downward-API metadata reference, what the
// same container would read in the tenant: the tenant's labels and annotations only.
func TestDownwardAPIMetadataHoldsTenantValues(t *testing.T) {
	p := tenantPod()
	p.Labels["tenancy.vcsyncer.io/mine"] = "tenant-set" // silent key: never copied as a label
	p.Annotations["team"] = "a \"quoted\"\nvalue"
	ref := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	p.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "APP", ValueFrom: ref("metadata.labels['app']")},
		{Name: "MINE", ValueFrom: ref("metadata.labels['tenancy.vcsyncer.io/mine']")},
		{Name: "MANAGED", ValueFrom: ref("metadata.labels['tenancy.vcsyncer.io/managed-by']")},
		{Name: "TEAM", ValueFrom: ref("metadata.annotations['team']")},
		{Name: "MISSING", ValueFrom: ref("metadata.annotations['missing']")},
		{Name: "OWNNS", ValueFrom: ref("metadata.annotations['tenancy.vcsyncer.io/namespace']")},
		{Name: "TOKEN", ValueFrom: ref("metadata.annotations['" + tokenAnnotation(0) + "']")},
		{Name: "CA", ValueFrom: ref("metadata.annotations['" + AnnotationTenantCA + "']")},
		{Name: "NS", ValueFrom: ref("metadata.namespace")},
		{Name: "UID", ValueFrom: ref("metadata.uid")},
		{Name: "NAME", ValueFrom: ref("metadata.name")},
	}
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{
		DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: ref("metadata.labels").FieldRef},
			{Path: "annotations", FieldRef: ref("metadata.annotations").FieldRef},
		}}}})
	c := &tenant.Cluster{Name: "t", UID: "u"}
	sp := Desired(c, p, "t-abc-shop", nil)
	sp.UID = "super-uid"
	// The create path adds the tenant credentials; the tenant's own references to those keys
	// must not read them.
	sp.Annotations[tokenAnnotation(0)], sp.Annotations[AnnotationTenantCA] = "the-token", "the-ca"
	if !strings.Contains(kubeletValue(t, sp, "metadata.labels"), "managed-by") {
		t.Fatalf("test premise: the super Pod's own labels carry the syncer's bookkeeping")
	}
	tenantRefs, superRefs := fieldRefs(&p.Spec, false), fieldRefs(&sp.Spec, true)
	if len(tenantRefs) != len(superRefs) {
		t.Fatalf("field references: tenant %d, super %d", len(tenantRefs), len(superRefs))
	}
	for i := range tenantRefs {
		want, got := kubeletValue(t, p, tenantRefs[i]), kubeletValue(t, sp, superRefs[i])
		if got != want {
			t.Errorf("%s: a super container reads %q (via %s), the tenant's reads %q", tenantRefs[i], got, superRefs[i], want)
		}
	}

	// A later tenant change reaches the annotations the files are read from. Updates start
	// from the caches, whose Pods have no env or volumes (conversion.TrimPodSpec).
	trimmed := func(p *corev1.Pod) *corev1.Pod {
		p = p.DeepCopy()
		conversion.TrimPodSpec(p)
		return p
	}
	changed := p.DeepCopy()
	changed.Labels["app"] = "web-v2"
	again := Desired(c, trimmed(changed), "t-abc-shop", trimmed(sp))
	if !NeedsUpdate(again, sp) {
		t.Errorf("a tenant label change does not update the super Pod's downward-API annotations")
	}
	sp.Annotations = again.Annotations // the update's patch, applied
	for i, ref := range superRefs {
		tenantPath := tenantRefs[i]
		if got, want := kubeletValue(t, sp, ref), kubeletValue(t, changed, tenantPath); got != want {
			t.Errorf("after the change %s reads %q, the tenant's %q", tenantPath, got, want)
		}
	}
	delete(changed.Annotations, "team")
	again = Desired(c, trimmed(changed), "t-abc-shop", trimmed(sp))
	if got := kubeletValue(t, again, superRefs[3]); got != "" {
		t.Errorf("TEAM reads %q after the tenant removed the annotation", got)
	}
}

// A Pod that reads no labels or annotations through the downward API gets no annotations for
// it (no extra bytes or writes per Pod).
func TestDownwardAPIMetadataOnlyWhenRead(t *testing.T) {
	sp := Desired(&tenant.Cluster{Name: "t", UID: "u"}, tenantPod(), "t-abc-shop", nil)
	for k := range sp.Annotations {
		if strings.HasPrefix(k, downwardAnnotationPrefix) {
			t.Errorf("super Pod has %s although no container reads labels or annotations", k)
		}
	}
}
