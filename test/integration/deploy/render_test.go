package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

const (
	// releaseName and releaseNamespace make `helm template` produce the names config/ uses.
	releaseName      = "vc-syncer"
	releaseNamespace = "vc-syncer-system"
	chartDir         = "../../../charts/vc-syncer"
	configDir        = "../../../config"
	repoRootDir      = "../../.."
)

// allOptIn are every --opt-in-kinds value; the chart grants their permissions only when listed.
var allOptIn = []string{"Ingress", "NetworkPolicy", "PodDisruptionBudget"}

// tool returns the path of a binary that `make tools` (hack/build-tools.sh) puts in the tools
// cache, failing the test with the command to run when it is missing.
func tool(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(localcluster.ToolsDir(), "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing from the tools cache (%v); run `make tools`", name, err)
	}
	return p
}

// run runs bin with args and returns its standard output; on failure it returns an error that
// includes standard error.
func run(bin string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.Bytes(), nil
}

// helmTemplate renders the chart as release vc-syncer in namespace vc-syncer-system with the
// given --set values (and the CRDs when includeCRDs).
func helmTemplate(t *testing.T, includeCRDs bool, set ...string) []byte {
	t.Helper()
	args := []string{"template", releaseName, chartDir, "--namespace", releaseNamespace}
	if includeCRDs {
		args = append(args, "--include-crds")
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := run(tool(t, "helm"), nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// kustomize renders config/default with the tools' kubectl (its built-in kustomize).
func kustomize(t *testing.T) []byte {
	t.Helper()
	out, err := run(tool(t, "kubectl"), nil, "kustomize", filepath.Join(configDir, "default"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// kustomizeWith renders an overlay of config/default with the given components of config/ (such
// as "kubelet-api"), as a user's overlay would use them.
func kustomizeWith(t *testing.T, components ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	cfg, err := filepath.Abs(configDir)
	if err != nil {
		t.Fatal(err)
	}
	// kustomize refuses absolute paths to other kustomizations.
	rel, err := filepath.Rel(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [" + filepath.Join(rel, "default") + "]\ncomponents:\n"
	for _, c := range components {
		k += "- " + filepath.Join(rel, c) + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := run(tool(t, "kubectl"), nil, "kustomize", dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// parse splits a multi-document YAML stream into objects keyed "Kind/namespace/name".
func parse(t *testing.T, data []byte) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("invalid YAML: %v", err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		k := key(u)
		if _, dup := out[k]; dup {
			t.Errorf("%s appears twice", k)
		}
		out[k] = u
	}
}

func key(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// permissions expands RBAC rules into sorted "apiGroup resource verb" lines, so two rule lists
// that grant the same are equal whatever their order or grouping.
func permissions(t *testing.T, u *unstructured.Unstructured) []string {
	t.Helper()
	rules, _, err := unstructured.NestedSlice(u.Object, "rules")
	if err != nil {
		t.Fatalf("%s: %v", key(u), err)
	}
	var out []string
	for _, r := range rules {
		rule := r.(map[string]any)
		strs := func(f string) []string {
			s, _, _ := unstructured.NestedStringSlice(rule, f)
			return s
		}
		if len(strs("resourceNames")) > 0 {
			t.Fatalf("%s: resourceNames are not compared; extend permissions()", key(u))
		}
		for _, url := range strs("nonResourceURLs") {
			for _, v := range strs("verbs") {
				if strings.Contains(url, "*") || v == "*" {
					t.Errorf("%s grants a wildcard (%q %q): least privilege names every URL and verb", key(u), url, v)
				}
				out = append(out, "url "+url+" "+v)
			}
		}
		for _, g := range strs("apiGroups") {
			for _, res := range strs("resources") {
				for _, v := range strs("verbs") {
					if g == "*" || res == "*" || v == "*" {
						t.Errorf("%s grants a wildcard (%q %q %q): least privilege names every group, resource and verb", key(u), g, res, v)
					}
					out = append(out, g+" "+res+" "+v)
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// normalized returns the object without the metadata that only Helm adds (labels,
// annotations), and RBAC rules as permission lines.
func normalized(t *testing.T, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "labels")
	unstructured.RemoveNestedField(c.Object, "metadata", "annotations")
	if c.GetKind() == "ClusterRole" || c.GetKind() == "Role" {
		c.Object["rules"] = permissions(t, u)
	}
	return c.Object
}

// TestVerifyChartLint runs `helm lint --strict` on the default values and with every optional
// part on.
func TestVerifyChartLint(t *testing.T) {
	helm := tool(t, "helm")
	for name, set := range map[string][]string{
		"defaults": nil,
		"everything on": {"serviceMonitor.enabled=true", "optInKinds={" + strings.Join(allOptIn, ",") + "}",
			"checkpoint.store=none", "extraArgs={--tenant-dns=false}", "metrics.certSecret=metrics-tls",
			"metrics.readers[0].name=prometheus", "metrics.readers[0].namespace=monitoring",
			"networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.name=monitoring",
			"kubeletAPI.enabled=true", "replicaCount=1", "kubeletAPI.advertiseAddress=10.96.0.50", "kubeletAPI.tlsSecretName=kubelet-tls",
			"kubeletAPI.allowedFrom[0].namespaceSelector.matchLabels.name=tenants"},
		"everything off": {"metrics.secure=false", "admissionPolicy.enabled=false", "networkPolicy.enabled=false",
			"podSecurityEnforce=", "serviceMonitor.enabled=true"},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"lint", chartDir, "--strict", "--namespace", releaseNamespace}
			for _, s := range set {
				args = append(args, "--set", s)
			}
			out, err := run(helm, nil, args...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), "0 chart(s) failed") {
				t.Fatalf("helm lint:\n%s", out)
			}
		})
	}
	t.Run("a kind that cannot be turned off is refused", func(t *testing.T) {
		_, err := run(helm, nil, "template", releaseName, chartDir, "--set", "disabledKinds={Pod}")
		if err == nil || !strings.Contains(err.Error(), `kind "Pod" cannot be turned off`) {
			t.Fatalf("helm template with disabledKinds=Pod: err = %v, want a refusal", err)
		}
	})
	t.Run("unknown opt-in kind is refused", func(t *testing.T) {
		_, err := run(helm, nil, "template", releaseName, chartDir, "--set", "optInKinds={Ingress,Deployment}")
		if err == nil || !strings.Contains(err.Error(), `unknown kind "Deployment"`) {
			t.Fatalf("helm template with optInKinds=Deployment: err = %v, want unknown kind", err)
		}
	})
}

// TestVerifyChartMatchesKustomize fails when `helm template` (default values, release
// vc-syncer in vc-syncer-system, CRDs included) and `kubectl kustomize config/default` differ in
// anything but Helm's labels: the RBAC permissions, the CRD, the Deployment (args, probes,
// security context, resources), the Service and the bindings. The same for the opt-in
// component config/kubelet-api and the chart's kubeletAPI values it stands for.
func TestVerifyChartMatchesKustomize(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		compareRenders(t, parse(t, helmTemplate(t, true)), parse(t, kustomize(t)))
	})
	t.Run("kubelet-api component", func(t *testing.T) {
		chart := parse(t, helmTemplate(t, true, "kubeletAPI.enabled=true", "replicaCount=1",
			"kubeletAPI.advertiseAddress=vc-syncer-kubelet.vc-syncer-system.svc", "kubeletAPI.tlsSecretName=vc-syncer-kubelet-tls"))
		if chart["Service/"+releaseNamespace+"/"+releaseName+"-kubelet"] == nil {
			t.Fatal("the chart renders no kubelet Service")
		}
		compareRenders(t, chart, parse(t, kustomizeWith(t, "kubelet-api")))
	})
}

// compareRenders fails when the chart's and config/'s objects differ in anything but Helm's
// labels and the objects only one of them has by design.
func compareRenders(t *testing.T, chart, kust map[string]*unstructured.Unstructured) {
	t.Helper()
	// Only in one of them: the Grafana dashboard is Helm-only; Helm creates the release
	// namespace itself (helm install --create-namespace).
	chartOnly := map[string]bool{"ConfigMap/" + releaseNamespace + "/" + releaseName + "-dashboard": true}
	kustOnly := map[string]bool{"Namespace//" + releaseNamespace: true}
	for k := range chart {
		if _, ok := kust[k]; !ok && !chartOnly[k] {
			t.Errorf("%s is in the chart but not in config/", k)
		}
	}
	for k := range kust {
		if _, ok := chart[k]; !ok && !kustOnly[k] {
			t.Errorf("%s is in config/ but not in the chart", k)
		}
	}
	for _, k := range []string{"ClusterRole//" + releaseName, "Role/" + releaseNamespace + "/" + releaseName,
		"Deployment/" + releaseNamespace + "/" + releaseName, "CustomResourceDefinition//tenants.tenancy.vcsyncer.io"} {
		if chart[k] == nil {
			t.Errorf("the chart renders no %s", k)
		}
	}
	for k, c := range chart {
		ku, ok := kust[k]
		if !ok {
			continue
		}
		if d := cmp.Diff(normalized(t, ku), normalized(t, c)); d != "" {
			t.Errorf("%s differs between config/ (-) and the chart (+):\n%s", k, d)
		}
	}
}

// TestVerifyCRDSingleSource checks that the chart's crds/ holds exactly the files of
// config/crd/bases (the source of truth, also embedded in the binary by package config).
func TestVerifyCRDSingleSource(t *testing.T) {
	bases, err := filepath.Glob(filepath.Join(configDir, "crd", "bases", "*.yaml"))
	if err != nil || len(bases) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	copies, _ := filepath.Glob(filepath.Join(chartDir, "crds", "*.yaml"))
	if len(copies) != len(bases) {
		t.Errorf("charts/vc-syncer/crds has %d files, config/crd/bases %d", len(copies), len(bases))
	}
	for _, b := range bases {
		want, _ := os.ReadFile(b)
		got, err := os.ReadFile(filepath.Join(chartDir, "crds", filepath.Base(b)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("charts/vc-syncer/crds/%s is not a copy of %s; run `make chart-crds`", filepath.Base(b), b)
		}
	}
}

// checkArgs parses a container's args with the real `vc-syncer run` flag set and validates the
// resulting options, as the binary would at start.
func checkArgs(t *testing.T, args []string) *options.Options {
	t.Helper()
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("args %q do not start with the run command", args)
	}
	o := options.NewOptions()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatalf("vc-syncer run would refuse %q: %v", args, err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("vc-syncer run would refuse %q: %v", args, err)
	}
	return o
}

// containerArgs returns the args of the Deployment's only container.
func containerArgs(t *testing.T, objs map[string]*unstructured.Unstructured) []string {
	t.Helper()
	args, _, _ := unstructured.NestedStringSlice(container(t, objs), "args")
	return args
}

// TestVerifyChartFlags checks that the Deployment's args are flags `vc-syncer run` accepts,
// that values reach the args they name, and that the RBAC follows --opt-in-kinds.
func TestVerifyChartFlags(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		objs := parse(t, helmTemplate(t, false))
		args := containerArgs(t, objs)
		o := checkArgs(t, args)
		if !o.LeaderElect || o.InstallCRDs || o.KubeconfigNamespace != releaseNamespace || !o.FairQueuing ||
			o.DownwardWorkers != 20 || o.UpwardWorkers != 100 || len(o.OptInKinds) != 0 || !o.MetricsSecure || o.MetricsCertDir != "" {
			t.Errorf("default options from the chart: %+v", o)
		}
		for _, want := range []string{"--checkpoint-store=secret:" + releaseNamespace + "/vc-syncer-checkpoint",
			"--checkpoint-interval=30s", "--checkpoint-max-items=15000", "--zap-encoder=json"} {
			if !slices.Contains(args, want) {
				t.Errorf("args %q lack %s", args, want)
			}
		}
	})
	t.Run("config/ args are valid", func(t *testing.T) {
		checkArgs(t, containerArgs(t, parse(t, kustomize(t))))
	})
	t.Run("values reach the flags and the RBAC", func(t *testing.T) {
		objs := parse(t, helmTemplate(t, false, "downwardWorkers=7", "upwardWorkers=9", "fairQueuing=false",
			"remediationInterval=0s", "optInKinds={"+strings.Join(allOptIn, ",")+"}", "leaderElect=false",
			"checkpoint.store=none", "checkpoint.interval=1m", "checkpoint.maxItems=10"))
		args := containerArgs(t, objs)
		o := checkArgs(t, args)
		if o.DownwardWorkers != 7 || o.UpwardWorkers != 9 || o.FairQueuing || o.RemediationInterval != 0 ||
			o.LeaderElect || !slices.Equal(o.OptInKinds, allOptIn) {
			t.Errorf("options from the chart: %+v", o)
		}
		for _, want := range []string{"--checkpoint-store=none", "--checkpoint-interval=1m", "--checkpoint-max-items=10"} {
			if !slices.Contains(args, want) {
				t.Errorf("args %q lack %s", args, want)
			}
		}
		perms := permissions(t, objs["ClusterRole//"+releaseName])
		base := permissions(t, parse(t, helmTemplate(t, false))["ClusterRole//"+releaseName])
		var added []string
		for _, p := range perms {
			if !slices.Contains(base, p) {
				added = append(added, p)
			}
		}
		var want []string
		for _, res := range []string{"networking.k8s.io ingresses", "networking.k8s.io networkpolicies", "policy poddisruptionbudgets"} {
			for _, v := range []string{"create", "delete", "get", "list", "update", "watch"} {
				want = append(want, res+" "+v)
			}
		}
		sort.Strings(want)
		if d := cmp.Diff(want, added); d != "" {
			t.Errorf("permissions the opt-in kinds add (-want +got):\n%s", d)
		}
	})
	t.Run("disabledKinds=Event turns Event sync and its RBAC off", func(t *testing.T) {
		objs := parse(t, helmTemplate(t, false, "disabledKinds={Event}"))
		if o := checkArgs(t, containerArgs(t, objs)); !slices.Equal(o.DisabledKinds, []string{"Event"}) {
			t.Errorf("--disabled-kinds from the chart: %v", o.DisabledKinds)
		}
		base := permissions(t, parse(t, helmTemplate(t, false))["ClusterRole//"+releaseName])
		perms := permissions(t, objs["ClusterRole//"+releaseName])
		for _, p := range []string{" events list", " events watch"} {
			if !slices.Contains(base, p) {
				t.Errorf("default ClusterRole lacks %q (Event is synced by default)", p)
			}
			if slices.Contains(perms, p) {
				t.Errorf("ClusterRole with disabledKinds={Event} still has %q", p)
			}
		}
	})
}

// TestVerifyDashboardConfigMap checks that the dashboard ConfigMap carries the Grafana sidecar
// label and exactly the JSON of charts/vc-syncer/dashboards/vc-syncer.json.
func TestVerifyDashboardConfigMap(t *testing.T) {
	cm := parse(t, helmTemplate(t, false))["ConfigMap/"+releaseNamespace+"/"+releaseName+"-dashboard"]
	if cm == nil {
		t.Fatal("no dashboard ConfigMap rendered")
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("labels %v lack grafana_dashboard=1", cm.GetLabels())
	}
	got, _, _ := unstructured.NestedString(cm.Object, "data", "vc-syncer.json")
	want, err := os.ReadFile(filepath.Join(chartDir, "dashboards", "vc-syncer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
		t.Errorf("ConfigMap data differs from dashboards/vc-syncer.json")
	}
	var v map[string]any
	if err := yaml.Unmarshal([]byte(got), &v); err != nil || v["title"] == nil {
		t.Errorf("dashboard is not a JSON object with a title: %v", err)
	}
	if parse(t, helmTemplate(t, false, "dashboard.enabled=false"))["ConfigMap/"+releaseNamespace+"/"+releaseName+"-dashboard"] != nil {
		t.Error("dashboard.enabled=false still renders the ConfigMap")
	}
}
