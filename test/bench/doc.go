// Command bench is vc-syncer's load generator. It starts real local control planes
// (pkg/localcluster), runs the built vc-syncer binary against them, and measures Pod start-up
// latency through the syncer side by side, in the same run, with a baseline where the same Pods
// go straight to the super cluster.
//
//	go run ./test/bench burst --tenants 2 --pods 200 --nodes 10 --out docs/bench/burst
//
// For each Pod it records the time of its create call and the time its Running status is
// observed by a watch (in the tenant for synced Pods, in the super cluster for the baseline).
// It reports p50/p90/p99 latency and throughput (Pods/s), the syncer process's CPU seconds
// (utime+stime from /proc) and peak RSS (VmHWM), as JSON and a Markdown table, and a PNG
// histogram of both latency distributions (like the VirtualCluster paper's figures 7, 9, 11).
//
// `go run ./test/bench chaos` is the seeded fault-injection soak of package test/chaos.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package main
