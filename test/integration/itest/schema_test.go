package itest

import (
	"os/exec"
	"strings"
	"testing"
)

// FirstCommitOfSchema names a commit of this repository that is not HEAD and whose
// pkg/syncer/checkpoint.go declares the working tree's CheckpointSchema (or "" when HEAD is the
// first such commit).
func TestFirstCommitOfSchema(t *testing.T) {
	root := RepoRoot(t)
	commit, err := FirstCommitOfSchema(root)
	if err != nil {
		t.Skipf("git cannot tell here (%v): the upgrade tests fall back to another build", err)
	}
	if commit == "" {
		return
	}
	out, err := exec.Command("git", "-C", root, "show", commit+":pkg/syncer/checkpoint.go").Output()
	if err != nil {
		t.Fatalf("commit %s has no pkg/syncer/checkpoint.go: %v", commit, err)
	}
	if !strings.Contains(string(out), "const CheckpointSchema = ") {
		t.Errorf("commit %s declares no CheckpointSchema", commit)
	}
	head, _ := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if strings.TrimSpace(string(head)) == commit {
		t.Errorf("FirstCommitOfSchema returned HEAD %s, want an earlier commit or \"\"", commit)
	}
}
