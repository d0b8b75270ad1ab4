package app

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// The README's table of `vc-syncer run` flags lists every flag of the command (its own flags;
// the controller-runtime zap flags share one row) with the default the command has.
func TestREADMEFlagTableMatchesRun(t *testing.T) {
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "### Flags of `vc-syncer run`")
	if !ok {
		t.Fatal("README has no \"Flags of `vc-syncer run`\" section")
	}
	table, _, _ = strings.Cut(table, "\n\n`")
	row := regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)`[^|]*\\| ([^|]*) \\|")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		documented[m[1]] = strings.TrimSpace(m[2])
	}
	run := newRunCommand()
	run.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, "zap-") || f.Name == "kubeconfig" || f.Hidden {
			return
		}
		doc, ok := documented[f.Name]
		if !ok {
			t.Errorf("flag --%s (default %q) is not in the README's table", f.Name, f.DefValue)
			return
		}
		def := strings.Trim(strings.Fields(doc + " x")[0], "`")
		switch {
		case f.DefValue == "" || f.DefValue == "[]":
			// Documented in words ("none", "off", where it comes from).
		case strings.HasPrefix(doc, "`$") || strings.HasPrefix(doc, "`json`"):
			// Computed defaults (environment), described in words.
		case sameDuration(def, f.DefValue):
		case def != f.DefValue:
			t.Errorf("README gives --%s the default %q; the command's is %q", f.Name, doc, f.DefValue)
		}
	})
}

// sameDuration reports whether a and b parse as the same time.Duration ("60s" and "1m0s").
func sameDuration(a, b string) bool {
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da == db
}
