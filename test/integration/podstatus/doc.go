// Package podstatus checks, on real control planes (pkg/localcluster: a super cluster with
// kwok Nodes plus one Node whose kubelet the test plays, and a tenant), what a tenant sees of
// its Pods' status: readiness gates set in the tenant reach the super Pod's status and make
// the Pod Ready; tenant-owned conditions survive the upward copies while the super Pod's
// changes keep coming up; a Pod whose super copy is lost looks dead; a Pod the super cluster
// refuses says why, once.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package podstatus
