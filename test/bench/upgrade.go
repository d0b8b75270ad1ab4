package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/vcsyncer/syncer/test/integration/itest"
)

// upgradeVariant is what one restart of the upgrade experiment measured: restartResult plus
// the keys other tools read (result.json listsPerTenant, reconciles, secondsToSynced).
type upgradeVariant struct {
	restartResult
	// From and To name the builds: the previous process's and the new one's ("HEAD" or the
	// earlier commit).
	From string `json:"from"`
	To   string `json:"to"`
	// ListsPerTenant: LIST requests the tenant apiservers served, from just before the stop
	// to the end of the quiet period, divided by the tenants.
	ListsPerTenant float64 `json:"listsPerTenant"`
	// SecondsToSynced: new process start → every tenant's queues empty for --quiet (the
	// restart experiment's queues-empty time).
	SecondsToSynced float64 `json:"secondsToSynced"`
}

// runUpgrade measures an upgrade of vc-syncer from an earlier commit to the working tree's
// build, beside a same-version restart, a rollback and a cold start, in one run against the
// same control planes: the earlier build syncs the tenants and writes checkpoints, then is
// replaced by HEAD (upgrade), HEAD by HEAD (same-version restart), HEAD by the earlier build
// (rollback: HEAD's checkpoint read by the earlier code), and the earlier build by HEAD
// without a checkpoint (cold). Each stop is graceful (SIGTERM: the final checkpoint written).
func runUpgrade(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("upgrade", flag.ExitOnError)
	var c restartConfig
	var from string
	fs.IntVar(&c.tenants, "tenants", 30, "tenants")
	fs.IntVar(&c.objects, "objects", 1000, "objects per tenant (ConfigMaps and Pods, see --pod-share)")
	fs.Float64Var(&c.podShare, "pod-share", 0.1, "share of Pods among the objects")
	fs.IntVar(&c.nodes, "nodes", 30, "kwok Nodes in the super cluster (110 Pods each)")
	fs.DurationVar(&c.interval, "checkpoint-interval", 5*time.Second, "--checkpoint-interval of the syncer")
	fs.DurationVar(&c.down, "down", 2*time.Second, "time the syncer stays down between stop and start (a probe Pod is created meanwhile)")
	fs.DurationVar(&c.quiet, "quiet", 5*time.Second, "the queues must stay empty this long to count as drained")
	fs.DurationVar(&c.timeout, "timeout", 15*time.Minute, "give up after this long per phase")
	fs.StringVar(&from, "from", "", "the earlier commit to upgrade from; empty: the first commit with the working tree's CheckpointSchema")
	fs.StringVar(&c.out, "out", "bench-out/upgrade", "directory for result.json, result.md and the syncer logs")
	_ = fs.Parse(args)
	ctrllog.SetLogger(logr.Discard())

	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if from == "" {
		if from, err = itest.FirstCommitOfSchema(root); err != nil {
			return err
		}
		if from == "" {
			return errors.New("no commit before HEAD has the working tree's CheckpointSchema: pass --from")
		}
	}
	fromBin, cleanup, err := buildSyncerAt(ctx, root, from)
	if err != nil {
		return err
	}
	defer cleanup()
	short := from
	if len(short) > 12 {
		short = short[:12]
	}
	env, head, err := startEnvAndSyncer(ctx, c.out, c.nodes, c.tenants)
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	ckptDir, err := os.MkdirTemp("", "vc-syncer-bench-ckpt")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ckptDir)
	withCkpt := []string{"--checkpoint-store", "file:" + filepath.Join(ckptDir, "ckpt"), "--checkpoint-interval", c.interval.String()}

	r := &restarter{c: c, env: env, bin: fromBin}
	logf("initial sync by the earlier build (%s)", short)
	err = r.initialSync(ctx, "initial-"+short, withCkpt)
	defer r.stop()
	if err != nil {
		return err
	}
	steps := []struct {
		variant, from, to string
		bin               string
		args              []string
	}{
		{"upgrade", short, "HEAD", head, withCkpt},
		{"same-version restart", "HEAD", "HEAD", head, withCkpt},
		{"rollback", "HEAD", short, fromBin, withCkpt},
		{"cold", short, "HEAD", head, []string{"--checkpoint-store", "none"}},
	}
	var results []upgradeVariant
	for _, s := range steps {
		r.bin = s.bin
		res, err := r.measure(ctx, s.variant, "SIGTERM", s.args)
		if err != nil {
			return err
		}
		v := upgradeVariant{restartResult: res, From: s.from, To: s.to, SecondsToSynced: res.EmptySeconds}
		for _, t := range env.Tenants {
			v.ListsPerTenant += res.ListsByServer[t.Name]
		}
		v.ListsPerTenant /= float64(len(env.Tenants))
		results = append(results, v)
	}
	return writeUpgradeResults(c, from, results)
}

