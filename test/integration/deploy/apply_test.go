package deploy

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// forbiddenRecorder records every request the syncer's super client got a 403 for.
type forbiddenRecorder struct {
	mu   sync.Mutex
	reqs []string
}

func (f *forbiddenRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			f.mu.Lock()
			f.reqs = append(f.reqs, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
			f.mu.Unlock()
		}
		return resp, err
	})
}

func (f *forbiddenRecorder) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDeploy applies the chart to a real local super cluster (pkg/localcluster):
//
//  1. the Tenant CRD from the chart's crds/ for real (as `helm install` does), and the release
//     namespace (as `helm install --create-namespace` does);
//  2. a server-side dry run (`kubectl apply --server-side --dry-run=server`) of `helm template`
//     and of `kubectl kustomize config/default`, which the apiserver validates against its
//     schemas, the CRD included, also with the kubelet API on (kubeletAPI values and the
//     config/kubelet-api component); the Deployment raises no Pod Security "restricted" warning;
//  3. the ServiceMonitor variant: refused without the monitoring.coreos.com CRD, accepted once
//     a stand-in CRD (testdata/servicemonitor-crd.yaml: kind and group only, no schema; the
//     Prometheus Operator's CRD is not available from a package registry here) is installed;
//  4. the chart's ServiceAccount, RBAC and ValidatingAdmissionPolicy for real: with a token of
//     that ServiceAccount the apiserver refuses writes in kube-system, in namespaces the syncer
//     did not create, on Namespaces without its label (or with another Pod Security level),
//     on tenant kubeconfig Secrets and on Tenant specs, and allows what the syncer does
//     (testConfinement);
//  5. then the syncer in-process with that token (every opt-in kind on, leader election on,
//     secure metrics): a tenant's objects of every kind sync down, statuses sync up, a broken
//     Tenant gets its Warning Event in "default" (kubectl describe shows it), Tenants are
//     removed with their super namespaces, and the super apiserver answered no request with
//     403, the admission policy included. So the RBAC is enough and the policy lets the syncer work;
//     TestVerifyChartMatchesKustomize keeps config/ equal. /metrics and the status page answer
//     401 without a token, 403 to a token without the metrics-reader ClusterRole, 200 with it
//     (testMetricsAuth).
func TestDeploy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real control planes")
	}
	kubectl := tool(t, "kubectl")
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 2}, 1)
	kc := env.Super.KubeconfigPath
	k := func(stdin []byte, args ...string) ([]byte, error) {
		return run(kubectl, stdin, append([]string{"--kubeconfig", kc}, args...)...)
	}
	must := func(out []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	// 1. CRDs and namespace for real.
	must(k(nil, "apply", "--server-side", "-f", filepath.Join(chartDir, "crds")))
	must(k(nil, "wait", "--for", "condition=Established", "--timeout", "60s", "crd/tenants.tenancy.vcsyncer.io"))
	must(k(nil, "create", "namespace", releaseNamespace))

	// 2. Server-side dry runs.
	t.Run("helm template: server-side dry run", func(t *testing.T) {
		rendered := helmTemplate(t, false)
		out := must(k(rendered, "apply", "--server-side", "--dry-run=server", "--field-manager", "helm", "-f", "-"))
		n := len(parse(t, rendered))
		if got := strings.Count(string(out), "serverside-applied (server dry run)"); got != n {
			t.Errorf("%d of %d objects applied:\n%s", got, n, out)
		}
		if _, err := env.Super.Client.AppsV1().Deployments(releaseNamespace).Get(t.Context(), releaseName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the dry run created the Deployment (err %v)", err)
		}
	})
	t.Run("kustomize config/default: server-side dry run", func(t *testing.T) {
		out := must(k(nil, "apply", "--server-side", "--dry-run=server", "-k", filepath.Join(configDir, "default")))
		n := len(parse(t, kustomize(t)))
		if got := strings.Count(string(out), "serverside-applied (server dry run)"); got != n {
			t.Errorf("%d of %d objects applied:\n%s", got, n, out)
		}
	})
	t.Run("kubelet API variant: server-side dry run", func(t *testing.T) {
		for name, rendered := range map[string][]byte{
			"helm template": helmTemplate(t, false, "kubeletAPI.enabled=true", "replicaCount=1", "kubeletAPI.advertiseAddress=vc-syncer-kubelet.vc-syncer-system.svc",
				"kubeletAPI.tlsSecretName=vc-syncer-kubelet-tls", "kubeletAPI.allowedFrom[0].namespaceSelector.matchLabels.name=tenants"),
			"config/kubelet-api": kustomizeWith(t, "kubelet-api"),
		} {
			out := must(k(rendered, "apply", "--server-side", "--dry-run=server", "--field-manager", "helm", "-f", "-"))
			n := len(parse(t, rendered))
			if got := strings.Count(string(out), "serverside-applied (server dry run)"); got != n {
				t.Errorf("%s: %d of %d objects applied:\n%s", name, got, n, out)
			}
			if !strings.Contains(string(out), "service/vc-syncer-kubelet serverside-applied") {
				t.Errorf("%s: no kubelet Service applied:\n%s", name, out)
			}
		}
	})

	t.Run("Pod Security restricted", func(t *testing.T) {
		// Pod Security admission warns about a workload's Pod template that a namespace's
		// level would refuse; the chart's Deployment must meet "restricted".
		must(k(nil, "label", "namespace", releaseNamespace, "--overwrite", "pod-security.kubernetes.io/warn=restricted"))
		d := parse(t, helmTemplate(t, false))["Deployment/"+releaseNamespace+"/"+releaseName]
		dryRun := func(obj map[string]any) string {
			t.Helper()
			y, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(tool(t, "kubectl"), "--kubeconfig", kc, "apply", "--server-side", "--dry-run=server", "-f", "-")
			cmd.Stdin = bytes.NewReader(y)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			return string(out)
		}
		if out := dryRun(d.Object); strings.Contains(out, "PodSecurity") {
			t.Errorf("the chart's Deployment does not meet Pod Security restricted:\n%s", out)
		}
		// The check sees a violation: the same Deployment without its security contexts.
		weak := d.DeepCopy()
		unstructured.RemoveNestedField(weak.Object, "spec", "template", "spec", "securityContext")
		cs, _, _ := unstructured.NestedSlice(weak.Object, "spec", "template", "spec", "containers")
		delete(cs[0].(map[string]any), "securityContext")
		if err := unstructured.SetNestedSlice(weak.Object, cs, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
		if out := dryRun(weak.Object); !strings.Contains(out, `would violate PodSecurity "restricted`) {
			t.Errorf("no Pod Security warning for a Deployment without security contexts:\n%s", out)
		}
	})

	// 3. ServiceMonitor variant.
	t.Run("ServiceMonitor variant", func(t *testing.T) {
		rendered := helmTemplate(t, false, "serviceMonitor.enabled=true", "optInKinds={"+strings.Join(allOptIn, ",")+"}")
		if parse(t, rendered)["ServiceMonitor/"+releaseNamespace+"/"+releaseName] == nil {
			t.Fatal("serviceMonitor.enabled=true renders no ServiceMonitor")
		}
		out, err := k(rendered, "apply", "--server-side", "--dry-run=server", "-f", "-")
		if err == nil || !strings.Contains(err.Error(), `kind "ServiceMonitor"`) {
			t.Fatalf("dry run without the ServiceMonitor CRD: want a no-match error for ServiceMonitor, got %v\n%s", err, out)
		}
		must(k(nil, "apply", "--server-side", "-f", filepath.Join("testdata", "servicemonitor-crd.yaml")))
		must(k(nil, "wait", "--for", "condition=Established", "--timeout", "60s", "crd/servicemonitors.monitoring.coreos.com"))
		itest.Eventually(t, 30*time.Second, "ServiceMonitor dry run", func(context.Context) error {
			_, err := k(rendered, "apply", "--server-side", "--dry-run=server", "-f", "-")
			return err
		})
	})

	// 4. What the chart's admission policy refuses to the syncer's ServiceAccount.
	t.Run("the admission policy confines the syncer's ServiceAccount", func(t *testing.T) {
		testConfinement(t, env, k)
	})

	// 5. The syncer with exactly the chart's permissions and admission policy.
	t.Run("the syncer works with the chart's RBAC alone", func(t *testing.T) {
		testRBAC(t, env, k)
	})
}

func testRBAC(t *testing.T, env *localcluster.Environment, k func([]byte, ...string) ([]byte, error)) {
	ctx := t.Context()
	// The chart's ServiceAccount, RBAC and admission policy, with every opt-in kind, for real;
	// Prometheus's ServiceAccount (metrics.readers) bound to the metrics-reader ClusterRole.
	saCfg := applyIdentity(t, env, k, "metrics.readers[0].name=prometheus", "metrics.readers[0].namespace=monitoring")
	var forbidden forbiddenRecorder
	saCfg.Wrap(forbidden.wrap)

	admin, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	checkpointing := false
	metricsAddr := "127.0.0.1:" + strconv.Itoa(itest.FreePort(t))
	const checkpointStore = "secret:" + releaseNamespace + "/vc-syncer-checkpoint"
	itest.StartSyncer(t, saCfg, func(o *options.Options) {
		o.LeaderElect = true
		o.InstallCRDs = false
		o.KubeconfigNamespace = releaseNamespace
		o.OptInKinds = allOptIn
		o.MetricsBindAddress = metricsAddr // the chart's default: --metrics-secure=true
		// The chart's checkpoint store, through the flag so this compiles before and after the
		// checkpoint options land: with the flag, the store's Secret writes run
		// under the chart's RBAC too.
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		o.AddFlags(fs)
		if fs.Lookup("checkpoint-store") != nil {
			checkpointing = true
			for name, v := range map[string]string{"checkpoint-store": checkpointStore, "checkpoint-interval": "2s"} {
				if err := fs.Set(name, v); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	// The built-in tenant policy refuses Ingresses (no allowed class or host): allow this
	// test's one, so that every kind, written with the chart's RBAC, is exercised.
	itest.DefaultPolicy(t, admin, tenancyv1alpha1.TenantPolicySpec{Network: &tenancyv1alpha1.NetworkPolicy{
		AllowedIngressClasses: []string{"nginx"}, AllowedIngressHosts: []string{"web.example"}}})
	tc := env.Tenants[0]
	if err := itest.AddTenant(ctx, admin, releaseNamespace, tc, 1); err != nil {
		t.Fatal(err)
	}
	if err := app.AddTenant(ctx, admin, releaseNamespace, "broken", []byte("not: [a kubeconfig"), 1); err != nil {
		t.Fatal(err)
	}
	itest.WaitRunning(t, admin, tc.Name)
	uid := itest.TenantUID(t, admin, tc.Name)

	// Every default and opt-in kind in one tenant namespace.
	tcl, super := tc.Client, env.Super.Client
	const ns = "app"
	itest.MustCreateNS(t, tcl, ns)
	created := itest.Created(t)
	created(tcl.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}))
	created(tcl.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"p": "x"}}, metav1.CreateOptions{}))
	created(tcl.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{}))
	created(tcl.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}, metav1.CreateOptions{}))
	created(tcl.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{}))
	created(tcl.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{ServiceAccountName: "builder", Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}},
		metav1.CreateOptions{}))
	pathType := networkingv1.PathTypePrefix
	nginx := "nginx"
	created(tcl.NetworkingV1().Ingresses(ns).Create(ctx, &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: networkingv1.IngressSpec{IngressClassName: &nginx, Rules: []networkingv1.IngressRule{{Host: "web.example", IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pathType,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}},
		metav1.CreateOptions{}))
	created(tcl.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny"},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{}}}, metav1.CreateOptions{}))
	minAvail := intstr.FromInt32(1)
	created(tcl.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvail, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}, metav1.CreateOptions{}))

	superNS := conversion.SuperNamespace(tc.Name, uid, ns)
	getters := map[string]func(context.Context) error{
		"ConfigMap": func(ctx context.Context) error {
			_, err := super.CoreV1().ConfigMaps(superNS).Get(ctx, "cfg", metav1.GetOptions{})
			return err
		},
		"Secret": func(ctx context.Context) error {
			_, err := super.CoreV1().Secrets(superNS).Get(ctx, "creds", metav1.GetOptions{})
			return err
		},
		"ServiceAccount": func(ctx context.Context) error {
			_, err := super.CoreV1().ServiceAccounts(superNS).Get(ctx, "builder", metav1.GetOptions{})
			return err
		},
		"Service": func(ctx context.Context) error {
			_, err := super.CoreV1().Services(superNS).Get(ctx, "web", metav1.GetOptions{})
			return err
		},
		"Ingress": func(ctx context.Context) error {
			_, err := super.NetworkingV1().Ingresses(superNS).Get(ctx, "web", metav1.GetOptions{})
			return err
		},
		"NetworkPolicy": func(ctx context.Context) error {
			_, err := super.NetworkingV1().NetworkPolicies(superNS).Get(ctx, "deny", metav1.GetOptions{})
			return err
		},
		"PodDisruptionBudget": func(ctx context.Context) error {
			_, err := super.PolicyV1().PodDisruptionBudgets(superNS).Get(ctx, "web", metav1.GetOptions{})
			return err
		},
	}
	for kind, get := range getters {
		itest.Eventually(t, time.Minute, kind+" in the super cluster", get)
	}
	itest.Eventually(t, 2*time.Minute, "tenant Pod Running with its claim Bound", func(ctx context.Context) error {
		p, err := tcl.CoreV1().Pods(ns).Get(ctx, "web-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" {
			return fmt.Errorf("phase %s node %q", p.Status.Phase, p.Spec.NodeName)
		}
		c, err := tcl.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("claim %s", c.Status.Phase)
		}
		return nil
	})
	// Updates and deletes go down too.
	cm, err := tcl.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "2"
	created(tcl.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}))
	itest.Eventually(t, time.Minute, "ConfigMap update in the super cluster", func(ctx context.Context) error {
		s, err := super.CoreV1().ConfigMaps(superNS).Get(ctx, "cfg", metav1.GetOptions{})
		if err != nil || s.Data["v"] != "2" {
			return fmt.Errorf("data %v err %w", s.Data, err)
		}
		return nil
	})
	// A Pod change is a patch of the super Pod; a namespace label change an update.
	created(tcl.CoreV1().Pods(ns).Patch(ctx, "web-0", types.MergePatchType, []byte(`{"metadata":{"labels":{"rev":"2"}}}`), metav1.PatchOptions{}))
	created(tcl.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`), metav1.PatchOptions{}))
	itest.Eventually(t, time.Minute, "Pod and namespace labels in the super cluster", func(ctx context.Context) error {
		p, err := super.CoreV1().Pods(superNS).Get(ctx, "web-0", metav1.GetOptions{})
		if err != nil || p.Labels["rev"] != "2" {
			return fmt.Errorf("super Pod labels %v err %w", p.Labels, err)
		}
		n, err := super.CoreV1().Namespaces().Get(ctx, superNS, metav1.GetOptions{})
		// Tenant namespace labels reach the super namespace under the syncer's keys.
		if k, _ := conversion.SuperNamespaceLabelKey("team"); err != nil || n.Labels[k] != "a" || n.Labels["team"] != "" {
			return fmt.Errorf("super namespace labels %v err %w", n.Labels, err)
		}
		return nil
	})
	if err := tcl.CoreV1().Secrets(ns).Delete(ctx, "creds", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, time.Minute, "Secret deleted in the super cluster", func(ctx context.Context) error {
		if err := getters["Secret"](ctx); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (err %w)", err)
		}
		return nil
	})

	// The broken Tenant gets a Warning Event, in namespace "default" (cluster-scoped object),
	// which kubectl describe shows.
	var reason string
	itest.Eventually(t, time.Minute, "Warning Event on Tenant broken", func(ctx context.Context) error {
		evs, err := super.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=broken"})
		if err != nil {
			return err
		}
		if len(evs.Items) == 0 {
			return fmt.Errorf("no Event")
		}
		reason = evs.Items[0].Reason
		return nil
	})
	if out, err := k(nil, "describe", "tenant", "broken"); err != nil || !strings.Contains(string(out), reason) {
		t.Errorf("kubectl describe tenant broken does not show the Event (reason %s): %v\n%s", reason, err, out)
	}
	t.Run("metrics and status page need an authorized token", func(t *testing.T) {
		testMetricsAuth(t, env, saCfg, metricsAddr)
	})
	// Leader election took its Lease in the release namespace.
	if _, err := super.CoordinationV1().Leases(releaseNamespace).Get(ctx, "vc-syncer.tenancy.vcsyncer.io", metav1.GetOptions{}); err != nil {
		t.Errorf("leader-election Lease: %v", err)
	}
	if checkpointing {
		itest.Eventually(t, time.Minute, "checkpoint Secrets in "+releaseNamespace, func(ctx context.Context) error {
			secs, err := super.CoreV1().Secrets(releaseNamespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, s := range secs.Items {
				if strings.HasPrefix(s.Name, "vc-syncer-checkpoint") {
					return nil
				}
			}
			return fmt.Errorf("no Secret vc-syncer-checkpoint* among %d", len(secs.Items))
		})
	} else {
		t.Log("vc-syncer run has no --checkpoint-store yet; the checkpoint store's RBAC is not exercised")
	}

	// Removing Tenants: super namespaces deleted, finalizers removed.
	for _, name := range []string{tc.Name, "broken"} {
		if err := admin.Delete(ctx, &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	itest.Eventually(t, 2*time.Minute, "Tenants gone with their super namespaces", func(ctx context.Context) error {
		var list tenancyv1alpha1.TenantList
		if err := admin.List(ctx, &list); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d Tenants left", len(list.Items))
		}
		nss, err := super.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + uid})
		if err != nil {
			return err
		}
		for _, n := range nss.Items {
			if n.DeletionTimestamp.IsZero() {
				return fmt.Errorf("super namespace %s not deleted", n.Name)
			}
		}
		return nil
	})

	if got := forbidden.list(); len(got) > 0 {
		t.Errorf("the super apiserver refused %d requests of the syncer with the chart's RBAC:\n%s", len(got), strings.Join(got, "\n"))
	}
	// The recorder sees refusals: a request outside the chart's RBAC is recorded.
	cs, err := rest.HTTPClientFor(saCfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cs.Get(saCfg.Host + "/apis/apps/v1/deployments")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := len(forbidden.list()); resp.StatusCode != http.StatusForbidden || n == 0 {
		t.Errorf("listing Deployments as the syncer: status %d, %d refusals recorded; want 403 recorded", resp.StatusCode, n)
	}
}

func ptr[T any](v T) *T { return &v }
