package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// runMemory measures the syncer's resident memory at several numbers of synced Pods in one
// run and reports the slope (bytes per Pod) by least squares, the way the VirtualCluster
// paper reports memory per Pod.
func runMemory(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("memory", flag.ExitOnError)
	tenants := fs.Int("tenants", 2, "tenants")
	steps := fs.String("steps", "250,500,750,1000", "cumulative Pods per tenant at which RSS is read")
	nodes := fs.Int("nodes", 20, "kwok Nodes (110 Pods each)")
	settle := fs.Duration("settle", 10*time.Second, "wait after each step before reading RSS")
	out := fs.String("out", "bench-out/memory", "output directory")
	_ = fs.Parse(args)
	var points []int
	for _, f := range strings.Split(*steps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("--steps: %w", err)
		}
		points = append(points, n)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	env, err := startEnv(ctx, *nodes, *tenants)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	bin, err := buildSyncer(ctx)
	if err != nil {
		return err
	}
	pprofAddr := freeAddr()
	p, err := startSyncer(ctx, env, bin, true, filepath.Join(*out, "syncer.log"), "--pprof-bind-address", pprofAddr)
	if err != nil {
		return err
	}
	defer p.stop()
	if err := registerTenants(ctx, env); err != nil {
		return err
	}
	type point struct {
		Pods     int   `json:"pods"`
		RSSBytes int64 `json:"rssBytes"`
	}
	var pts []point
	done := 0
	rss0, _ := currentRSS(p.pid())
	pts = append(pts, point{0, rss0})
	for step, n := range points {
		ns := fmt.Sprintf("mem-%d", step)
		var loads []load
		for _, t := range env.Tenants {
			if err := createNamespace(ctx, t.Client, ns); err != nil {
				return err
			}
			loads = append(loads, load{client: t.Client, namespace: ns, pods: n - done, concurrency: 20})
		}
		if _, err := runLoads(ctx, 10*time.Minute, loads); err != nil {
			return err
		}
		done = n
		time.Sleep(*settle)
		rss, err := currentRSS(p.pid())
		if err != nil {
			return err
		}
		pts = append(pts, point{n * *tenants, rss})
		logf("%d synced Pods: syncer RSS %.1f MiB", n**tenants, float64(rss)/(1<<20))
	}
	if err := saveHeapProfile(ctx, pprofAddr, filepath.Join(*out, "heap.pprof")); err != nil {
		logf("heap profile not saved: %v", err)
	}
	// Least-squares slope over the points with Pods (the empty syncer's RSS is reported, not fitted).
	var sx, sy, sxx, sxy, k float64
	for _, pt := range pts[1:] {
		x, y := float64(pt.Pods), float64(pt.RSSBytes)
		sx, sy, sxx, sxy, k = sx+x, sy+y, sxx+x*x, sxy+x*y, k+1
	}
	slope := (k*sxy - sx*sy) / (k*sxx - sx*sx)
	j, _ := json.MarshalIndent(map[string]any{
		"date": time.Now().UTC().Format(time.RFC3339), "tenants": *tenants, "goVersion": runtime.Version(),
		"points": pts, "bytesPerPod": slope,
	}, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, "result.json"), j, 0o644); err != nil {
		return err
	}
	md := "| synced Pods | syncer RSS (MiB) |\n|---|---|\n"
	for _, pt := range pts {
		md += fmt.Sprintf("| %d | %.1f |\n", pt.Pods, float64(pt.RSSBytes)/(1<<20))
	}
	md += fmt.Sprintf("\nSlope (least squares over the non-empty points): **%.1f KB per synced Pod** (target ≤ 10 KB; the paper reports 40 KB).\n", slope/1000)
	logf("slope %.1f KB per Pod", slope/1000)
	return os.WriteFile(filepath.Join(*out, "result.md"), []byte(md), 0o644)
}

// currentRSS returns VmRSS of a process in bytes.
func currentRSS(pid int) (int64, error) { return procStatusBytes(pid, "VmRSS") }

// procStatusBytes reads a "<field>: N kB" line of /proc/<pid>/status (proc(5)) as bytes.
func procStatusBytes(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			kb, err := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("%s not found in /proc/%d/status", field, pid)
}

// freeAddr returns a free loopback host:port.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:6060"
	}
	defer l.Close()
	return l.Addr().String()
}

// saveHeapProfile fetches the syncer's heap profile (after a GC) into path; read it with
// `go tool pprof -sample_index=inuse_space path`.
func saveHeapProfile(ctx context.Context, addr, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}
