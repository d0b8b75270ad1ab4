package deploy

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// testMetricsAuth checks the syncer's metrics port at addr (the chart's --metrics-secure=true)
// on the real super apiserver's authentication and authorization: HTTPS; 401 without a
// bearer token, 500 with a token the apiserver does not know; 403 with the syncer's own token
// (saCfg), which lacks the metrics-reader ClusterRole; 200 with the token of ServiceAccount
// monitoring/prometheus, bound to it by the chart's metrics.readers.
func testMetricsAuth(t *testing.T, env *localcluster.Environment, saCfg *rest.Config, addr string) {
	ctx := t.Context()
	super := env.Super.Client
	if _, err := super.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "monitoring"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := super.CoreV1().ServiceAccounts("monitoring").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tr, err := super.CoreV1().ServiceAccounts("monitoring").CreateToken(ctx, "prometheus",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prometheus := tr.Status.Token

	// The syncer's certificate is self-signed (no --metrics-cert-dir).
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(ctx context.Context, path, token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+path, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), nil
	}
	expect := func(path, token, who string, want int, contains string) {
		t.Helper()
		// Eventually: the server starts with the manager, and a new RoleBinding reaches the
		// apiserver's authorizer within moments (the syncer caches a denial for 30 s, so the
		// reader's token is asked only after the others).
		itest.Eventually(t, time.Minute, fmt.Sprintf("GET %s %s: %d", path, who, want), func(ctx context.Context) error {
			code, body, err := get(ctx, path, token)
			if err != nil {
				return err
			}
			if code != want || !strings.Contains(body, contains) {
				if len(body) > 300 {
					body = body[:300]
				}
				return fmt.Errorf("status %d, body %q", code, body)
			}
			return nil
		})
	}
	for _, path := range []string{"/metrics", "/", "/status.json"} {
		expect(path, "", "without a token", http.StatusUnauthorized, "Unauthorized")
		// A token the apiserver rejects comes back from the TokenReview with status.error set,
		// which controller-runtime's filter answers with 500 (refused all the same).
		expect(path, "not-a-token", "with an unknown token", http.StatusInternalServerError, "Authentication failed")
		expect(path, saCfg.BearerToken, "with a token lacking the metrics-reader ClusterRole", http.StatusForbidden, "denied")
	}
	expect("/metrics", prometheus, "with the metrics-reader ClusterRole", http.StatusOK, "vcsyncer_")
	expect("/", prometheus, "with the metrics-reader ClusterRole", http.StatusOK, "<html")
	expect("/status.json", prometheus, "with the metrics-reader ClusterRole", http.StatusOK, `"tenants"`)
	// The reader may read, nothing more: a path outside the ClusterRole is refused.
	expect("/debug", prometheus, "with the metrics-reader ClusterRole, outside its paths", http.StatusForbidden, "denied")
	// Plain HTTP is not served.
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP GET /metrics: 200; want no metrics over plain HTTP")
		}
	}
}
