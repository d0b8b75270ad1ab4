package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// greedyResult is one mode's outcome of the greedy experiment.
type greedyResult struct {
	FairQueuing bool  `json:"fairQueuing"`
	Greedy      stats `json:"greedy"`
	Regular     stats `json:"regular"`
}

// runGreedy reproduces the VirtualCluster paper's fairness experiment in one run: greedy
// tenants burst many Pods while a regular tenant creates a few at a steady rate; the regular
// tenant's latency is measured with fair queuing and with one FIFO, one after the other, on
// the same control planes.
func runGreedy(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("greedy", flag.ExitOnError)
	greedyTenants := fs.Int("greedy-tenants", 2, "tenants that burst")
	greedyPods := fs.Int("greedy-pods", 300, "Pods per greedy tenant, created as fast as --concurrency allows")
	regularPods := fs.Int("regular-pods", 40, "Pods of the regular tenant")
	regularRate := fs.Float64("regular-rate", 10, "regular tenant's creation rate, Pods/s (open loop)")
	concurrency := fs.Int("concurrency", 20, "concurrent create calls per greedy tenant")
	nodes := fs.Int("nodes", 16, "kwok Nodes (110 Pods each; both modes' Pods stay)")
	out := fs.String("out", "bench-out/greedy", "output directory")
	downWorkers := fs.Int("downward-workers", 20, "the syncer's --downward-workers")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long per mode")
	_ = fs.Parse(args)
	env, bin, err := startEnvAndSyncer(ctx, *out, *nodes, *greedyTenants+1)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	var results []greedyResult
	for _, fair := range []bool{false, true} {
		mode := map[bool]string{false: "fifo", true: "fair"}[fair]
		p, err := startSyncer(ctx, env, bin, fair, filepath.Join(*out, "syncer-"+mode+".log"), "--downward-workers", fmt.Sprint(*downWorkers))
		if err != nil {
			return err
		}
		if err := registerTenants(ctx, env); err != nil {
			p.stop()
			return err
		}
		// The Tenants' status may still say Running from the previous mode's syncer: wait for
		// this syncer's own caches.
		if err := p.waitLog(ctx, "Tenant caches synced", len(env.Tenants)); err != nil {
			p.stop()
			return err
		}
		ns := "greedy-" + mode
		var loads []load
		for i, t := range env.Tenants {
			if err := createNamespace(ctx, t.Client, ns); err != nil {
				p.stop()
				return err
			}
			if i < *greedyTenants {
				loads = append(loads, load{client: t.Client, namespace: ns, pods: *greedyPods, concurrency: *concurrency})
			} else {
				// Starts just after the greedy burst, when their Pods fill the queues.
				loads = append(loads, load{client: t.Client, namespace: ns, pods: *regularPods, rate: *regularRate, concurrency: 4, delay: 500 * time.Millisecond})
			}
		}
		logf("%s: %d greedy tenants × %d Pods, 1 regular tenant × %d Pods at %.0f/s", mode, *greedyTenants, *greedyPods, *regularPods, *regularRate)
		samples, err := runLoads(ctx, *timeout, loads)
		p.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		regularPrefix := fmt.Sprint(*greedyTenants, "/")
		var g, r []sample
		for _, s := range samples {
			if strings.HasPrefix(s.key, regularPrefix) {
				r = append(r, s)
			} else {
				g = append(g, s)
			}
		}
		res := greedyResult{FairQueuing: fair, Greedy: summarize(g), Regular: summarize(r)}
		results = append(results, res)
		logf("%s: regular p50 %.2fs p99 %.2fs; greedy p50 %.2fs p99 %.2fs", mode, res.Regular.P50, res.Regular.P99, res.Greedy.P50, res.Greedy.P99)
	}
	j, _ := json.MarshalIndent(map[string]any{
		"date": time.Now().UTC().Format(time.RFC3339), "greedyTenants": *greedyTenants, "greedyPods": *greedyPods,
		"regularPods": *regularPods, "regularRate": *regularRate, "nodes": *nodes, "downwardWorkers": *downWorkers, "results": results,
	}, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, "result.json"), j, 0o644); err != nil {
		return err
	}
	fifo, fair := results[0], results[1]
	md := fmt.Sprintf(`| %d greedy tenants × %d Pods (burst), 1 regular tenant × %d Pods at %.0f/s, %d downward workers | one FIFO | fair queuing | fair / FIFO |
|---|---|---|---|
| regular tenant p50 latency (s) | %.3f | %.3f | %.2f |
| regular tenant p99 latency (s) | %.3f | %.3f | %.2f |
| greedy tenants p50 latency (s) | %.3f | %.3f | %.2f |
| greedy tenants p99 latency (s) | %.3f | %.3f | %.2f |
`, *greedyTenants, *greedyPods, *regularPods, *regularRate, *downWorkers,
		fifo.Regular.P50, fair.Regular.P50, fair.Regular.P50/fifo.Regular.P50,
		fifo.Regular.P99, fair.Regular.P99, fair.Regular.P99/fifo.Regular.P99,
		fifo.Greedy.P50, fair.Greedy.P50, fair.Greedy.P50/fifo.Greedy.P50,
		fifo.Greedy.P99, fair.Greedy.P99, fair.Greedy.P99/fifo.Greedy.P99)
	return os.WriteFile(filepath.Join(*out, "result.md"), []byte(md), 0o644)
}
