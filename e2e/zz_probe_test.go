package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vcsyncer/syncer/test/framework"
)

func TestProbe(t *testing.T) {
	env := framework.StartT(t, framework.SuperOptions{Nodes: 1}, 1)
	kc := env.Tenants[0].KubeconfigPath
	k := filepath.Join(framework.ToolsDir(), "bin", "kubectl")
	c := "/work/shared/realworld/"
	run := func(args ...string) {
		out, err := exec.Command(k, append([]string{"--kubeconfig", kc}, args...)...).CombinedOutput()
		t.Logf("kubectl %v -> err=%v\n%s", args, err, out)
	}
	run("create", "ns", "x")
	for _, f := range []string{
		"GoogleCloudPlatform-kubernetes-engine-samples/networking/sctp/sctp-deployment.yaml",
		"kubernetes-dashboard/hack/test-resources/nginx-daemon-daemon-set.yaml",
		"kubernetes-examples/_archived/cockroachdb/cockroachdb-statefulset.yaml",
		"kubernetes-examples/_archived/newrelic-infrastructure/newrelic-infra-daemonset.yaml",
		"kubernetes-examples/_archived/podsecuritypolicy/rbac/policies.yaml",
		"kubernetes-kubernetes/test/e2e/testing-manifests/statefulset/nginx/statefulset.yaml",
		"kubernetes-website/content/en/examples/application/job/cronjob.yaml",
		"kubernetes-website/content/en/examples/service/networking/dual-stack-preferred-ipfamilies-svc.yaml",
		"kubernetes-website/content/en/examples/service/networking/network-policy-default-deny-all.yaml",
		"kubernetes-examples/databases/mysql-cinder-pd/mysql.yaml",
		"GoogleCloudPlatform-kubernetes-engine-samples/ai-ml/infw-gw/examples/getting-started/metrics-auth.yaml",
		"kubernetes-ingress-nginx/deploy/static/provider/aws/deploy.yaml",
	} {
		run("apply", "-n", "x", "-f", c+f)
	}
	run("apply", "-n", "default", "-f", c+"GoogleCloudPlatform-kubernetes-engine-samples/ai-ml/infw-gw/examples/getting-started/metrics-auth.yaml")
	run("apply", "-n", "ingress-nginx", "-f", c+"kubernetes-ingress-nginx/deploy/static/provider/aws/deploy.yaml")
	run("get", "svc", "-n", "x", "-o", "yaml")
	_ = os.Getenv
}
