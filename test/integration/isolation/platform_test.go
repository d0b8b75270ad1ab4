package isolation

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// repoDir returns the repository root (two levels above this package).
func repoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// syncerToken applies the ServiceAccount and RBAC of config/default (its Deployment and CRDs
// left out) to the super cluster and returns a client with that ServiceAccount's token, and
// whether config/ ships a ValidatingAdmissionPolicy.
func (s *suite) syncerToken(t *testing.T) (kubernetes.Interface, bool) {
	t.Helper()
	kubectl := filepath.Join(localcluster.ToolsDir(), "bin", "kubectl")
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(repoDir(), "config", "default")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v", err)
	}
	var docs [][]byte
	hasVAP := false
	namespace := itest.KubeconfigNS
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		kind, _ := m["kind"].(string)
		switch kind {
		case "", "Deployment", "CustomResourceDefinition", "Namespace":
			continue
		case "ValidatingAdmissionPolicy":
			hasVAP = true
		case "ServiceAccount":
			if md, ok := m["metadata"].(map[string]any); ok {
				if ns, ok := md["namespace"].(string); ok && ns != "" {
					namespace = ns
				}
			}
		}
		y, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, y)
	}
	cmd := exec.Command(kubectl, "--kubeconfig", s.env.Super.KubeconfigPath, "apply", "--server-side", "--force-conflicts", "-f", "-")
	cmd.Stdin = bytes.NewReader(bytes.Join(docs, []byte("---\n")))
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("applying config/default's RBAC: %v\n%s", err, o)
	}
	ctx := context.Background()
	var tok string
	itest.Eventually(t, maxWait, "token of the syncer's ServiceAccount", func(ctx context.Context) error {
		tr, err := s.super.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, "vc-syncer",
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		tok = tr.Status.Token
		return nil
	})
	_ = ctx
	cfg := rest.AnonymousClientConfig(s.env.Super.RESTConfig)
	cfg.BearerToken = tok
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, hasVAP
}

// checkSyncerTokenConfined: the syncer's ServiceAccount (config/'s RBAC and
// ValidatingAdmissionPolicy) may write in the super namespaces it created, but its token is
// refused when it writes in kube-system (a Secret, a ConfigMap, the Namespace's labels).
func (s *suite) checkSyncerTokenConfined(t *testing.T) {
	ctx := context.Background()
	sa, hasVAP := s.syncerToken(t)
	if !hasVAP {
		t.Error("config/default ships no ValidatingAdmissionPolicy: nothing confines the syncer's ServiceAccount to its namespaces")
	} else {
		// The apiserver enforces a new policy once it has compiled it and seen its binding.
		var last error
		deadline := time.Now().Add(maxWait)
		for time.Now().Before(deadline) {
			_, last = sa.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vap-probe"}},
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if apierrors.IsForbidden(last) {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Logf("admission policy in force (dry-run probe: %v)", last)
	}
	before := s.snapshot(t)
	defer s.compare(t, before)
	// The positive control: the token works where the syncer must write.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "vap-probe"}, Data: map[string]string{"k": "v"}}
	if _, err := sa.CoreV1().ConfigMaps(s.aSuperNS).Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		t.Errorf("the syncer's token cannot write in super namespace %s it created: %v", s.aSuperNS, err)
	} else {
		_ = s.super.CoreV1().ConfigMaps(s.aSuperNS).Delete(ctx, probe.Name, metav1.DeleteOptions{})
	}
	refused := func(what string, err error, undo func()) {
		t.Helper()
		switch {
		case err == nil:
			t.Errorf("ATTACK ESCAPED: the syncer's ServiceAccount token %s", what)
			undo()
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			t.Logf("refused as expected: %s: %v", what, err)
		default:
			t.Errorf("%s: unexpected error (want Forbidden or Invalid): %v", what, err)
		}
	}
	_, err := sa.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vap-probe"}}, metav1.CreateOptions{})
	refused("created a Secret in kube-system", err, func() { _ = s.super.CoreV1().Secrets("kube-system").Delete(ctx, "vap-probe", metav1.DeleteOptions{}) })
	_, err = sa.CoreV1().ConfigMaps("kube-system").Create(ctx, probe.DeepCopy(), metav1.CreateOptions{})
	refused("created a ConfigMap in kube-system", err, func() { _ = s.super.CoreV1().ConfigMaps("kube-system").Delete(ctx, probe.Name, metav1.DeleteOptions{}) })
	_, err = sa.CoreV1().Namespaces().Patch(ctx, "kube-system", types.MergePatchType, []byte(`{"metadata":{"labels":{"vap-probe":"x"}}}`), metav1.PatchOptions{})
	refused("labelled Namespace kube-system", err, func() {
		_, _ = s.super.CoreV1().Namespaces().Patch(ctx, "kube-system", types.MergePatchType, []byte(`{"metadata":{"labels":{"vap-probe":null}}}`), metav1.PatchOptions{})
	})
	_, err = sa.CoreV1().Pods("default").Create(ctx, basePod("vap-probe"), metav1.CreateOptions{})
	refused("created a Pod in default", err, func() {
		_ = s.super.CoreV1().Pods("default").Delete(ctx, "vap-probe", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
		itest.Eventually(t, maxWait, "probe Pod gone", func(ctx context.Context) error {
			if _, err := s.super.CoreV1().Pods("default").Get(ctx, "vap-probe", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return itest.Errorf("still there (err %v)", err)
			}
			return nil
		})
	})
}

// checkMetricsAuth: the metrics endpoint and the status page (which list every tenant's name,
// phase and queues) need authentication and authorization: no answer over plain HTTP or
// without credentials; a ServiceAccount allowed to get /metrics reads them over HTTPS.
func (s *suite) checkMetricsAuth(t *testing.T) {
	ctx := context.Background()
	plain := &http.Client{Timeout: 5 * time.Second}
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // probing without credentials
	get := func(c *http.Client, url, token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b), nil
	}
	for _, path := range []string{"/metrics", "/", "/status.json"} {
		if code, body, err := get(plain, "http://"+s.metricsURL+path, ""); err == nil && code == http.StatusOK {
			t.Errorf("ATTACK ESCAPED: %s is served over plain HTTP without credentials (%d bytes; tenant A's name visible: %v)", path, len(body), strings.Contains(body, s.a.Name))
		}
		code, _, err := get(insecure, "https://"+s.metricsURL+path, "")
		if err == nil && code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Errorf("ATTACK ESCAPED: https %s without credentials answered %d, want 401 or 403", path, code)
		}
	}
	// A reader with RBAC for /metrics gets them.
	ns := itest.KubeconfigNS
	must := func(_ any, err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	must(s.super.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"}}, metav1.CreateOptions{}))
	must(s.super.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "isolation-metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{}))
	must(s.super.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "isolation-metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "isolation-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "metrics-reader", Namespace: ns}}}, metav1.CreateOptions{}))
	tr, err := s.super.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "metrics-reader", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, maxWait, "authorized reader gets /metrics", func(ctx context.Context) error {
		code, body, err := get(insecure, "https://"+s.metricsURL+"/metrics", tr.Status.Token)
		if err != nil {
			return err
		}
		if code != http.StatusOK || !strings.Contains(body, "vcsyncer_") {
			return fmt.Errorf("status %d, %d bytes", code, len(body))
		}
		return nil
	})
}
