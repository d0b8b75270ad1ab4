package itest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// ModulePath is the Go module of this repository.
const ModulePath = "github.com/vcsyncer/syncer"

// RepoRoot returns the repository root: the nearest directory above the working directory
// whose go.mod declares ModulePath. It fails the test when there is none.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(ModulePath) + `\s*$`)
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && re.Match(data) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of module %s above the working directory", ModulePath)
		}
		dir = parent
	}
}

// BuildSyncer builds ./cmd/vc-syncer of the repository into a temporary directory (removed
// after the test) and returns the binary's path. It fails the test when the build fails or
// takes more than 10 minutes.
func BuildSyncer(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vc-syncer")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/vc-syncer")
	cmd.Dir = RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("failed to build vc-syncer: %v\n%s", err, out)
	}
	t.Logf("built %s in %s", bin, time.Since(start).Round(100*time.Millisecond))
	return bin
}

// BuildSyncerVersion builds ./cmd/vc-syncer of the repository's working tree like BuildSyncer,
// but as another build: without VCS stamping and with pkg/version.Version set to version, so
// its executable differs from BuildSyncer's (versions that identified checkpoints by their
// build treated it as other code).
func BuildSyncerVersion(t testing.TB, version string) string {
	t.Helper()
	return buildSyncerIn(t, RepoRoot(t), "-buildvcs=false", "-ldflags", "-X "+ModulePath+"/pkg/version.Version="+version)
}

// BuildSyncerAt builds ./cmd/vc-syncer as of commit (a git worktree of the repository in a
// temporary directory, removed after the test) and returns the binary's path.
func BuildSyncerAt(t testing.TB, commit string) string {
	t.Helper()
	root := RepoRoot(t)
	dir := filepath.Join(t.TempDir(), "src")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("worktree", "add", "--detach", dir, commit)
	t.Cleanup(func() {
		cmd := exec.Command("git", "worktree", "remove", "--force", dir)
		cmd.Dir = root
		_ = cmd.Run()
	})
	// -trimpath: the packages the commit shares with the working tree come from the build
	// cache (without it, every package of the worktree's directory is compiled again).
	return buildSyncerIn(t, dir, "-trimpath")
}

func buildSyncerIn(t testing.TB, dir string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vc-syncer")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build", "-o", bin}, flags...), "./cmd/vc-syncer")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("failed to build vc-syncer in %s: %v\n%s", dir, err, out)
	}
	t.Logf("built %s from %s in %s", bin, dir, time.Since(start).Round(100*time.Millisecond))
	return bin
}

// Unreachable returns kubeconfig kc with every cluster's server set to https://127.0.0.1:1, a
// valid address where nothing listens (a tenant that is down).
func Unreachable(t testing.TB, kc []byte) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = "https://127.0.0.1:1"
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ArtifactsDir is where logs of a failed test are kept: $VCSYNCER_TEST_ARTIFACTS/<test>
// (default $TMPDIR/vc-syncer-test-logs/<test>), as framework.StartT does for component logs.
func ArtifactsDir(t testing.TB) string {
	base := os.Getenv("VCSYNCER_TEST_ARTIFACTS")
	if base == "" {
		base = filepath.Join(os.TempDir(), "vc-syncer-test-logs")
	}
	return filepath.Join(base, regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(t.Name(), "_"))
}

// Tail returns the last n lines of the file at path (its read error if it cannot be read), for
// failure messages (localcluster.LogTail).
func Tail(path string, n int) string { return localcluster.LogTail(path, n) }

// EarlierSyncer builds the earlier syncer of an upgrade test and returns its path: by
// default the repository as of the first commit with the working tree's CheckpointSchema
// (pkg/syncer/checkpoint.go), built from a git worktree (BuildSyncerAt); $VCSYNCER_UPGRADE_FROM
// names another commit. When the first commit with the schema is HEAD itself (or git cannot
// tell), it is the working tree built as another executable (BuildSyncerVersion).
func EarlierSyncer(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	commit := os.Getenv("VCSYNCER_UPGRADE_FROM")
	if commit == "" {
		var err error
		if commit, err = FirstCommitOfSchema(root); err != nil {
			t.Log(err) // git cannot tell: the fallback below
		}
	}
	if commit == "" {
		t.Log("upgrading from the working tree built as another executable (no commit with the running checkpoint schema before HEAD)")
		return BuildSyncerVersion(t, "v0.0.0-upgrade-from")
	}
	t.Logf("upgrading from commit %s", commit)
	return BuildSyncerAt(t, commit)
}

// FirstCommitOfSchema returns the first commit whose pkg/syncer/checkpoint.go (under the
// repository root) declares the working tree's CheckpointSchema: the oldest build whose
// checkpoints HEAD reads as its own. It returns "" when that commit is HEAD itself, and an
// error when the file or its declaration is missing or git fails.
func FirstCommitOfSchema(root string) (string, error) {
	src, err := os.ReadFile(filepath.Join(root, "pkg", "syncer", "checkpoint.go"))
	if err != nil {
		return "", err
	}
	decl := regexp.MustCompile(`(?m)^const CheckpointSchema = \d+$`).Find(src)
	if decl == nil {
		return "", errors.New("pkg/syncer/checkpoint.go declares no CheckpointSchema")
	}
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	log, err := git("log", "--reverse", "--format=%H", "-S"+string(decl), "--", "pkg/syncer/checkpoint.go")
	if err != nil {
		return "", err
	}
	head, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	if first, _, _ := strings.Cut(log, "\n"); first != head {
		return first, nil
	}
	return "", nil
}
