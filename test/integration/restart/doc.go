// Package restart is the kill test of checkpointed restarts: it runs the real vc-syncer binary against
// a super cluster and three tenants (pkg/localcluster), SIGKILLs it at random moments while every
// tenant creates, updates and deletes Namespaces, ConfigMaps, Secrets, Services and Pods,
// restarts it each time, and then checks that the super cluster converged to exactly the
// tenants' objects and every Pod status came back, and that no Pod's Ready condition flipped
// because of a restart.
//
// When `vc-syncer run --help` lists --checkpoint-store, the syncer runs with
// `--checkpoint-store file:<tmp>/ckpt --checkpoint-interval 2s` (set VCSYNCER_KILL_CHECKPOINT=off
// to force cold starts); otherwise every restart is a cold start, which must converge too.
//
// Environment: VCSYNCER_KILL_SEED reproduces a run's random choices (kill moments, down times,
// the load's operations; the seed is logged), VCSYNCER_KILL_COUNT sets the number of kills
// (default 12).
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package restart
