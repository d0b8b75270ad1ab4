package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// runMemory measures the syncer's resident memory at several numbers of synced Pods in one
// run and reports the slope (bytes per Pod) by least squares, the way the VirtualCluster
// paper reports memory per Pod.
func runMemory(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("memory", flag.ExitOnError)
	tenants := fs.Int("tenants", 2, "tenants")
	steps := fs.String("steps", "250,500,750,1000", "cumulative Pods per tenant at which RSS is read")
	nodes := fs.Int("nodes", 20, "kwok Nodes (110 Pods each)")
	settle := fs.Duration("settle", 40*time.Second, "wait after each step (and after the forced GC) before reading RSS; longer than the syncer's --idle-memory-release (30s), so a quiet syncer has returned its freed heap")
	steady := fs.Bool("steady", true, "read RSS in steady state: trigger the GC that the Go runtime would run on its own within 2 minutes of idleness (via /debug/pprof/heap?gc=1), then wait --settle for the scavenger to return freed pages")
	out := fs.String("out", "bench-out/memory", "output directory")
	var syncerFlags []string
	fs.Func("syncer-flag", "extra flag for the vc-syncer run (repeatable), e.g. --syncer-flag=--idle-memory-release=0", func(v string) error {
		syncerFlags = append(syncerFlags, v)
		return nil
	})
	_ = fs.Parse(args)
	var points []int
	for _, f := range strings.Split(*steps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("--steps: %w", err)
		}
		points = append(points, n)
	}
	env, bin, err := startEnvAndSyncer(ctx, *out, *nodes, *tenants)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	pprofAddr := freeAddr()
	p, err := startSyncer(ctx, env, bin, true, filepath.Join(*out, "syncer.log"), append([]string{"--pprof-bind-address", pprofAddr}, syncerFlags...)...)
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
		// AnonBytes and FileBytes split RSS (RssAnon, RssFile of /proc/PID/status): the
		// process's own memory, and the pages of its 100 MB binary it has touched (shared,
		// dropped by the kernel under pressure, grows as more code paths run).
		AnonBytes int64 `json:"rssAnonBytes"`
		FileBytes int64 `json:"rssFileBytes"`
		HeapAlloc int64 `json:"heapAllocBytes"`
		// HeapInuse, HeapFree (idle heap not yet returned to the OS), StackInuse, RuntimeMeta
		// (span, cache, GC and profiling metadata) and NextGC come from runtime.MemStats
		// after the forced GC: where the anonymous RSS goes beside the live heap.
		HeapInuse   int64 `json:"heapInuseBytes"`
		HeapFree    int64 `json:"heapFreeBytes"`
		StackInuse  int64 `json:"stackInuseBytes"`
		RuntimeMeta int64 `json:"runtimeMetaBytes"`
		NextGC      int64 `json:"nextGCBytes"`
	}
	var pts []point
	done := 0
	read := func() (point, error) {
		var pt point
		if *steady {
			if _, err := heapAlloc(ctx, pprofAddr); err != nil {
				return pt, err
			}
			time.Sleep(*settle)
		}
		st, err := heapStats(ctx, pprofAddr)
		if err != nil {
			return pt, err
		}
		rss, err := currentRSS(p.pid())
		anon, _ := procStatusBytes(p.pid(), "RssAnon")
		file, _ := procStatusBytes(p.pid(), "RssFile")
		return point{RSSBytes: rss, AnonBytes: anon, FileBytes: file, HeapAlloc: st["HeapAlloc"],
			HeapInuse: st["HeapInuse"], HeapFree: st["HeapIdle"] - st["HeapReleased"], StackInuse: st["Stack"],
			RuntimeMeta: st["MSpanInuse"] + st["MCacheInuse"] + st["GCSys"] + st["BuckHashSys"] + st["OtherSys"], NextGC: st["NextGC"]}, err
	}
	time.Sleep(*settle)
	pt0, err := read()
	if err != nil {
		return err
	}
	pts = append(pts, pt0)
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
		pt, err := read()
		if err != nil {
			return err
		}
		pt.Pods = n * *tenants
		pts = append(pts, pt)
		logf("%d synced Pods: syncer RSS %.1f MiB, Go heap in use %.1f MiB", pt.Pods, float64(pt.RSSBytes)/(1<<20), float64(pt.HeapAlloc)/(1<<20))
	}
	if err := saveProfile(ctx, pprofAddr, "heap?gc=1", filepath.Join(*out, "heap.pprof")); err != nil {
		logf("heap profile not saved: %v", err)
	}
	// What the idle syncer allocates at the last point: the garbage that the next GC frees,
	// which RSS holds until then ("free heap kept").
	// Both profiles follow a GC (the allocation profile is only brought up to date by one);
	// read them with `go tool pprof -sample_index=alloc_space -base idle-allocs-start.pprof idle-allocs.pprof`.
	if err := saveProfile(ctx, pprofAddr, "allocs?gc=1", filepath.Join(*out, "idle-allocs-start.pprof")); err != nil {
		logf("allocation profile not saved: %v", err)
	}
	time.Sleep(*settle)
	// The runtime publishes an allocation profile one GC late: this GC closes the window.
	if _, err := heapStats(ctx, pprofAddr); err != nil {
		logf("allocation profile not saved: %v", err)
	}
	if err := saveProfile(ctx, pprofAddr, "allocs?gc=1", filepath.Join(*out, "idle-allocs.pprof")); err != nil {
		logf("allocation profile not saved: %v", err)
	}
	// Least-squares slopes over the points with Pods (the empty syncer is reported, not fitted).
	var xs, rs, as, hs, is, fs2 []float64
	for _, pt := range pts[1:] {
		xs, rs, hs = append(xs, float64(pt.Pods)), append(rs, float64(pt.RSSBytes)), append(hs, float64(pt.HeapAlloc))
		as, is, fs2 = append(as, float64(pt.AnonBytes)), append(is, float64(pt.HeapInuse)), append(fs2, float64(pt.HeapFree))
	}
	slope, anonSlope, heapSlope := lsSlope(xs, rs), lsSlope(xs, as), lsSlope(xs, hs)
	inuseSlope, freeSlope := lsSlope(xs, is), lsSlope(xs, fs2)
	j, _ := json.MarshalIndent(map[string]any{
		"date": time.Now().UTC().Format(time.RFC3339), "tenants": *tenants, "goVersion": runtime.Version(),
		"points": pts, "bytesPerPod": slope, "anonBytesPerPod": anonSlope, "heapBytesPerPod": heapSlope,
		"heapInuseBytesPerPod": inuseSlope, "heapFreeBytesPerPod": freeSlope, "steady": *steady, "syncerFlags": syncerFlags,
	}, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, "result.json"), j, 0o644); err != nil {
		return err
	}
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	md := "| synced Pods | syncer RSS (MiB) | of it anonymous (MiB) | of it binary pages (MiB) | live Go heap (MiB) | heap spans in use (MiB) | free heap kept (MiB) | stacks (MiB) | runtime metadata (MiB) | next GC at (MiB) |\n|---|---|---|---|---|---|---|---|---|---|\n"
	for _, pt := range pts {
		md += fmt.Sprintf("| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", pt.Pods, mib(pt.RSSBytes), mib(pt.AnonBytes),
			mib(pt.FileBytes), mib(pt.HeapAlloc), mib(pt.HeapInuse), mib(pt.HeapFree), mib(pt.StackInuse), mib(pt.RuntimeMeta), mib(pt.NextGC))
	}
	md += fmt.Sprintf("\nRSS read in steady state: %v. Slopes (least squares over the non-empty points): **%.1f KB of RSS per synced Pod** (target ≤ 10 KB; the paper reports 40 KB), %.1f KB of it anonymous memory; live Go heap %.1f KB per synced Pod, heap spans in use %.1f KB, free heap kept %.1f KB.\n", *steady, slope/1000, anonSlope/1000, heapSlope/1000, inuseSlope/1000, freeSlope/1000)
	logf("slope %.1f KB RSS, %.1f KB heap per Pod", slope/1000, heapSlope/1000)
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

