package policy

import (
	"slices"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// RuleStorageClass is the rule of a refusal of a claim (or of a Pod whose generic ephemeral
// volume template asks for one) that names a super StorageClass the tenant may not use: one
// that is neither public nor in storage.allowedStorageClassNames (see ClaimStorageClass).
const RuleStorageClass Rule = "storageClass"

// ClaimStorageClass checks class, the StorageClass a tenant claim (or claim template) names,
// against storage policy p (rule storageClass). exists and public describe the super class of
// that name: whether the super cluster has it and whether it is labelled public
// (tenancy.vcsyncer.io/public=true). It returns nil when class is "" (static binding, confined
// to the tenant's own PVs), when the super cluster has no such class (a claim of a class the
// super cluster lacks binds only the tenant's own PVs), when the class is public, or when
// p.AllowedStorageClassNames lists it; otherwise a Denial: a claim of a super class the
// tenant cannot see could bind an Available PV the provider made in that class for another
// tenant, or draw on storage the provider keeps for others. what names the claim's place in
// the message ("storageClassName", "ephemeral volume data: storageClassName").
func ClaimStorageClass(p *tenancyv1alpha1.StoragePolicy, what, class string, exists, public bool) *Denial {
	if class == "" || !exists || public {
		return nil
	}
	var allowed []string
	if p != nil {
		allowed = p.AllowedStorageClassNames
	}
	if slices.Contains(allowed, class) {
		return nil
	}
	return Deny(RuleStorageClass,
		"%s %q is a StorageClass of the super cluster that is not public; allowed: the public classes%s; a TenantPolicy's storage.allowedStorageClassNames allows more",
		what, class, listOrNone(allowed))
}

// listOrNone returns ", " and the entries of l joined, or "" when l is empty.
func listOrNone(l []string) string {
	if len(l) == 0 {
		return ""
	}
	out := ""
	for _, s := range l {
		out += ", " + s
	}
	return out
}
