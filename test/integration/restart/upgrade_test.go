package restart_test

import (
	"bytes"
	"crypto/sha256"
	"os"
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
	from := itest.EarlierSyncer(t)
	to := itest.BuildSyncer(t)
	if sameFile(t, from, to) {
		t.Fatal("the earlier build and the build under test are the same executable: not an upgrade")
	}
	testResumeFrom(t, nil, "watch", from, to)
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