// buildSyncerAt builds ./cmd/vc-syncer of commit in a temporary git worktree of root and
// returns the binary and a function that removes the worktree and binary.
func buildSyncerAt(ctx context.Context, root, commit string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "vc-syncer-bench-from")
	if err != nil {
		return "", nil, err
	}
	src := filepath.Join(dir, "src")
	cleanup := func() {
		cmd := exec.Command("git", "worktree", "remove", "--force", src)
		cmd.Dir = root
		_ = cmd.Run()
		_ = os.RemoveAll(dir)
	}
	add := exec.CommandContext(ctx, "git", "worktree", "add", "--detach", src, commit)
	add.Dir = root
	if out, err := add.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("git worktree add %s: %w\n%s", commit, err, out)
	}
	bin := filepath.Join(dir, "vc-syncer")
	logf("building vc-syncer at %s", commit)
	// -trimpath: packages the commit shares with the working tree come from the build cache.
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/vc-syncer")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build at %s: %w\n%s", commit, err, out)
	}
	return bin, cleanup, nil
}

func writeUpgradeResults(c restartConfig, from string, results []upgradeVariant) error {
	byName := map[string]upgradeVariant{}
	for _, r := range results {
		byName[r.Variant] = r
	}
	up, same := byName["upgrade"], byName["same-version restart"]
	if err := writeResultJSON(c.out, map[string]any{
		"date": time.Now().UTC().Format(time.RFC3339), "from": from, "tenants": c.tenants, "objectsPerTenant": c.objects,
		"podShare": c.podShare, "nodes": c.nodes, "checkpointInterval": c.interval.String(), "down": c.down.String(),
		"quiet": c.quiet.String(), "variants": results,
		// Against the targets: an upgrade lists nothing, reconciles what a same-version
		// restart does, and syncs within 1 s of it.
		"upgradeListsPerTenant":            up.ListsPerTenant,
		"upgradeSecondsOverSameVersion":    up.SecondsToSynced - same.SecondsToSynced,
		"upgradeReconcilesOverSameVersion": up.Reconciles - same.Reconciles,
	}); err != nil {
		return err
	}
	total := float64(c.tenants * c.objects)
	md := fmt.Sprintf("Upgrade of vc-syncer from commit %s to the working tree (HEAD), with %d tenants × %d objects (%.0f%% Pods, the rest ConfigMaps; %.0f objects in all), %d kwok Nodes. Every stop is graceful (SIGTERM, final checkpoint); the syncer is down %s, a probe Pod is created meanwhile; queues count as empty after %s at 0.\n\n",
		from, c.tenants, c.objects, 100*c.podShare, total, c.nodes, c.down, c.quiet)
	md += "| metric |"
	sep := "|---|"
	for _, r := range results {
		md += fmt.Sprintf(" %s (%s → %s) |", r.Variant, r.From, r.To)
		sep += "---|"
	}
	md += "\n" + sep + "\n"
	row := func(name, format string, get func(upgradeVariant) float64) {
		md += "| " + name + " |"
		for _, r := range results {
			md += " " + fmt.Sprintf(format, get(r)) + " |"
		}
		md += "\n"
	}
	row("LISTs per tenant (`listsPerTenant`)", "%.2f", func(r upgradeVariant) float64 { return r.ListsPerTenant })
	row("LISTs, all apiservers", "%.0f", func(r upgradeVariant) float64 { return r.Lists })
	row("reconciles (`reconciles`, queue adds)", "%.0f", func(r upgradeVariant) float64 { return r.Reconciles })
	row("process start → every tenant synced, queues empty (`secondsToSynced`, s)", "%.2f", func(r upgradeVariant) float64 { return r.SecondsToSynced })
	row("process start → /readyz (s)", "%.2f", func(r upgradeVariant) float64 { return r.ReadySeconds })
	row("Pod created while down: Running in tenant (s after start)", "%.2f", func(r upgradeVariant) float64 { return r.ProbeRunningSeconds })
	row("informer sources resumed by watch", "%.0f", func(r upgradeVariant) float64 { return r.ResumeModes["watch"] })
	row("informer sources listed (relist-diff + cold)", "%.0f", func(r upgradeVariant) float64 { return r.ResumeModes["relist-diff"] + r.ResumeModes["cold"] })
	row("checkpoints discarded", "%.0f", discarded)
	md += fmt.Sprintf("\nUpgrade − same-version restart: %+.2f s to synced, %+.0f reconciles, %.2f LISTs per tenant (targets: ≤ 1 s, only the objects changed while down, 0).\n",
		up.SecondsToSynced-same.SecondsToSynced, up.Reconciles-same.Reconciles, up.ListsPerTenant)
	return os.WriteFile(filepath.Join(c.out, "result.md"), []byte(md), 0o644)
}

// discarded returns the checkpoints r's process discarded (vcsyncer_checkpoint_discarded_total,
// every reason).
func discarded(r upgradeVariant) float64 {
	n := 0.0
	for k, v := range r.Checkpoint {
		if strings.HasPrefix(k, "vcsyncer_checkpoint_discarded_total{") {
			n += v
		}
	}
	return n
}
