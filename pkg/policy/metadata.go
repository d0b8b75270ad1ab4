package policy

import (
	"sort"
	"strings"
)

// KeyAllowed reports whether label or annotation key k matches one of prefixes. The entry ""
// matches plain keys: no prefix and no dot ("app", "tier", "pod-template-hash"). Keys without
// a prefix but in reverse-DNS form (io.katacontainers.config.hypervisor.kernel_params,
// io.kubernetes.cri-o.Devices) are container-runtime settings that CRI runtimes read from Pod
// annotations, not plain keys. An entry ending in "/" matches every key that starts with it
// ("example.com/" stands for a whole domain); any other entry matches that one key only
// ("kubectl.kubernetes.io/restartedAt", "controller-revision-hash"), so an entry never lets a
// longer key through ("controller-revision-hash.evil.io/x").
func KeyAllowed(prefixes []string, k string) bool {
	for _, p := range prefixes {
		if p == "" {
			if !strings.ContainsAny(k, "/.") {
				return true
			}
			continue
		}
		if strings.HasSuffix(p, "/") && strings.HasPrefix(k, p) || k == p {
			return true
		}
	}
	return false
}

// FilterKeys returns the entries of m whose keys KeyAllowed passes for prefixes (a new map, nil
// when none pass) and the keys it left out, sorted. m is not modified.
func FilterKeys(m map[string]string, prefixes []string) (kept map[string]string, dropped []string) {
	for k, v := range m {
		if !KeyAllowed(prefixes, k) {
			dropped = append(dropped, k)
			continue
		}
		if kept == nil {
			kept = make(map[string]string, len(m))
		}
		kept[k] = v
	}
	sort.Strings(dropped)
	return kept, dropped
}

// MetadataDenial returns the metadataKey report for tenant object namespace/name of kind whose
// label and annotation keys dropped ("label <key>", "annotation <key>") were not copied to its
// super copy, or nil when dropped is empty. The object itself is synced: the rule filters.
func MetadataDenial(kind, namespace, name string, dropped []string) *Denial {
	if len(dropped) == 0 {
		return nil
	}
	obj := name
	if namespace != "" {
		obj = namespace + "/" + name
	}
	return Deny(RuleMetadataKey, "%s %s was synced without %s; a TenantPolicy's metadata.allowedLabelPrefixes and metadata.allowedAnnotationPrefixes allow more",
		kind, obj, strings.Join(dropped, ", "))
}
