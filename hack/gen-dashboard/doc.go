// Command gen-dashboard writes vc-syncer's Grafana dashboard (pkg/metrics/dashboard) to
// charts/vc-syncer/dashboards/vc-syncer.json and, wrapped in a ConfigMap for the Grafana
// sidecar, to config/grafana/vc-syncer-dashboard.yaml. Run from the repository root
// (`make dashboard`).
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package main
