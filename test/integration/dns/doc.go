// Package dns proves tenant DNS end to end on real control planes: a tenant that runs
// cluster DNS (kube-system/kube-dns, answered by a real CoreDNS reading the tenant apiserver),
// the syncer with its default options, and names resolved exactly as a super Pod's resolver
// would with the dnsConfig the syncer gave it.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package dns
