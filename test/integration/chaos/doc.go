// Package chaos is the short soak of the seeded fault-injection harness (test/chaos, issue 37)
// in the test suite: one environment (a super cluster, two tenants, two vc-syncer replicas
// with --sharding) and two soaks on it, one with the fixed seed 1 and one with a random seed
// (printed), each about 45 s of faults under load followed by the settle and quiet checks.
//
// Environment: VCSYNCER_CHAOS_SEED replaces the random seed (rerun a failed soak with the seed
// it printed), VCSYNCER_CHAOS_SECONDS sets each soak's fault phase (default 45).
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package chaos
