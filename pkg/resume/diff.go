package resume

import (
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// DiffTenant returns, of objs (the cached objects of one kind in tenant tenantName), the
// objects whose version differs from the one src (that informer's Source) acked for them, and
// the acked keys no object has any more: what a tenant's first sync enqueues. A cold tenant
// (TakeCold: left out of the resumed checkpoint) gets every object, whatever the acks say.
// What changed since a resume is logged (logDiff).
func DiffTenant(log logr.Logger, tenantName string, kind resources.Kind, src *source.Source, objs []any, cold bool) ([]metav1.Object, map[string]source.ObjectVersion) {
	return diff(log, tenantName, kind, "tenant", src, objs, nil, nil, cold)
}

// DiffSuper is DiffTenant for the super objects of one kind owned by tenant c (objs: the
// super informer's cache, src: its Source, whose ack entries carry the owner, OwnerVersion).
func DiffSuper(log logr.Logger, c *tenant.Cluster, kind resources.Kind, src *source.Source, objs []any, cold bool) ([]metav1.Object, map[string]source.ObjectVersion) {
	owned := func(m metav1.Object) bool { o, ok := conversion.OwnerOf(m); return ok && o.TenantUID == c.UID }
	acked := func(_ string, v source.ObjectVersion) bool { return v.Owner != nil && v.Owner.TenantUID == c.UID }
	return diff(log, c.Name, kind, "super", src, objs, owned, acked, cold)
}

func diff(log logr.Logger, tenantName string, kind resources.Kind, side string, src *source.Source, objs []any,
	keep func(metav1.Object) bool, keepAcked func(string, source.ObjectVersion) bool, cold bool,
) ([]metav1.Object, map[string]source.ObjectVersion) {
	changed, vanished := src.Diff(objs, keep, keepAcked)
	if cold {
		return metaObjects(objs, keep), vanished
	}
	logDiff(log, tenantName, kind, side, src, changed, vanished)
	return changed, vanished
}

// ForgetTenantSources drops what the Sources acked for removed tenant c: its own informers'
// Sources and, in the super informers' Sources of superKinds, the entries of objects it owns.
func (st *State) ForgetTenantSources(c *tenant.Cluster, superKinds []resources.Kind) {
	st.sources.Forget(TenantPrefix + c.Name + "/")
	for _, kind := range superKinds {
		if src, ok := st.sources.Lookup(SuperPrefix + "/" + string(kind)); ok {
			src.UnackWhere(func(_ string, v source.ObjectVersion) bool {
				return v.Owner != nil && v.Owner.TenantUID == c.UID
			})
		}
	}
}

// logDiff logs, for a tenant whose Sources held ack entries (a restart or a shard
// hand-over), which objects of one kind on one side ("tenant" or "super") changed or vanished
// since they were acked: those are the reconciles the resume costs. At most three keys are
// named, each with its acked and current resourceVersion ("" when it had no ack entry), cut to
// maxDiffSample bytes: names and resourceVersions come from the tenant's apiserver, which
// may send strings of any length. mode is the Source's informer's resume mode (for the super
// side, the shared super informer's).
func logDiff(log logr.Logger, tenantName string, kind resources.Kind, side string, src *source.Source, changed []metav1.Object, vanished map[string]source.ObjectVersion) {
	if (len(changed) == 0 && len(vanished) == 0) || src.Mode() == source.ModeCold {
		return // nothing changed, or nothing was known (a first sync: everything is new)
	}
	var sample []string
	for _, m := range changed {
		if len(sample) == 3 {
			break
		}
		key := source.Key(m)
		was, _ := src.Acked(key)
		sample = append(sample, conversion.Truncate(key+" "+was.ResourceVersion+"→"+m.GetResourceVersion(), maxDiffSample))
	}
	for key, v := range vanished {
		if len(sample) == 3 {
			break
		}
		sample = append(sample, conversion.Truncate(key+" "+v.ResourceVersion+"→gone", maxDiffSample))
	}
	log.Info("Objects changed since they were last enqueued", "tenant", tenantName, "side", side,
		"kind", string(kind), "mode", src.Mode(), "changed", len(changed), "vanished", len(vanished), "sample", sample)
}

// maxDiffSample bounds each key logged by logDiff, in bytes.
const maxDiffSample = 300

// metaObjects returns the objects of objs that keep accepts (all when keep is nil).
func metaObjects(objs []any, keep func(metav1.Object) bool) []metav1.Object {
	var out []metav1.Object
	for _, obj := range objs {
		if m, ok := obj.(metav1.Object); ok && (keep == nil || keep(m)) {
			out = append(out, m)
		}
	}
	return out
}
