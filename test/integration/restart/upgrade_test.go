package restart_test

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestUpgradeResumes is TestResumeWithinWatchWindow across an upgrade: the syncer that writes
// the checkpoint is another build than the one that resumes from it (on the same control
// planes), and the resume still does no LIST of any synced kind, reconciles only what changed
// while it was down and discards no checkpoint: the checkpoint's schema decides, not the build.
//
// The earlier build is, by default, the repository as of the first commit with the running
// CheckpointSchema (pkg/syncer/checkpoint.go), built from a git worktree; VCSYNCER_UPGRADE_FROM
// names another commit. Commits before checkpoint schemas identified checkpoints by their build,
// so no build of theirs can be resumed from; when the first commit with the schema is the one
// under test (or git is unavailable), the earlier build is the same source built as another
// executable (no VCS stamp, another pkg/version.Version), which those versions also treated as
// other code.
func TestUpgradeResumes(t *testing.T) {
	from := upgradeFrom(t)
	to := itest.BuildSyncer(t)
	if sameFile(t, from, to) {
		t.Fatal("the earlier build and the build under test are the same executable: not an upgrade")
	}
	testResumeFrom(t, nil, "watch", from, to)
}

// upgradeFrom builds the earlier syncer of TestUpgradeResumes and returns its path.
func upgradeFrom(t *testing.T) string {
	t.Helper()
	root := itest.RepoRoot(t)
	commit := os.Getenv("VCSYNCER_UPGRADE_FROM")
	if commit == "" {
		commit = firstCommitOfSchema(t, root)
	}
	if commit == "" {
		t.Log("upgrading from the working tree built as another executable (no commit with the running checkpoint schema before HEAD)")
		return itest.BuildSyncerVersion(t, "v0.0.0-upgrade-from")
	}
	t.Logf("upgrading from commit %s", commit)
	return itest.BuildSyncerAt(t, commit)
}

// firstCommitOfSchema returns the first commit whose pkg/syncer/checkpoint.go declares the
// CheckpointSchema of the working tree, or "" when it is HEAD itself or git cannot tell.
func firstCommitOfSchema(t *testing.T, root string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "pkg", "syncer", "checkpoint.go"))
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^const CheckpointSchema = \d+$`).Find(src)
	if decl == nil {
		t.Fatal("pkg/syncer/checkpoint.go declares no CheckpointSchema")
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Logf("git %s: %v", strings.Join(args, " "), err)
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	first, _, _ := strings.Cut(git("log", "--reverse", "--format=%H", "-S"+string(decl), "--", "pkg/syncer/checkpoint.go"), "\n")
	if first == "" || first == git("rev-parse", "HEAD") {
		return ""
	}
	return first
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	sum := func(p string) []byte {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(data)
		return s[:]
	}
	return bytes.Equal(sum(a), sum(b))
}
