// Package services runs the syncer in-process against real local control planes (a super
// cluster and two tenants, each tenant apiserver on its own part of the super cluster's
// Service range, registered as the Tenant's spec.serviceCIDRs) and checks that tenant Services
// show the ClusterIPs and node ports that work in the super cluster.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package services
