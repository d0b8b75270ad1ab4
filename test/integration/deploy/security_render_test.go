package deploy

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// helmTemplateAs renders the chart as release name in namespace ns with the given --set values.
func helmTemplateAs(t *testing.T, name, ns string, set ...string) map[string]*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", name, chartDir, "--namespace", ns}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := run(tool(t, "helm"), nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, out)
}

// policyVariable returns the expression of the admission policy's variable name.
func policyVariable(t *testing.T, vap *unstructured.Unstructured, name string) string {
	t.Helper()
	vars, _, _ := unstructured.NestedSlice(vap.Object, "spec", "variables")
	for _, v := range vars {
		if m := v.(map[string]any); m["name"] == name {
			return m["expression"].(string)
		}
	}
	t.Fatalf("%s has no variable %s", key(vap), name)
	return ""
}

// TestVerifyChartConfinement checks that the admission policy, the metrics authentication and
// the NetworkPolicy follow the release and the values: the policy matches the release's
// ServiceAccount and allows its namespace and Pod Security level; metrics.secure turns on
// HTTPS, the review permissions and the ServiceMonitor's bearer token together.
func TestVerifyChartConfinement(t *testing.T) {
	t.Run("policy follows release, ServiceAccount and Pod Security level", func(t *testing.T) {
		objs := helmTemplateAs(t, "prod", "infra", "serviceAccount.name=custom", "podSecurityEnforce=restricted")
		vap, vapb := objs["ValidatingAdmissionPolicy//prod-vc-syncer-confine"], objs["ValidatingAdmissionPolicyBinding//prod-vc-syncer-confine"]
		if vap == nil || vapb == nil {
			t.Fatal("no policy or binding prod-vc-syncer-confine")
		}
		conds, _, _ := unstructured.NestedSlice(vap.Object, "spec", "matchConditions")
		if len(conds) != 1 || conds[0].(map[string]any)["expression"] != `request.userInfo.username == "system:serviceaccount:infra:custom"` {
			t.Errorf("matchConditions %v: want the username of ServiceAccount infra/custom", conds)
		}
		if got := policyVariable(t, vap, "ownNamespace"); got != `"infra"` {
			t.Errorf("ownNamespace %s", got)
		}
		if got := policyVariable(t, vap, "podSecurityLabels"); got != `["pod-security.kubernetes.io/enforce=restricted"]` {
			t.Errorf("podSecurityLabels %s", got)
		}
		if p, _, _ := unstructured.NestedString(vapb.Object, "spec", "policyName"); p != vap.GetName() {
			t.Errorf("binding names policy %q", p)
		}
		if a, _, _ := unstructured.NestedStringSlice(vapb.Object, "spec", "validationActions"); !slices.Equal(a, []string{"Deny"}) {
			t.Errorf("validationActions %v, want [Deny]", a)
		}
		none := helmTemplateAs(t, "prod", "infra", "podSecurityEnforce=")
		if got := policyVariable(t, none["ValidatingAdmissionPolicy//prod-vc-syncer-confine"], "podSecurityLabels"); got != `[]` {
			t.Errorf("podSecurityLabels without a level: %s", got)
		}
		if off := helmTemplateAs(t, "prod", "infra", "admissionPolicy.enabled=false"); off["ValidatingAdmissionPolicy//prod-vc-syncer-confine"] != nil {
			t.Error("admissionPolicy.enabled=false still renders the policy")
		}
	})
	t.Run("metrics.secure", func(t *testing.T) {
		for _, secure := range []bool{true, false} {
			set := []string{"serviceMonitor.enabled=true"}
			if !secure {
				set = append(set, "metrics.secure=false")
			}
			objs := parse(t, helmTemplate(t, false, set...))
			o := checkArgs(t, containerArgs(t, objs))
			if o.MetricsSecure != secure {
				t.Errorf("metrics.secure=%t: --metrics-secure=%t", secure, o.MetricsSecure)
			}
			perms := permissions(t, objs["ClusterRole//"+releaseName])
			hasReviews := slices.Contains(perms, "authentication.k8s.io tokenreviews create") &&
				slices.Contains(perms, "authorization.k8s.io subjectaccessreviews create")
			if hasReviews != secure {
				t.Errorf("metrics.secure=%t: review permissions %t", secure, hasReviews)
			}
			sm := objs["ServiceMonitor/"+releaseNamespace+"/"+releaseName]
			eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			ep := eps[0].(map[string]any)
			if secure {
				skip, _, _ := unstructured.NestedBool(ep, "tlsConfig", "insecureSkipVerify")
				if ep["scheme"] != "https" || ep["bearerTokenFile"] != "/var/run/secrets/kubernetes.io/serviceaccount/token" || !skip {
					t.Errorf("secure ServiceMonitor endpoint %v", ep)
				}
			} else if ep["scheme"] != "http" || ep["bearerTokenFile"] != nil {
				t.Errorf("plain ServiceMonitor endpoint %v", ep)
			}
		}
		reader := parse(t, helmTemplate(t, false))["ClusterRole//"+releaseName+"-metrics-reader"]
		want := []string{"url / get", "url /metrics get", "url /status.json get"}
		if got := permissions(t, reader); !slices.Equal(got, want) {
			t.Errorf("metrics-reader permissions %v, want %v", got, want)
		}
		bound := parse(t, helmTemplate(t, false, "metrics.readers[0].name=prometheus", "metrics.readers[0].namespace=monitoring"))
		crb := bound["ClusterRoleBinding//"+releaseName+"-metrics-reader"]
		if crb == nil {
			t.Fatal("metrics.readers renders no ClusterRoleBinding")
		}
		subj, _, _ := unstructured.NestedSlice(crb.Object, "subjects")
		if len(subj) != 1 || subj[0].(map[string]any)["name"] != "prometheus" || subj[0].(map[string]any)["namespace"] != "monitoring" {
			t.Errorf("subjects %v", subj)
		}
		if parse(t, helmTemplate(t, false))["ClusterRoleBinding//"+releaseName+"-metrics-reader"] != nil {
			t.Error("the metrics-reader ClusterRole is bound by default")
		}
		cert := parse(t, helmTemplate(t, false, "metrics.certSecret=metrics-tls"))
		if o := checkArgs(t, containerArgs(t, cert)); o.MetricsCertDir != "/etc/vc-syncer/metrics-certs" {
			t.Errorf("--metrics-cert-dir %q", o.MetricsCertDir)
		}
		vols, _, _ := unstructured.NestedSlice(cert["Deployment/"+releaseNamespace+"/"+releaseName].Object, "spec", "template", "spec", "volumes")
		if len(vols) != 1 || !strings.Contains(strings.Join([]string{vols[0].(map[string]any)["secret"].(map[string]any)["secretName"].(string)}, ""), "metrics-tls") {
			t.Errorf("volumes %v", vols)
		}
	})
	t.Run("NetworkPolicy", func(t *testing.T) {
		np := parse(t, helmTemplate(t, false, "networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.name=monitoring"))["NetworkPolicy/"+releaseNamespace+"/"+releaseName]
		if np == nil {
			t.Fatal("no NetworkPolicy")
		}
		if types, _, _ := unstructured.NestedStringSlice(np.Object, "spec", "policyTypes"); !slices.Equal(types, []string{"Ingress"}) {
			t.Errorf("policyTypes %v: want Ingress only (egress open)", types)
		}
		rules, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
		if len(rules) != 2 {
			t.Fatalf("ingress rules %v", rules)
		}
		metrics, health := rules[0].(map[string]any), rules[1].(map[string]any)
		if p := metrics["ports"].([]any)[0].(map[string]any)["port"]; p != "metrics" || metrics["from"] == nil {
			t.Errorf("metrics rule %v: want port metrics from metricsFrom", metrics)
		}
		if p := health["ports"].([]any)[0].(map[string]any)["port"]; p != "health" || health["from"] != nil {
			t.Errorf("health rule %v: want port health from anywhere", health)
		}
		if parse(t, helmTemplate(t, false, "networkPolicy.enabled=false"))["NetworkPolicy/"+releaseNamespace+"/"+releaseName] != nil {
			t.Error("networkPolicy.enabled=false still renders it")
		}
	})
}
