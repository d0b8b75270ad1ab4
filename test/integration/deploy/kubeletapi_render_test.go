package deploy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kubeletService is the key of the Service the chart renders for the vNodes' kubelet API.
const kubeletService = "Service/" + releaseNamespace + "/" + releaseName + "-kubelet"

// container returns the Deployment's only container.
func container(t *testing.T, objs map[string]*unstructured.Unstructured) map[string]any {
	t.Helper()
	d := objs["Deployment/"+releaseNamespace+"/"+releaseName]
	if d == nil {
		t.Fatal("no Deployment rendered")
	}
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("want one container, got %d", len(cs))
	}
	return cs[0].(map[string]any)
}

// named returns the item of list field f of obj whose "name" is name, or nil.
func named(obj map[string]any, name string, f ...string) map[string]any {
	items, _, _ := unstructured.NestedSlice(obj, f...)
	for _, it := range items {
		if m := it.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// kubeletRule returns the NetworkPolicy's ingress rule for port kubelet, or nil.
func kubeletRule(t *testing.T, objs map[string]*unstructured.Unstructured) map[string]any {
	t.Helper()
	np := objs["NetworkPolicy/"+releaseNamespace+"/"+releaseName]
	if np == nil {
		t.Fatal("no NetworkPolicy")
	}
	rules, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	for _, r := range rules {
		ports, _, _ := unstructured.NestedSlice(r.(map[string]any), "ports")
		for _, p := range ports {
			if p.(map[string]any)["port"] == "kubelet" {
				return r.(map[string]any)
			}
		}
	}
	return nil
}

// TestVerifyChartKubeletAPI checks the kubeletAPI values: off by default (no flag, port,
// volume, Service or NetworkPolicy rule); on, the flags `vc-syncer run` accepts with the
// advertised address and port, the kubelet container port and Service port, the serving
// certificate's Secret mounted read-only, and ingress to the port only from allowedFrom.
func TestVerifyChartKubeletAPI(t *testing.T) {
	pod := []string{"spec", "template", "spec"}
	t.Run("off by default", func(t *testing.T) {
		// allowedFrom and tlsSecretName alone turn nothing on.
		for name, set := range map[string][]string{"defaults": nil,
			"values without enabled": {"kubeletAPI.advertiseAddress=10.96.0.50", "kubeletAPI.tlsSecretName=kubelet-tls",
				"kubeletAPI.allowedFrom[0].namespaceSelector.matchLabels.name=tenants"}} {
			objs := parse(t, helmTemplate(t, false, set...))
			for _, a := range containerArgs(t, objs) {
				if strings.HasPrefix(a, "--kubelet-") {
					t.Errorf("%s: arg %s", name, a)
				}
			}
			if o := checkArgs(t, containerArgs(t, objs)); o.KubeletBindAddress != "0" {
				t.Errorf("%s: --kubelet-bind-address %q, want 0 (off)", name, o.KubeletBindAddress)
			}
			if p := named(container(t, objs), "kubelet", "ports"); p != nil {
				t.Errorf("%s: container port %v", name, p)
			}
			if v := named(objs["Deployment/"+releaseNamespace+"/"+releaseName].Object, "kubelet-certs", append(pod, "volumes")...); v != nil {
				t.Errorf("%s: volume %v", name, v)
			}
			if objs[kubeletService] != nil {
				t.Errorf("%s: renders %s", name, kubeletService)
			}
			if r := kubeletRule(t, objs); r != nil {
				t.Errorf("%s: NetworkPolicy rule %v", name, r)
			}
		}
	})
	t.Run("on", func(t *testing.T) {
		objs := parse(t, helmTemplate(t, false, "kubeletAPI.enabled=true", "replicaCount=1", "kubeletAPI.port=10443",
			"kubeletAPI.advertiseAddress=kubelet.example.com", "kubeletAPI.advertisePort=443",
			"kubeletAPI.tlsSecretName=kubelet-tls", "kubeletAPI.allowedFrom[0].namespaceSelector.matchLabels.name=tenants",
			"metrics.certSecret=metrics-tls"))
		o := checkArgs(t, containerArgs(t, objs))
		addr, port, err := o.KubeletEndpoint()
		if o.KubeletBindAddress != ":10443" || addr != "kubelet.example.com" || port != 443 || err != nil {
			t.Errorf("--kubelet-bind-address %q advertises %s:%d (%v), want :10443 advertising kubelet.example.com:443",
				o.KubeletBindAddress, addr, port, err)
		}
		if o.KubeletTLSCertFile != "/etc/vc-syncer/kubelet-certs/tls.crt" || o.KubeletTLSKeyFile != "/etc/vc-syncer/kubelet-certs/tls.key" {
			t.Errorf("--kubelet-tls-cert-file %q --kubelet-tls-private-key-file %q", o.KubeletTLSCertFile, o.KubeletTLSKeyFile)
		}
		c := container(t, objs)
		if p := named(c, "kubelet", "ports"); p == nil || p["containerPort"] != float64(10443) || p["protocol"] != "TCP" {
			t.Errorf("container port kubelet %v, want 10443/TCP", p)
		}
		if m := named(c, "kubelet-certs", "volumeMounts"); m == nil || m["mountPath"] != "/etc/vc-syncer/kubelet-certs" || m["readOnly"] != true {
			t.Errorf("volumeMount kubelet-certs %v, want read-only at /etc/vc-syncer/kubelet-certs", m)
		}
		if m := named(c, "metrics-certs", "volumeMounts"); m == nil {
			t.Error("the metrics certificate's volumeMount is gone next to the kubelet one")
		}
		dep := objs["Deployment/"+releaseNamespace+"/"+releaseName].Object
		if v := named(dep, "kubelet-certs", append(pod, "volumes")...); v == nil || v["secret"].(map[string]any)["secretName"] != "kubelet-tls" {
			t.Errorf("volume kubelet-certs %v, want Secret kubelet-tls", v)
		}
		svc := objs[kubeletService]
		if svc == nil {
			t.Fatalf("no %s", kubeletService)
		}
		ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		want := []any{map[string]any{"name": "kubelet", "port": float64(443), "targetPort": "kubelet", "protocol": "TCP"}}
		if d := cmp.Diff(want, ports); d != "" {
			t.Errorf("%s ports (-want +got):\n%s", kubeletService, d)
		}
		sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
		podLabels, _, _ := unstructured.NestedStringMap(dep, "spec", "template", "metadata", "labels")
		for k, v := range sel {
			if podLabels[k] != v {
				t.Errorf("%s selects %s=%s, which the syncer Pods lack", kubeletService, k, v)
			}
		}
		r := kubeletRule(t, objs)
		if r == nil {
			t.Fatal("no NetworkPolicy rule for port kubelet")
		}
		from := []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"name": "tenants"}}}}
		if d := cmp.Diff(from, r["from"]); d != "" {
			t.Errorf("kubelet rule's from (-want +got):\n%s", d)
		}
	})
	t.Run("nodes/proxy granted only with nodeStats", func(t *testing.T) {
		for _, tc := range []struct {
			set  []string
			want bool
		}{
			{nil, false},
			{[]string{"kubeletAPI.enabled=true", "replicaCount=1", "kubeletAPI.advertiseAddress=10.96.0.50"}, false},
			{[]string{"kubeletAPI.nodeStats=true"}, false}, // without the kubelet API
			{[]string{"kubeletAPI.enabled=true", "replicaCount=1", "kubeletAPI.advertiseAddress=10.96.0.50", "kubeletAPI.nodeStats=true"}, true},
		} {
			objs := parse(t, helmTemplate(t, false, tc.set...))
			role := objs["ClusterRole//"+releaseName]
			if role == nil {
				t.Fatalf("%v: no ClusterRole %s", tc.set, releaseName)
			}
			rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
			granted := false
			for _, r := range rules {
				res, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
				granted = granted || slices.Contains(res, "nodes/proxy")
			}
			flag := slices.Contains(containerArgs(t, objs), "--kubelet-node-stats")
			if granted != tc.want || flag != tc.want {
				t.Errorf("%v: nodes/proxy granted %v, --kubelet-node-stats %v; want both %v", tc.set, granted, flag, tc.want)
			}
		}
		// The kustomize base grants it never (config/rbac is generated without it).
		for key, u := range parse(t, kustomize(t)) {
			if u.GetKind() == "ClusterRole" && strings.Contains(string(mustJSON(t, u.Object)), "nodes/proxy") {
				t.Errorf("%s grants nodes/proxy", key)
			}
		}
	})
	t.Run("defaults when on: port 10250 advertised, self-signed, closed", func(t *testing.T) {
		objs := parse(t, helmTemplate(t, false, "kubeletAPI.enabled=true", "replicaCount=1", "kubeletAPI.advertiseAddress=10.96.0.50"))
		o := checkArgs(t, containerArgs(t, objs))
		if addr, port, err := o.KubeletEndpoint(); o.KubeletBindAddress != ":10250" || addr != "10.96.0.50" || port != 10250 || err != nil {
			t.Errorf("--kubelet-bind-address %q advertises %s:%d (%v), want :10250 advertising 10.96.0.50:10250", o.KubeletBindAddress, addr, port, err)
		}
		if o.KubeletTLSCertFile != "" || o.KubeletTLSKeyFile != "" {
			t.Errorf("without tlsSecretName: --kubelet-tls-cert-file %q --kubelet-tls-private-key-file %q, want the self-signed certificate", o.KubeletTLSCertFile, o.KubeletTLSKeyFile)
		}
		dep := objs["Deployment/"+releaseNamespace+"/"+releaseName].Object
		if vols, ok, _ := unstructured.NestedSlice(dep, append(pod, "volumes")...); ok {
			t.Errorf("volumes %v without any certificate Secret", vols)
		}
		svc := objs[kubeletService]
		if svc == nil {
			t.Fatalf("no %s", kubeletService)
		}
		// parse decodes numbers as float64.
		ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		if len(ports) != 1 || ports[0].(map[string]any)["port"] != float64(10250) {
			t.Errorf("%s ports %v, want 10250", kubeletService, ports)
		}
		// No peer listed: no rule, so the NetworkPolicy admits nobody to the port.
		if r := kubeletRule(t, objs); r != nil {
			t.Errorf("NetworkPolicy rule %v without kubeletAPI.allowedFrom, want none (closed)", r)
		}
		if np := objs["NetworkPolicy/"+releaseNamespace+"/"+releaseName]; np != nil {
			rules, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
			for _, r := range rules {
				ports, _, _ := unstructured.NestedSlice(r.(map[string]any), "ports")
				if len(ports) == 0 {
					t.Errorf("ingress rule %v admits every port", r)
				}
			}
		}
	})
	t.Run("refused without advertiseAddress", func(t *testing.T) {
		_, err := run(tool(t, "helm"), nil, "template", releaseName, chartDir, "--namespace", releaseNamespace,
			"--set", "kubeletAPI.enabled=true")
		if err == nil || !strings.Contains(err.Error(), "kubeletAPI.advertiseAddress is required when kubeletAPI.enabled") {
			t.Fatalf("helm template with kubeletAPI.enabled and no advertiseAddress: err = %v, want a refusal", err)
		}
	})
	t.Run("refused with a standby or shards", func(t *testing.T) {
		for _, set := range [][]string{
			{"kubeletAPI.enabled=true", "kubeletAPI.advertiseAddress=10.96.0.50"},
			{"kubeletAPI.enabled=true", "kubeletAPI.advertiseAddress=10.96.0.50", "replicaCount=1", "sharding.enabled=true"},
		} {
			args := []string{"template", releaseName, chartDir, "--namespace", releaseNamespace}
			for _, kv := range set {
				args = append(args, "--set", kv)
			}
			_, err := run(tool(t, "helm"), nil, args...)
			if err == nil || !strings.Contains(err.Error(), "kubeletAPI.enabled needs replicaCount: 1 and sharding.enabled: false") {
				t.Errorf("helm template %v: err = %v, want a refusal", set, err)
			}
		}
	})
	t.Run("config/kubelet-api flags are valid", func(t *testing.T) {
		o := checkArgs(t, containerArgs(t, parse(t, kustomizeWith(t, "kubelet-api"))))
		if addr, port, err := o.KubeletEndpoint(); addr == "" || port != 10250 || err != nil {
			t.Errorf("config/kubelet-api advertises %s:%d (%v)", addr, port, err)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
