// Package config embeds the manifests under config/ that the syncer binary applies itself,
// such as the Tenant CustomResourceDefinition. config/ (kustomize) is the source of truth.
package config

import _ "embed"

// TenantCRD is the YAML of the tenants.tenancy.vcsyncer.io CustomResourceDefinition.
//
//go:embed crd/bases/tenancy.vcsyncer.io_tenants.yaml
var TenantCRD []byte
