package policy

import (
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// The check of limits.maxObjectBytes: a pure function of the policy and of the object, here
// (not in pkg/admit with the other limits) because the tenant informers' transform
// (pkg/tenant, floor 2) applies it. pkg/admit reports what it returns.

// CheckObjectBytes returns a denial (RuleObjectSize) when size, in bytes (ObjectBytes: the
// whole object), is more than the policy's limits.maxObjectBytes, and nil otherwise. what
// names the object ("ConfigMap app/settings") in the message.
func CheckObjectBytes(l *tenancyv1alpha1.LimitsPolicy, what string, size int64) *Denial {
	if l == nil || l.MaxObjectBytes == nil || size <= l.MaxObjectBytes.Value() {
		return nil
	}
	return Deny(RuleObjectSize, "%s has %d bytes (keys, values and metadata counted), more than the %s (%d bytes) allowed; it is not copied to the super cluster and Pods that use it wait for it; a TenantPolicy's limits.maxObjectBytes allows more",
		what, size, l.MaxObjectBytes.String(), l.MaxObjectBytes.Value())
}
