// Package remediation is the syncer's periodic remediation scan: every interval it compares,
// per tenant and per synced kind, the tenant cache with the super cache and re-enqueues the
// objects whose super copy (or tenant status) has drifted, at low priority, into the syncer's
// downward or upward pipeline. The VirtualCluster paper (ICDCS 2021, §IV) runs such a scan
// every 60 s because informer caches and event handling can miss changes; it reports < 2 s
// per 10,000 Pods.
//
// # Usage
//
//	sc, err := remediation.New(remediation.Options{
//		Interval: 60 * time.Second, Env: s.Env(), Resources: s.Resources(), Tenants: registry, Queue: s,
//	})
//	mgr.Add(sc) // a manager.Runnable; needs leader election like the syncer
//
// The flag is --remediation-interval of `vc-syncer run` (0 turns the scan off).
//
// # Implementation details
//
// A scan never lists an apiserver: it reads the informer stores. Kinds opt in by implementing
// resources.Checker (Namespace, Pod, ConfigMap, Secret, ServiceAccount and Service do). For
// each kind the super store is read once and bucketed by owning tenant UID; then, per tenant:
//
//   - every tenant object is looked up at its mapped super name and given to the kind's Check
//     (missing_in_super, stale_in_super, content_differs, status_differs, and for Endpoints and
//     EndpointSlices refused_in_super: a super copy naming an address that is no longer the IP of
//     one of the tenant's running super Pods);
//   - every super object the tenant owns (conversion.OwnerOf, by tenant UID) at its mapped
//     name whose tenant object is not in the tenant cache is an orphan (orphan_in_super),
//     unless it is already being deleted.
//
// A mismatch is acted on only when it is confirmed: seen on two consecutive scans with the
// same reason and with both objects unchanged (same resourceVersions; for an orphan, the same
// super UID). Anything else is the event path still at work. A confirmed mismatch is counted
// once (vcsyncer_remediation_mismatches_total) and re-enqueued on every scan while it lasts;
// when a later scan no longer finds it, it is counted as fixed
// (vcsyncer_remediation_fixes_total). Scan time goes to
// vcsyncer_remediation_scan_duration_seconds.
//
// # Implementation considerations
//
// The scanner never writes: deletion of an orphan happens only in the kind's normal downward
// reconcile, which re-reads both caches and deletes a super copy (with a UID precondition) only
// when the tenant object is gone. Two failures of other syncers are ruled out by construction:
//
//   - a tenant whose caches cannot be trusted is skipped entirely, and so never looks empty: a
//     Cluster that is not Synced, not Connected or stopped, and any kind whose tenant or super
//     informer has not synced (vcsyncer_remediation_skips_total). A skip also forgets the
//     tenant's unconfirmed mismatches, so confirmation always spans two trusted scans;
//   - an object created between two reads (a Pod scheduled in the super cluster before its
//     tenant object reached the scan's view) is never an orphan for long: the tenant cache is
//     read after the super object is seen, and an orphan must persist across two scans one
//     interval apart before it is re-enqueued; by then the tenant cache has the object.
//
// Scanner state is one record per unconfirmed or confirmed mismatch, dropped when the tenant
// goes (its metric series are deleted by metrics.ForgetTenant).
//
// It sits on floor 4 of the package map in docs/architecture.md and may import packages on floors
// 0–4 only (today: pkg/admit, pkg/conversion, pkg/metrics, pkg/resources, pkg/tenant); test/layering checks
// it.
package remediation
