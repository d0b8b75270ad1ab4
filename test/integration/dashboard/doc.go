// Package dashboard proves the Grafana dashboard against real data: it runs the syncer
// in-process against a real super cluster and several real tenants under load, has a real
// Prometheus (Debian package prometheus) scrape the syncer's /metrics, then evaluates every
// panel's PromQL from charts/vc-syncer/dashboards/vc-syncer.json through Prometheus' HTTP API
// and asserts each returns series for the tenants.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package dashboard
