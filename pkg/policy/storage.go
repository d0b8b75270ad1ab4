package policy

import (
	corev1 "k8s.io/api/core/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// ClaimDataSources checks the data sources of a tenant claim's spec (or of a generic ephemeral
// volume's claim template), in tenant namespace ns, against storage policy p (rule
// storageDataSource). spec.dataSource and spec.dataSourceRef may only name a
// PersistentVolumeClaim of the core API group in the claim's own namespace (a dataSourceRef
// namespace, KEP-3294 cross-namespace data sources, must be ns): that claim's super copy is in
// the same super namespace, so cloning it stays inside the tenant. Everything else is refused:
// VolumeSnapshots (the super cluster's snapshots are not the tenant's), volume populators
// (custom resources a super-cluster controller would act on), claims of other namespaces; and
// own claims too when p.AllowDataSources is false. It returns nil when the spec passes.
func ClaimDataSources(p *tenancyv1alpha1.StoragePolicy, ns string, spec *corev1.PersistentVolumeClaimSpec) *Denial {
	type source struct {
		field, group, kind, name string
		namespace                *string
	}
	var sources []source
	if d := spec.DataSource; d != nil {
		sources = append(sources, source{"dataSource", deref(d.APIGroup), d.Kind, d.Name, nil})
	}
	if d := spec.DataSourceRef; d != nil {
		sources = append(sources, source{"dataSourceRef", deref(d.APIGroup), d.Kind, d.Name, d.Namespace})
	}
	for _, s := range sources {
		what := s.kind
		if s.group != "" {
			what += "." + s.group
		}
		what += " " + s.name
		if s.namespace != nil {
			what += " in namespace " + *s.namespace
		}
		if s.group != "" || s.kind != "PersistentVolumeClaim" || (s.namespace != nil && *s.namespace != ns) {
			return Deny(RuleStorageDataSource,
				"spec.%s %s is not a PersistentVolumeClaim of namespace %s; only the tenant's own claims in the same namespace can be data sources (VolumeSnapshots, volume populators and other namespaces are not supported)",
				s.field, what, ns)
		}
		if p == nil || p.AllowDataSources == nil || !*p.AllowDataSources {
			return Deny(RuleStorageDataSource,
				"spec.%s %s: claim data sources are disabled for this tenant; a TenantPolicy's storage.allowDataSources: true allows the tenant's own claims",
				s.field, what)
		}
	}
	return nil
}

// PodClaimDataSources checks the claim template of every generic ephemeral volume of a tenant
// Pod's spec, in tenant namespace ns, with ClaimDataSources. The Denial names the volume.
func PodClaimDataSources(p *tenancyv1alpha1.StoragePolicy, ns string, spec *corev1.PodSpec) *Denial {
	for _, v := range spec.Volumes {
		if v.Ephemeral == nil || v.Ephemeral.VolumeClaimTemplate == nil {
			continue
		}
		if d := ClaimDataSources(p, ns, &v.Ephemeral.VolumeClaimTemplate.Spec); d != nil {
			d.Message = "ephemeral volume " + v.Name + ": " + d.Message
			return d
		}
	}
	return nil
}
