package layering_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// floors is the package map of docs/architecture.md, lowest floor first. A package may import
// packages on its own floor or below; the longest matching path wins, so pkg/resources/<kind>
// sits above pkg/resources. Paths are relative to the module. The map lives in three places
// that must agree: this table, the table in docs/architecture.md and the floor sentence of the
// package's doc.go.
var floors = []struct {
	path  string
	floor int
}{
	// 0: leaves, no project imports.
	{"pkg/apis", 0}, {"pkg/conversion", 0}, {"pkg/fairqueue", 0}, {"pkg/version", 0},
	{"pkg/sharding", 0}, {"pkg/admission", 0}, {"pkg/podcache", 0}, {"pkg/eventcache", 0},
	{"pkg/checkpoint/source", 0}, {"pkg/checkpoint/store", 0}, {"pkg/checkpoint/trackingqueue", 0},
	{"pkg/localcluster", 0}, {"pkg/metrics/dashboard", 0}, {"config", 0},
	// 1: the tenant policy, metrics, the status page's types and the vNodes' kubelet API.
	{"pkg/policy", 1}, {"pkg/metrics", 1}, {"pkg/status", 1}, {"pkg/kubeletproxy", 1},
	// 2: tenant connections and checkpoints.
	{"pkg/tenant", 2}, {"pkg/checkpoint", 2},
	// 3: the kind interfaces and helpers.
	{"pkg/resources", 3},
	// 4: admission under the limits, the reconcile engine, remediation, the sync latency
	// measurement, and the kinds' shared test helpers.
	{"pkg/admit", 4}, {"pkg/reconcile", 4}, {"pkg/remediation", 4}, {"pkg/resources/restest", 4},
	{"pkg/latency", 4},
	// 5: virtual Nodes, and resuming from and writing checkpoints (which save the vNodes'
	// bookkeeping).
	{"pkg/vnode", 5}, {"pkg/resume", 5},
	// 6: one package per synced kind, the set of kinds a syncer runs, retries, and the shard
	// hand-over (over pkg/resume).
	{"pkg/resources/", 6}, {"pkg/resources/kinds", 6}, {"pkg/retry", 6}, {"pkg/handover", 6},
	// 7: orchestration.
	{"pkg/syncer", 7},
	// 8: the command.
	{"cmd", 8},
	// 9: tools, tests and benchmarks; nothing below imports them.
	{"hack", 9}, {"test", 9}, {"e2e", 9},
}

// floorOf returns the floor of a module-relative package path, and false when the path is not
// on the map.
func floorOf(rel string) (int, bool) {
	best, floor := -1, 0
	for _, f := range floors {
		match := rel == f.path || strings.HasPrefix(rel, strings.TrimSuffix(f.path, "/")+"/")
		if strings.HasSuffix(f.path, "/") {
			match = strings.HasPrefix(rel, f.path)
		}
		if match && len(f.path) > best {
			best, floor = len(f.path), f.floor
		}
	}
	return floor, best >= 0
}

type pkg struct {
	ImportPath   string
	Module       *struct{ Path string }
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// TestImportsGoDown lists every package of the module with `go list` and fails when a
// package's non-test imports reach a higher floor or a package is not on the map. Because
// test/..., e2e and hack sit on the top floor, the same rule keeps every product package from
// importing them. _test.go files are not checked: a test may import anything, tests included.
func TestImportsGoDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var violations []string
	n := 0
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		mod := p.Module.Path + "/"
		rel := strings.TrimPrefix(p.ImportPath, mod)
		from, ok := floorOf(rel)
		if !ok {
			violations = append(violations, rel+" is not on the package map"+whereToEdit)
			continue
		}
		n++
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			irel := strings.TrimPrefix(imp, mod)
			to, ok := floorOf(irel)
			if !ok {
				violations = append(violations, irel+" is not on the package map"+whereToEdit)
				continue
			}
			if to > from {
				violations = append(violations, rel+" (floor "+itoa(from)+") imports "+irel+" (floor "+itoa(to)+
					"): move the code down, or move a package to another floor"+whereToEdit)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list found only %d packages", n)
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Error(v)
	}
}

// whereToEdit ends a violation with the places a change of the map must touch.
const whereToEdit = " (the map is in test/layering/layering_test.go, docs/architecture.md and each package's doc.go)"

func itoa(i int) string { return string(rune('0' + i)) }

// TestFloorOf pins the longest-match rule the map relies on.
func TestFloorOf(t *testing.T) {
	for rel, want := range map[string]int{
		"pkg/resources":             3,
		"pkg/resources/pod":         6,
		"pkg/resources/restest":     4,
		"pkg/admit":                 4,
		"pkg/resume":                5,
		"pkg/handover":              6,
		"pkg/checkpoint":            2,
		"pkg/checkpoint/store":      0,
		"pkg/metrics/dashboard":     0,
		"cmd/vc-syncer/app/options": 8,
		"test/integration/itest":    9,
		"pkg/apis/tenancy/v1alpha1": 0,
	} {
		if got, ok := floorOf(rel); !ok || got != want {
			t.Errorf("floorOf(%q) = %d, %v; want %d", rel, got, ok, want)
		}
	}
	if _, ok := floorOf("pkg/newthing"); ok {
		t.Error("an unmapped package must not be on the map")
	}
}
