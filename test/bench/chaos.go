package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/vcsyncer/syncer/test/chaos"
)

// chaosResult is result.json of the chaos experiment.
type chaosResult struct {
	Date     string  `json:"date"`
	Command  string  `json:"command"`
	Seed     uint64  `json:"seed"`
	Replay   string  `json:"replay,omitempty"`
	Minutes  float64 `json:"minutes"`
	Tenants  int     `json:"tenants"`
	Replicas int     `json:"replicas"`
	*chaos.Result
}

// runChaos runs the seeded fault-injection soak of test/chaos (issue 37).
func runChaos(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("chaos", flag.ExitOnError)
	minutes := fs.Float64("minutes", 3, "length of the fault phase in minutes (then the load stops and the settle check runs)")
	seed := fs.Uint64("seed", 1, "seed of the fault schedule (0 = a random seed, printed)")
	tenants := fs.Int("tenants", 4, "tenant control planes (at least 2)")
	replicas := fs.Int("replicas", 2, "vc-syncer replicas (processes); above 1 with --sharding (then syncer-scale faults scale them to 1, 3 and 2 and back)")
	nodes := fs.Int("nodes", 2, "kwok Nodes in the super cluster")
	rate := fs.Float64("rate", 2, "load operations per second per tenant")
	settle := fs.Duration("settle-timeout", 2*time.Minute, "bound on the settle after the last fault")
	replay := fs.String("replay", "", "rerun the faults of this fault log (faults.jsonl of an earlier run) instead of drawing them from --seed")
	kinds := fs.String("kinds", "", "comma-separated fault kinds to draw from (default: "+fmt.Sprint(chaos.DefaultKinds())+"; opt-in by name: "+fmt.Sprint(chaos.OptInKinds)+")")
	out := fs.String("out", "", "directory for result.json, result.md, faults.jsonl and the syncer logs (default docs/bench/chaos/seed-<seed>)")
	_ = fs.Parse(args)
	if *seed == 0 && *replay == "" {
		*seed = uint64(time.Now().UnixNano())
	}
	var faults []chaos.Fault
	if *replay != "" {
		s, f, err := chaos.ReadLog(*replay)
		if err != nil {
			return err
		}
		*seed, faults = s, f
	}
	fmt.Printf("chaos seed %d\n", *seed)
	if *tenants < 2 {
		return fmt.Errorf("--tenants must be at least 2")
	}
	var ks []chaos.Kind
	if *kinds != "" {
		var err error
		if ks, err = chaos.ParseKinds(strings.Split(*kinds, ",")); err != nil {
			return err
		}
		if *replicas < 2 && slices.Contains(ks, chaos.SyncerScale) {
			return fmt.Errorf("--kinds %s needs --replicas 2 or more (one replica runs without --sharding and cannot be scaled)", chaos.SyncerScale)
		}
	}
	if faults == nil {
		faults = chaos.Schedule(*seed, chaos.ScheduleOptions{Duration: time.Duration(*minutes * float64(time.Minute)), Tenants: *tenants, Replicas: *replicas, Kinds: ks})
	}
	if *out == "" {
		*out = filepath.Join("docs", "bench", "chaos", fmt.Sprintf("seed-%d", *seed))
	}
	ctrllog.SetLogger(logr.Discard())
	env, bin, err := startEnvAndSyncer(ctx, *out, *nodes, *tenants)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	logs, err := os.MkdirTemp("", "vc-syncer-chaos-")
	if err != nil {
		return err
	}
	logf("syncer logs in %s", logs)
	h, err := chaos.Start(ctx, env, bin, chaos.Options{Replicas: *replicas, Out: logs, OpsPerSecond: *rate, SettleTimeout: *settle, Logf: logf})
	if err != nil {
		return err
	}
	defer h.Stop()
	res, err := h.Soak(ctx, *seed, faults, filepath.Join(*out, "faults.jsonl"))
	if err != nil {
		return err
	}
	r := chaosResult{Date: time.Now().UTC().Format(time.RFC3339), Command: "go run ./test/bench chaos " + strings.Join(args, " "),
		Seed: *seed, Replay: *replay, Minutes: *minutes, Tenants: *tenants, Replicas: *replicas, Result: res}
	if err := writeResultJSON(*out, r); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "result.md"), []byte(chaosMarkdown(r)), 0o644); err != nil {
		return err
	}
	logf("results in %s", *out)
	if len(res.Violations) > 0 {
		log, _ := os.ReadFile(res.FaultLog)
		fmt.Fprintf(os.Stderr, "chaos seed %d: %d invariant violations\n", *seed, len(res.Violations))
		for _, v := range res.Violations {
			fmt.Fprintln(os.Stderr, "  "+v.String())
		}
		fmt.Fprintf(os.Stderr, "fault log %s (rerun: go run ./test/bench chaos --replay %s):\n%s", res.FaultLog, res.FaultLog, log)
		return fmt.Errorf("seed %d: %d invariant violations", *seed, len(res.Violations))
	}
	return nil
}

func chaosMarkdown(r chaosResult) string {
	var kinds []string
	for _, k := range chaos.AllKinds {
		if n := r.Faults[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
	}
	total := 0
	for _, n := range r.Faults {
		total += n
	}
	md := fmt.Sprintf("Chaos soak, seed %d: %d tenants, %d vc-syncer replicas, %.1f minutes of faults.\n\n    %s\n\n", r.Seed, r.Tenants, r.Replicas, r.FaultPhaseSecs/60, r.Command)
	md += "| metric | value |\n|---|---|\n"
	md += fmt.Sprintf("| faults injected | %d (%s) |\n", total, strings.Join(kinds, ", "))
	md += fmt.Sprintf("| faults that found nothing to act on | %d |\n", r.FaultErrors)
	md += fmt.Sprintf("| load | %s |\n", r.Load)
	md += fmt.Sprintf("| continuous checks | %d |\n", r.ContinuousChecks)
	md += fmt.Sprintf("| settled within the bound | %t |\n", r.Settled)
	md += fmt.Sprintf("| tenant objects checked | %d |\n", r.ObjectsChecked)
	md += fmt.Sprintf("| settle per tenant object p99 / max (s) | %.1f / %.1f |\n", r.SettleSecondsP99, r.SettleSecondsMax)
	md += fmt.Sprintf("| settle of every invariant, all objects (s) | %.1f |\n", r.SettleSeconds)
	if r.GoroutinesBefore > 0 || r.GoroutinesAfter > 0 {
		md += fmt.Sprintf("| goroutines before the faults / after the settle (sum over the replicas) | %d / %d |\n", r.GoroutinesBefore, r.GoroutinesAfter)
		md += fmt.Sprintf("| live heap before / after, after a forced GC (MiB, sum over the replicas) | %.1f / %.1f |\n", float64(r.HeapBytesBefore)/(1<<20), float64(r.HeapBytesAfter)/(1<<20))
	}
	md += fmt.Sprintf("| invariant violations | %d |\n", len(r.Violations))
	if len(r.Violations) > 0 {
		by := map[string]int{}
		for _, v := range r.Violations {
			by[v.Invariant]++
		}
		var names []string
		for k := range by {
			names = append(names, k)
		}
		sort.Strings(names)
		md += "\nViolations by invariant:\n\n"
		for _, k := range names {
			md += fmt.Sprintf("- %s: %d\n", k, by[k])
		}
		md += "\nFirst violations:\n\n"
		for i, v := range r.Violations {
			if i == 20 {
				break
			}
			md += "- " + v.String() + "\n"
		}
	}
	return md
}
