package pod

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

// The downward API resolves metadata.labels and metadata.annotations against the super Pod,
// which carries the syncer's ownership labels and annotations and only the tenant keys its
// policy lets through (resources.AllowedMeta). A super Pod whose containers read them gets the
// tenant's values in annotations of its own, and its field references read those instead:
//
//   - the whole maps (downwardAPI volume items "metadata.labels" / "metadata.annotations") from
//     AnnotationDownwardLabels / AnnotationDownwardAnnotations, which hold the tenant Pod's map
//     formatted as a kubelet writes it (formatMap);
//   - one key ("metadata.labels['k']", "metadata.annotations['k']", in env and volumes) from
//     an annotation named after the key (downwardKeyAnnotation), absent when the tenant Pod has
//     no such key, so the container sees "" as a kubelet gives for a missing key.
//
// A Pod that reads neither gets none of these annotations. Annotations are mutable, so a
// label the tenant changes later reaches the super Pod's files with the next metadata update,
// as a kubelet refreshes downwardAPI volumes of a Pod whose labels changed. The syncer's caches
// hold Pods without env and volumes (conversion.TrimPodSpec), so the references found when the
// super Pod is created are recorded in AnnotationDownwardRefs, from which later updates
// recompute the values.
const (
	// AnnotationDownwardLabels holds the tenant Pod's labels as the downward API formats them.
	AnnotationDownwardLabels = conversion.Domain + "/downward-labels"
	// AnnotationDownwardAnnotations holds the tenant Pod's annotations as the downward API
	// formats them.
	AnnotationDownwardAnnotations = conversion.Domain + "/downward-annotations"
	// AnnotationDownwardRefs lists, one per line, the tenant metadata the super Pod's
	// downward-API references read: "labels", "annotations", "label:<key>", "annotation:<key>".
	AnnotationDownwardRefs = conversion.Domain + "/downward-refs"
	// downwardAnnotationPrefix starts every annotation written for the downward API.
	downwardAnnotationPrefix = conversion.Domain + "/downward-"
)

// rewriteMetaFieldRefs rewrites the downward-API references of spec (a super Pod's spec) to
// the tenant Pod t's labels and annotations into references to annotations of the super Pod
// that hold the tenant's values, and sets those annotations in meta (the super Pod's metadata;
// stale ones from an earlier sync are removed first). When spec has no such reference (a
// trimmed spec from a cache), the references recorded on existing (the current super Pod, nil
// when creating) are used. The tenant Pod is not modified.
func rewriteMetaFieldRefs(spec *corev1.PodSpec, t *corev1.Pod, meta *metav1.ObjectMeta, existing *corev1.Pod) {
	for k := range meta.Annotations {
		if strings.HasPrefix(k, downwardAnnotationPrefix) {
			delete(meta.Annotations, k)
		}
	}
	var refs []string
	eachFieldRef(spec, func(f *corev1.ObjectFieldSelector) {
		ref := metaRef(f.FieldPath)
		if ref == "" {
			return
		}
		f.FieldPath = annotationPath(refAnnotation(ref))
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	})
	if len(refs) == 0 && existing != nil && existing.Annotations[AnnotationDownwardRefs] != "" {
		refs = strings.Split(existing.Annotations[AnnotationDownwardRefs], "\n")
	}
	if len(refs) == 0 {
		return
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	for _, ref := range refs {
		what, key, one := strings.Cut(ref, ":")
		values := t.Labels
		if what == "annotation" || what == "annotations" {
			values = withoutLastApplied(t.Annotations)
		}
		if !one {
			meta.Annotations[refAnnotation(ref)] = formatMap(values)
		} else if v, ok := values[key]; ok {
			meta.Annotations[refAnnotation(ref)] = v
		}
	}
	meta.Annotations[AnnotationDownwardRefs] = strings.Join(refs, "\n")
}

// metaRef returns the AnnotationDownwardRefs entry of downward-API field path path, or "" when
// path does not read labels or annotations.
func metaRef(path string) string {
	switch path {
	case "metadata.labels":
		return "labels"
	case "metadata.annotations":
		return "annotations"
	}
	if k, ok := subscript(path, "metadata.labels['"); ok {
		return "label:" + k
	}
	if k, ok := subscript(path, "metadata.annotations['"); ok {
		return "annotation:" + k
	}
	return ""
}

// refAnnotation returns the super Pod annotation that holds the tenant's value for
// AnnotationDownwardRefs entry ref.
func refAnnotation(ref string) string {
	switch what, key, _ := strings.Cut(ref, ":"); what {
	case "labels":
		return AnnotationDownwardLabels
	case "annotations":
		return AnnotationDownwardAnnotations
	case "label":
		return downwardKeyAnnotation("l", key)
	default:
		return downwardKeyAnnotation("a", key)
	}
}

// lastApplied is kubectl's last-applied-configuration annotation, which the tenant caches drop
// (pkg/tenant): it is left out of the annotations a super Pod's containers read, so a value
// computed from the full tenant Pod on create and from the cache on update is the same.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// withoutLastApplied returns m without lastApplied (m itself when it has none).
func withoutLastApplied(m map[string]string) map[string]string {
	if _, ok := m[lastApplied]; !ok {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if k != lastApplied {
			out[k] = v
		}
	}
	return out
}

// subscript returns k when path is prefix + k + "']" (the downward API's map subscript).
func subscript(path, prefix string) (string, bool) {
	if !strings.HasPrefix(path, prefix) || !strings.HasSuffix(path, "']") || len(path) < len(prefix)+2 {
		return "", false
	}
	return path[len(prefix) : len(path)-2], true
}

// downwardKeyAnnotation names the super Pod annotation that holds the tenant Pod's value of
// label (kind "l") or annotation (kind "a") key: a hash of the key, because tenant keys may
// carry their own prefix and be longer than an annotation name part.
func downwardKeyAnnotation(kind, key string) string {
	sum := sha256.Sum256([]byte(key))
	return downwardAnnotationPrefix + kind + "-" + hex.EncodeToString(sum[:8])
}

// annotationPath returns the downward-API field path of annotation key k.
func annotationPath(k string) string { return "metadata.annotations['" + k + "']" }

// formatMap formats m as a kubelet writes a downwardAPI volume file for metadata.labels or
// metadata.annotations (k8s.io/kubernetes pkg/fieldpath.FormatMap): one `key="value"` line per
// key in sorted order, the value Go-quoted, lines joined by "\n" without a trailing newline.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%v=%q", k, m[k])
	}
	return b.String()
}

// eachFieldRef calls fix for every downward-API field reference of spec: container and init
// container env, downwardAPI volume items and projected downwardAPI sources.
func eachFieldRef(spec *corev1.PodSpec, fix func(*corev1.ObjectFieldSelector)) {
	visit := func(f *corev1.ObjectFieldSelector) {
		if f != nil {
			fix(f)
		}
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			for j := range cs[i].Env {
				if vf := cs[i].Env[j].ValueFrom; vf != nil {
					visit(vf.FieldRef)
				}
			}
		}
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.DownwardAPI != nil {
			for j := range v.DownwardAPI.Items {
				visit(v.DownwardAPI.Items[j].FieldRef)
			}
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.DownwardAPI != nil {
					for j := range src.DownwardAPI.Items {
						visit(src.DownwardAPI.Items[j].FieldRef)
					}
				}
			}
		}
	}
}
