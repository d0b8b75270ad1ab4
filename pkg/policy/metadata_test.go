package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeyAllowed(t *testing.T) {
	def := Default().Metadata()
	for key, want := range map[string]bool{
		"app": true, "pod-template-hash": true, "app.kubernetes.io/name": true, "helm.sh/chart": true,
		"statefulset.kubernetes.io/pod-name": true, "batch.kubernetes.io/job-name": true,
		// The label kubeadm's CoreDNS Service (kube-system/kube-dns) carries in every cluster.
		"kubernetes.io/name": true, "kubernetes.io/name.evil.io/x": false, "kubernetes.io/metadata.name": false,
		"example.com/team": false, "metallb.universe.tf/address-pool": false, "sidecar.istio.io/inject": false,
		"io.katacontainers.config.hypervisor.path": false, "io.kubernetes.cri-o.Devices": false,
		"kubernetes.io/ingress.class": false, "node-role.kubernetes.io/control-plane": false,
		// Labels that Helm charts' Service selectors use.
		"app.kubernetes.io/instance": true,
		// An entry without a trailing "/" is one key, not a prefix of longer ones.
		"controller-revision-hash.evil.io/x": false, "batch.kubernetes.io/job-name.evil.io/x": false,
	} {
		if got := KeyAllowed(def.AllowedLabelPrefixes, key); got != want {
			t.Errorf("label %s: KeyAllowed = %v, want %v", key, got, want)
		}
	}
	for key, want := range map[string]bool{
		"note": true, "kubectl.kubernetes.io/restartedAt": true, "batch.kubernetes.io/job-completion-index": true,
		// What the super cluster's own monitoring, Helm and deployment tools act on.
		"prometheus.io/scrape": false, "prometheus.io/port": false, "meta.helm.sh/release-name": false,
		"app.kubernetes.io/instance": false, "helm.sh/resource-policy": false,
		"kubectl.kubernetes.io/last-applied-configuration": false, "nginx.ingress.kubernetes.io/server-snippet": false,
		"service.beta.kubernetes.io/aws-load-balancer-type": false, "iam.gke.io/gcp-service-account": false,
		"io.katacontainers.config.hypervisor.kernel_params": false, "eks.amazonaws.com/role-arn": false,
		"kubectl.kubernetes.io/restartedAt.evil.io/x": false,
	} {
		if got := KeyAllowed(def.AllowedAnnotationPrefixes, key); got != want {
			t.Errorf("annotation %s: KeyAllowed = %v, want %v", key, got, want)
		}
	}
	if KeyAllowed(nil, "app") || KeyAllowed([]string{}, "app") {
		t.Error("an empty allowlist allows a key")
	}
}

func TestFilterKeys(t *testing.T) {
	kept, dropped := FilterKeys(map[string]string{"a": "1", "x.io/b": "2", "y.io/c": "3"}, []string{"", "x.io/"})
	if d := cmp.Diff(map[string]string{"a": "1", "x.io/b": "2"}, kept); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"y.io/c"}, dropped); d != "" {
		t.Errorf("dropped (-want +got):\n%s", d)
	}
	if k, d := FilterKeys(nil, []string{""}); k != nil || d != nil {
		t.Errorf("FilterKeys(nil) = %v, %v", k, d)
	}
	if MetadataDenial("Pod", "ns", "p", nil) != nil {
		t.Error("a denial for nothing dropped")
	}
	if d := MetadataDenial("Pod", "ns", "p", []string{"label y.io/c"}); d.Rule != RuleMetadataKey {
		t.Errorf("rule %s", d.Rule)
	}
}