// freeAddr returns a free loopback host:port (localcluster.FreeAddr).
func freeAddr() string {
	addr, err := localcluster.FreeAddr()
	if err != nil {
		return "127.0.0.1:6060"
	}
	return addr
}

// saveProfile fetches the syncer's profile /debug/pprof/<profile> (a name with its query,
// such as "heap?gc=1" or "allocs?gc=1") into path; read it
// with `go tool pprof -sample_index=inuse_space path` (heap) or -sample_index=alloc_space.
func saveProfile(ctx context.Context, addr, profile, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return saveURLTo(ctx, "http://"+addr+"/debug/pprof/"+profile, f)
}

// lsSlope returns the least-squares slope of ys over xs (NaN with fewer than two distinct xs).
func lsSlope(xs, ys []float64) float64 {
	var sx, sy, sxx, sxy float64
	k := float64(len(xs))
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	return (k*sxy - sx*sy) / (k*sxx - sx*sx)
}

// heapAlloc runs a garbage collection in the syncer (through /debug/pprof/heap?gc=1) and
// returns the bytes of live heap objects after it (runtime.MemStats.HeapAlloc, from the
// profile's debug=1 text footer).
func heapAlloc(ctx context.Context, addr string) (int64, error) {
	st, err := heapStats(ctx, addr)
	return st["HeapAlloc"], err
}

// heapStats runs a garbage collection in the syncer (through /debug/pprof/heap?gc=1) and
// returns the runtime.MemStats fields of the profile's debug=1 text footer ("# Name = N"
// lines; bytes, except counts such as NumGC; "Stack" is StackInuse), keyed by field name. It fails when the footer
// has no HeapAlloc.
func heapStats(ctx context.Context, addr string) (map[string]int64, error) {
	body, err := get(ctx, "http://"+addr+"/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return nil, err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	st := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(strings.TrimPrefix(line, "# "), " = ")
		if !ok || !strings.HasPrefix(line, "# ") {
			continue
		}
		v, _, _ = strings.Cut(strings.TrimSpace(v), " ") // "# Stack = inuse / sys"
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			st[name] = n
		}
	}
	if _, ok := st["HeapAlloc"]; !ok {
		return nil, fmt.Errorf("no HeapAlloc in the heap profile of %s", addr)
	}
	return st, nil
}
