// Package incluster checks how `vc-syncer run` behaves as a Deployment of two replicas in
// a super cluster, with the built binary against real local control planes and the
// environment of a Pod ($KUBERNETES_SERVICE_HOST set): leader election is on without any
// flag, the leader syncs and is ready, the standby is ready and syncs nothing, SIGTERM stops
// the leader within --graceful-shutdown-timeout and hands the Lease over at once, and every
// log line of both replicas is JSON.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package incluster
