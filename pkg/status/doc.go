// Package status serves the syncer's status page: one HTML table with a row per tenant (phase,
// weight, downward and upward queue depth and oldest-item age, last successful sync, last
// checkpoint) that refreshes itself, and the same data as JSON for scripts.
//
// # Usage
//
//	h, err := status.NewHandler(status.Options{
//		Provider: s,                // the *syncer.Syncer: per-tenant queues and sync times
//		Tenants:  mgr.GetClient(), // Tenant objects from the manager cache (phase, weight)
//		Leader:   func() bool { ... },
//	})
//	mgr.AddMetricsServerExtraHandler("/", h)
//	mgr.AddMetricsServerExtraHandler("/status.json", h)
//
// `vc-syncer run` serves it on the metrics port (--metrics-bind-address, default :8080):
// GET / is the page, GET /status.json the Snapshot.
//
// # Implementation details
//
// A request builds one Snapshot: the Tenant objects give the phase (the same word as
// `kubectl get tenants`), the reason of the first condition that is not True, and the
// weight; the Provider gives what only the running syncer knows (queues, last sync, last
// checkpoint). A tenant the Provider knows but the Tenant list does not (cache lag) keeps the
// Provider's phase. The page is rendered with html/template; a small inline script fetches
// /status.json every Options.RefreshInterval and rewrites the table in place with textContent
// (never innerHTML), so the page needs no external assets and works offline. Without
// JavaScript a meta refresh reloads it. Ages on the page are computed against the Snapshot's
// own time, never the browser's clock.
//
// A Provider keeps what it remembers beyond its connections in a Recorder (recorder.go): each
// tenant's last successful sync (RecordSync, one atomic store per reconcile) and the last
// checkpoint function; Complete adds the rows of tenants synced before but not connected now
// (a Paused tenant) and fills in every row's last checkpoint. TopRetrying keeps the
// MaxRetrying most failing hot requests of each tenant.
//
// # Implementation considerations
//
// The page is served on the metrics port rather than the health-probe port: controller-runtime
// lets a program add handlers to its metrics server (metricsserver.Options.ExtraHandlers,
// Manager.AddMetricsServerExtraHandler) but not to its probe server, and the metrics port is
// the one a Service exposes. If the metrics server is ever put behind authentication
// (metricsserver.Options.FilterProvider), the page gets the same authentication and
// authorization, which suits data as sensitive as the per-tenant metrics. A Content-Security-
// Policy allows only the page's own inline script (by hash), its inline style and requests to
// its own origin.
//
// It sits on floor 1 of the package map in docs/architecture.md and may import packages on floors
// 0–1 only (today: pkg/apis/tenancy/v1alpha1); test/layering checks it.
package status
