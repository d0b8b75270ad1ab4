package restart_test

import (
	"os/exec"
	"strings"
	"testing"
)

// supportsCheckpoints reports whether `vc-syncer run --help` lists --checkpoint-store.
func supportsCheckpoints(t *testing.T, bin string) bool {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), bin, "run", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("vc-syncer run --help: %v\n%s", err, out)
	}
	return strings.Contains(string(out), "--checkpoint-store")
}
