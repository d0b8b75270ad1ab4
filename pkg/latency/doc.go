// Package latency measures how long a change takes through the syncer: the end-to-end sync
// lag of each request (vcsyncer_sync_lag_seconds, from when its oldest waiting change reached
// the syncer to the end of the reconcile that wrote it) and the phases of a tenant Pod's
// creation (vcsyncer_pod_creation_phase_duration_seconds, vcsyncer_pod_creation_duration_seconds
// and vcsyncer_pod_creation_syncer_held_seconds: the Pod startup latency of the field's SLOs,
// cut at the syncer's boundaries, and the part of it the syncer itself holds the Pod).
//
// # What it owns
//
// Tracker (tracker.go): per request and direction, the arrival time of the oldest change not yet
// written; per tenant Pod whose creation has not finished, the times its phases began (at most
// maxTrackedPodsPerTenant per tenant, dropped after podTrackTTL).
//
// # Inputs and outputs
//
// In: live requests as they are enqueued (Arrival), taken by a worker (Popped) and put back
// after a failed reconcile (Requeued); a removed tenant (Forget); the events of a tenant's Pod
// informer (TenantPodHandler) and of the super Pod informer (SuperPodHandler). Directions are
// metrics.Downward and metrics.Upward. Out: the arrival time Popped returns (the syncer records
// the lag from it) and the Pod-creation observations, written to pkg/metrics by the Tracker.
//
// # Lock rules
//
// One mutex guards all of a Tracker's maps; it is held only while they are read or written and
// while a Pod phase is observed into its histogram, never while calling anything else. Every
// method is safe for concurrent use, from informer handlers and workers alike, and never blocks
// on anything but that mutex.
//
// It sits on floor 4 of the package map in docs/architecture.md and may import packages on
// floors 0–4 only (today: pkg/conversion, pkg/metrics, pkg/podcache, pkg/resources);
// test/layering checks it.
package latency
