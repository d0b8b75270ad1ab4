package policy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// Rules of the bounds on what the syncer holds in memory for a tenant.
const (
	// RuleCachedBytes refuses a tenant object that would take the bytes of the tenant's
	// objects held in the syncer's caches over limits.maxCachedBytes.
	RuleCachedBytes Rule = "cachedBytes"
	// RuleCachedObjects suspends the sync of a tenant that has more objects in the syncer's
	// caches than limits.maxCachedObjects (tenant.HeldBytes counts them).
	RuleCachedObjects Rule = "cachedObjects"
)

// sizer is an object that knows its protobuf-encoded size (every generated Kubernetes type).
type sizer interface{ Size() int }

// ObjectBytes returns the size in bytes of obj as a whole: its protobuf encoding (keys,
// values, labels, annotations, the rest of its metadata and spec), without its managedFields
// (which the syncer drops from its caches and never copies). It is what limits.maxObjectBytes
// and limits.maxCachedBytes count. An object of a type without a protobuf encoding counts 0.
func ObjectBytes(obj any) int64 {
	s, ok := obj.(sizer)
	if !ok {
		return 0
	}
	n := int64(s.Size())
	a, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return n
	}
	m, ok := a.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok || len(m.ManagedFields) == 0 {
		return n
	}
	// The metadata field is length-prefixed: swap its encoded size for the size without the
	// managedFields entries (each a tagged, length-prefixed field).
	meta := int64(m.Size())
	trimmed := meta
	for i := range m.ManagedFields {
		l := int64(m.ManagedFields[i].Size())
		trimmed -= 2 + varintLen(l) + l // field 17: a two-byte tag
	}
	return n - varintLen(meta) - meta + varintLen(trimmed) + trimmed
}

// varintLen returns the length of the protobuf varint encoding of v.
func varintLen(v int64) int64 {
	n := int64(1)
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// MaxCachedBytes returns the policy's limits.maxCachedBytes in bytes, -1 when it sets none (no
// cap).
func MaxCachedBytes(l *tenancyv1alpha1.LimitsPolicy) int64 {
	if l == nil || l.MaxCachedBytes == nil {
		return -1
	}
	return l.MaxCachedBytes.Value()
}

// MaxCachedObjects returns the policy's limits.maxCachedObjects, -1 when it sets none or a
// negative value (no cap).
func MaxCachedObjects(l *tenancyv1alpha1.LimitsPolicy) int64 {
	if l == nil || l.MaxCachedObjects == nil || *l.MaxCachedObjects < 0 {
		return -1
	}
	return int64(*l.MaxCachedObjects)
}

// MaxObjectBytes returns the policy's limits.maxObjectBytes in bytes, -1 when it sets none.
func MaxObjectBytes(l *tenancyv1alpha1.LimitsPolicy) int64 {
	if l == nil || l.MaxObjectBytes == nil {
		return -1
	}
	return l.MaxObjectBytes.Value()
}

// CachedBytesDenial returns the denial (RuleCachedBytes) of an object of size bytes encoded
// (ObjectBytes) that would count charge bytes (what the cap compares: the larger of its
// encoded size and its estimated size in the syncer's memory, HeapBytes) and does not fit in
// the policy's limits.maxCachedBytes beside the held bytes already held for the tenant. what
// names the object ("ConfigMap app/settings"). A charge at or under size is not named apart.
func CachedBytesDenial(l *tenancyv1alpha1.LimitsPolicy, what string, size, charge, held int64) *Denial {
	limit := MaxCachedBytes(l)
	counted := fmt.Sprintf("%d bytes", size)
	if charge > size {
		counted = fmt.Sprintf("%d bytes encoded, %d bytes in the syncer's memory", size, charge)
	}
	return Deny(RuleCachedBytes, "%s (%s) is not synced: the syncer holds %d bytes of the tenant's objects already and may hold %s (%d bytes); it is synced when others are deleted or shrink; a TenantPolicy's limits.maxCachedBytes allows more",
		what, counted, held, resource.NewQuantity(limit, resource.BinarySI).String(), limit)
}

// CachedObjectsDenial returns the denial (RuleCachedObjects) of an object that arrived while
// the syncer held entries of the tenant's objects, limits.maxCachedObjects or more: the
// syncer stops syncing the tenant until it has few enough.
func CachedObjectsDenial(l *tenancyv1alpha1.LimitsPolicy, what string, entries int) *Denial {
	return Deny(RuleCachedObjects, "%s is not synced: the syncer holds %d of the tenant's objects in its caches already and may hold %d (limits.maxCachedObjects); it stops syncing the tenant until it has at most that many objects; a TenantPolicy's limits.maxCachedObjects allows more",
		what, entries, MaxCachedObjects(l))
}
