package dashboard

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/vcsyncer/syncer/pkg/metrics"
)

// CheckpointMetrics are the checkpoint metric names (defined by pkg/checkpoint, not
// pkg/metrics); the dashboard's checkpoint row queries them.
var CheckpointMetrics = []string{
	"vcsyncer_checkpoint_duration_seconds", "vcsyncer_checkpoint_size_bytes", "vcsyncer_checkpoint_items",
	"vcsyncer_checkpoint_last_success_timestamp_seconds", "vcsyncer_checkpoint_skips_total",
	"vcsyncer_checkpoint_failures_total", "vcsyncer_source_resume_mode", "vcsyncer_checkpoint_lists_avoided_total",
}

func repoFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGeneratedFilesAreUpToDate(t *testing.T) {
	want, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	if got := repoFile(t, JSONPath); !bytes.Equal(got, want) {
		t.Errorf("%s is not what pkg/metrics/dashboard generates: run `make dashboard`", JSONPath)
	}
	if got := repoFile(t, ConfigMapPath); !bytes.Equal(got, ConfigMap(want)) {
		t.Errorf("%s is not what pkg/metrics/dashboard generates: run `make dashboard`", ConfigMapPath)
	}
}

// TestConfigMapHoldsTheChartJSON parses the sidecar ConfigMap as Kubernetes would and checks
// it carries the chart's dashboard JSON byte for byte, with the sidecar's label.
func TestConfigMapHoldsTheChartJSON(t *testing.T) {
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(repoFile(t, ConfigMapPath), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.APIVersion != "v1" || cm.Name == "" {
		t.Errorf("not a named v1 ConfigMap: %s/%s %q", cm.APIVersion, cm.Kind, cm.Name)
	}
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("labels = %v, want grafana_dashboard: \"1\"", cm.Labels)
	}
	if got, want := cm.Data[ConfigMapKey], string(repoFile(t, JSONPath)); got != want {
		t.Errorf("ConfigMap data %q differs from %s (%d vs %d bytes)", ConfigMapKey, JSONPath, len(got), len(want))
	}
}

// Model is the part of a Grafana dashboard JSON model the tests read.
type Model struct {
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name, Type string
			Query      any
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID      int    `json:"id"`
		Type    string `json:"type"`
		Title   string `json:"title"`
		GridPos struct{ H, W, X, Y int }
		Targets []struct {
			Expr  string `json:"expr"`
			RefID string `json:"refId"`
		} `json:"targets"`
	} `json:"panels"`
}

var metricRE = regexp.MustCompile(`\bvcsyncer_[a-z0-9_]+`)

func TestDashboardModel(t *testing.T) {
	var m Model
	if err := json.Unmarshal(repoFile(t, JSONPath), &m); err != nil {
		t.Fatal(err)
	}
	if m.UID != UID {
		t.Errorf("uid = %q", m.UID)
	}
	var vars []string
	for _, v := range m.Templating.List {
		vars = append(vars, v.Name)
	}
	if !slices.Contains(vars, "tenant") || !slices.Contains(vars, "datasource") {
		t.Errorf("variables = %v, want tenant and datasource", vars)
	}
	known := map[string]bool{}
	for _, n := range append(metrics.Names(), CheckpointMetrics...) {
		known[n] = true
	}
	ids := map[int]bool{}
	cells := map[[2]int]string{}
	panels := 0
	for _, p := range m.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.X+p.GridPos.W > 24 || p.GridPos.W <= 0 || p.GridPos.H <= 0 {
			t.Errorf("%q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
		}
		for x := p.GridPos.X; x < p.GridPos.X+p.GridPos.W; x++ {
			for y := p.GridPos.Y; y < p.GridPos.Y+p.GridPos.H; y++ {
				if other, ok := cells[[2]int{x, y}]; ok {
					t.Fatalf("%q overlaps %q at (%d,%d)", p.Title, other, x, y)
				}
				cells[[2]int{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		panels++
		if len(p.Targets) == 0 {
			t.Errorf("%q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			names := metricRE.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("%q: %s queries no vc-syncer metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				base := n
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(n, suf); ok && known[b] {
						base = b
					}
				}
				if !known[base] {
					t.Errorf("%q queries %s, which no collector defines", p.Title, n)
				}
			}
		}
	}
	if panels < 30 {
		t.Errorf("%d panels, want the full dashboard (at least 30)", panels)
	}
}
