// Package chaos is the seeded fault-injection soak of issue 37: real control planes (a super
// cluster and several tenants), vc-syncer replicas run as processes, a load generator that
// keeps creating, updating and deleting objects in every tenant, a fault schedule drawn only
// from a seed, and invariants checked while the faults run and after the last one.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import any
// package of the module, and no package outside test/, e2e/ and hack/ imports it.
//
// # Usage
//
// `go run ./test/bench chaos --minutes 3 --seed 1` runs one soak and writes result.json,
// result.md and the fault log; `--replay <fault log>` reruns a fault log. The integration test
// test/integration/chaos runs a short soak with a fixed seed and with a random one. In code:
//
//	h, err := chaos.Start(ctx, env, bin, chaos.Options{Replicas: 2, Out: dir})
//	defer h.Stop()
//	faults := chaos.Schedule(seed, chaos.ScheduleOptions{Duration: 2 * time.Minute, Tenants: len(env.Tenants), Replicas: 2})
//	res, err := h.Soak(ctx, seed, faults)
//
// # Implementation details
//
// Schedule draws every fault (the gap before it, its kind, its target, how long it holds and
// a number that picks the object it touches) from math/rand/v2 seeded with the seed alone, so
// the same seed gives the same schedule. Each fault kind is one function of Injectors; the
// faults run one after the other, each restoring what it broke (a killed replica is started
// again, a stopped apiserver continued) before the next begins. The fault log (one JSON
// record per fault: the fault and what it did) is written as the soak runs.
//
// The invariants are pure functions of snapshots (Snapshot): Continuous (no two super copies
// of one tenant object, no super object in a namespace of another tenant, no super copy of a
// kind its tenant's policy refuses created after the refusal began, and none present, from
// before the refusal or not, RefusedCopyBound (15 s) after it began) runs every few seconds
// during the soak; Settled (every tenant object has exactly one super copy with the
// same data, every super Pod's phase in its tenant Pod, no orphan super object, nothing left
// terminating; an object its tenant's policy refuses needs no copy while refused, and needs
// one again after) is polled after the last fault until it holds or the settle bound passes.
// After it holds, vcsyncer_sync_retries_total of every replica must stay flat, and the
// replicas' goroutines and live heap must be back to their level before the faults
// (ResourcesBackToLevel: the sums over the replicas, within a quarter and half again; each
// replica's go_goroutines from its /metrics and HeapAlloc after a forced garbage collection,
// /debug/pprof/heap?gc=1 of its --pprof-bind-address). A fault that
// makes the policy refuse something (PolicyFlip) records it in Refusals while it lasts; a
// snapshot counts only the refusals held all through its listing (StableRefusals).
//
// The fault kinds (AllKinds): a replica SIGKILLed or SIGTERMed, or SIGSTOPped past its shard
// Lease; a tenant apiserver SIGSTOPped, or killed and started again
// (localcluster.ControlPlane.RestartAPIServer); a super copy deleted or edited behind the
// syncer's back; a checkpoint Secret deleted, or corrupted while the replica that reads it is
// down; a Tenant pointed at a TenantPolicy that refuses the load's Services, then back (one
// flip in two past RefusedCopyBound), or the same while every replica is down
// (PolicyFlipWhileDown, faults_resume.go: the resume path of the policy marks); the super etcd
// compacted at its current revision while a replica is down; a tenant apiserver
// killed and kept down for 20–45 s (localcluster.ControlPlane.StopAPIServer, then
// StartAPIServer), during which its Tenant must read Unreachable (InvUnreachableReported,
// checked for a down of at least UnreachableReportBound); a tenant's kubeconfig Secret rotated
// to a token of a new cluster-admin ServiceAccount of the tenant, the previous rotation's
// ServiceAccount deleted (its token revoked) at once or after the hold; the loopback proxy
// between the syncer and a tenant apiserver (Proxy) dropping (stalling), delaying or resetting
// connections for the hold (the tenant faults are in faults_tenant.go); the super
// kube-apiserver killed and started again; one of a tenant's super namespaces deleted behind
// the syncer's back; a Tenant removed (its finalizer deletes its super namespaces), kept away
// a few seconds and registered again with the same kubeconfig (a new Tenant UID, so new super
// namespaces); the replicas scaled to 1, 3 and 2 and back (shard hand-overs; faults_cluster.go).
//
// Removing a Tenant deletes every super object it had (CleanupSuperNamespaces, before the
// finalizer goes): while its super namespaces terminate, the copies of the Tenant registered
// again (another UID) exist beside them, which no continuous invariant counts as a duplicate
// (copies are told apart by Tenant UID); once settled, a super object of the removed Tenant
// left behind is an orphan. Its tenant Pods bound before the removal lose their super Pods
// with it: they end Failed (SuperPodLost), which the settled invariants accept.
//
// SuperRestart is opt-in (OptInKinds, not in DefaultKinds): after a dozen or so super
// apiserver restarts a few seconds apart, the super cluster's own kube-scheduler stops
// scheduling new Pods (reproduced without vc-syncer), which a soak would report as tenant Pods
// left Pending.
//
// SyncerScale needs --sharding on every replica: the harness runs the replicas with it only
// when there are two or more (one replica runs unsharded, as a single deployment does), and
// then prepares spares (not started) up to three processes; with one replica the schedule
// leaves SyncerScale out and a replayed one finds nothing to act on.
//
// # Implementation considerations
//
// A fault's target object is chosen at injection time from a sorted list by the fault's pick
// number: the schedule is reproducible, the objects a replay touches depend on the load's
// timing. The kubeconfigs the harness registers point at a Proxy per tenant from the start,
// so that LossyProxy acts on the syncer's connections alone. The harness uses its own tenant
// clients, not through the proxies, with a request timeout so that a stopped tenant apiserver
// stalls the load for a bounded time only. A TenantDownLong is drawn at a quarter of the
// other kinds' weight (longDownOdds) so that its long holds leave a 20-minute soak ≥ 200
// faults.
package chaos
