// Package v1alpha1 holds the Tenant API (group tenancy.vcsyncer.io, version v1alpha1).
//
// A Tenant is a cluster-scoped object in the super cluster that registers one tenant control
// plane with the syncer: it names the Secret that holds the tenant's kubeconfig, the tenant's
// weight in the fair queues and whether syncing is paused. Its status reports the phase, the
// conditions KubeconfigValid, Connected and Synced, and the prefix of the tenant's namespaces
// in the super cluster.
//
// +kubebuilder:object:generate=true
// +groupName=tenancy.vcsyncer.io
//
// It sits on floor 0 of the package map in docs/architecture.md and may import packages on floors
// 0–0 only (today: none of the module's packages); test/layering checks it.
package v1alpha1
