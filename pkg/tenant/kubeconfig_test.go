package tenant

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/record"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// kubeconfigFixture holds real PEM material and files on disk, so that a kubeconfig the
// validation lets through also builds a working transport, and one it refuses would have
// been accepted by clientcmd (its files exist).
type kubeconfigFixture struct {
	certB64, keyB64         string // base64 PEM of a self-signed certificate and its key
	certFile, keyFile, file string // the same certificate and key on disk; file: a token file
}

func newKubeconfigFixture(t *testing.T) kubeconfigFixture {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("tenant.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := kubeconfigFixture{
		certB64:  base64.StdEncoding.EncodeToString(certPEM),
		keyB64:   base64.StdEncoding.EncodeToString(keyPEM),
		certFile: filepath.Join(dir, "cert.pem"),
		keyFile:  filepath.Join(dir, "key.pem"),
		file:     filepath.Join(dir, "token"),
	}
	for path, data := range map[string][]byte{f.certFile: certPEM, f.keyFile: keyPEM, f.file: []byte("super-cluster-token\n")} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// kubeconfig returns a kubeconfig whose current context "c" uses cluster "k" with the given
// cluster lines and user "u" with the given user lines (YAML, indented by the caller's
// template: each line is put under its section). extra is appended at the end verbatim.
func (f kubeconfigFixture) kubeconfig(cluster, user []string, extra string) []byte {
	r := strings.NewReplacer("$CERTFILE", f.certFile, "$KEYFILE", f.keyFile, "$CERT", f.certB64, "$KEY", f.keyB64, "$FILE", f.file)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n")
	for _, l := range cluster {
		b.WriteString("    " + r.Replace(l) + "\n")
	}
	b.WriteString("contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n  user:\n")
	for _, l := range user {
		b.WriteString("    " + r.Replace(l) + "\n")
	}
	b.WriteString(r.Replace(extra))
	return []byte(b.String())
}

var (
	serverWithCA = []string{"server: https://10.0.0.1:6443", "certificate-authority-data: $CERT"}
	inlineToken  = []string{"token: tenant-token"}
)

func TestParseKubeconfigRefusesNonInlineCredentials(t *testing.T) {
	f := newKubeconfigFixture(t)
	for name, tc := range map[string]struct {
		cluster, user []string
		extra         string
		field         string // the error must name this field
	}{
		"tokenFile": {cluster: serverWithCA, user: []string{"tokenFile: $FILE"}, field: "tokenFile"},
		"tokenFile of the syncer's service account": {cluster: serverWithCA,
			user: []string{"tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"}, field: "tokenFile"},
		// client-go reads tokenFile periodically and lets it override token.
		"token and tokenFile": {cluster: serverWithCA, user: []string{"token: x", "tokenFile: $FILE"}, field: "tokenFile"},
		"exec plugin": {cluster: serverWithCA, user: []string{"exec:", "  apiVersion: client.authentication.k8s.io/v1",
			"  command: /bin/sh", "  args: [-c, 'echo {}']", "  interactiveMode: Never"}, field: "exec"},
		"auth-provider": {cluster: serverWithCA, user: []string{"auth-provider:", "  name: oidc",
			"  config: {idp-issuer-url: 'https://issuer.example', client-id: 'x', id-token: 'z'}"}, field: "auth-provider"},
		"client-certificate and client-key files": {cluster: serverWithCA,
			user: []string{"client-certificate: $CERTFILE", "client-key: $KEYFILE"}, field: "client-certificate"},
		"client-key file only": {cluster: serverWithCA,
			user: []string{"client-certificate-data: $CERT", "client-key: $KEYFILE"}, field: "client-key"},
		"certificate-authority file": {cluster: []string{"server: https://10.0.0.1:6443", "certificate-authority: $CERTFILE"},
			user: inlineToken, field: "certificate-authority"},
		"proxy-url":     {cluster: append([]string{"proxy-url: http://10.0.0.9:3128"}, serverWithCA...), user: inlineToken, field: "proxy-url"},
		"basic auth":    {cluster: serverWithCA, user: []string{"username: admin", "password: secret"}, field: "username"},
		"impersonation": {cluster: serverWithCA, user: []string{"token: x", "as: system:admin", "as-groups: [system:masters]"}, field: "as-groups"},
		"user info in the server URL": {cluster: []string{"server: https://admin:secret@10.0.0.1:6443", "certificate-authority-data: $CERT"},
			user: inlineToken, field: "server"},
	} {
		t.Run(name, func(t *testing.T) {
			data := f.kubeconfig(tc.cluster, tc.user, tc.extra)
			cfg, err := ParseKubeconfig(data)
			if err == nil {
				t.Fatalf("accepted (BearerTokenFile %q, exec %v, auth-provider %v, CertFile %q, CAFile %q)\n%s",
					cfg.BearerTokenFile, cfg.ExecProvider, cfg.AuthProvider, cfg.CertFile, cfg.CAFile, data)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name field %s", err, tc.field)
			}
			if !errors.Is(err, ErrInlineCredentialsRequired) {
				t.Errorf("error %q is not ErrInlineCredentialsRequired", err)
			}
			if err2 := CheckInlineCredentials(data); !errors.Is(err2, ErrInlineCredentialsRequired) || err2.Error() != err.Error() {
				t.Errorf("CheckInlineCredentials = %v; want the same error as ParseKubeconfig", err2)
			}
		})
	}
}

// Every refusal says what to write instead.
func TestInlineCredentialsErrorSaysWhatToDo(t *testing.T) {
	f := newKubeconfigFixture(t)
	data := f.kubeconfig([]string{"server: https://10.0.0.1:6443", "certificate-authority: $CERTFILE", "proxy-url: socks5://10.0.0.9:1080"},
		[]string{"tokenFile: $FILE", "client-certificate: $CERTFILE", "client-key: $KEYFILE",
			"exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true, interactiveMode: Never}"}, "")
	err := CheckInlineCredentials(data)
	var ice *InlineCredentialsError
	if !errors.As(err, &ice) {
		t.Fatalf("CheckInlineCredentials = %v; want an *InlineCredentialsError", err)
	}
	want := map[string]string{
		`clusters["k"].cluster.certificate-authority`: "certificate-authority-data",
		`clusters["k"].cluster.proxy-url`:             "HTTPS_PROXY",
		`users["u"].user.tokenFile`:                   "token:",
		`users["u"].user.exec`:                        "token:",
		`users["u"].user.client-certificate`:          "client-certificate-data",
		`users["u"].user.client-key`:                  "client-key-data",
	}
	if len(ice.Problems) != len(want) {
		t.Errorf("%d problems, want %d: %q", len(ice.Problems), len(want), ice.Problems)
	}
	for field, fix := range want {
		found := false
		for _, p := range ice.Problems {
			if strings.HasPrefix(p, field+": ") {
				found = true
				if !strings.Contains(p, fix) {
					t.Errorf("%q does not say to use %s", p, fix)
				}
			}
		}
		if !found {
			t.Errorf("no problem names %s: %q", field, ice.Problems)
		}
	}
}

// Tenant-chosen names and paths are cut in messages: a condition message over the API's 32768
// bytes would make every status write fail and the Tenant be retried for ever.
func TestInlineCredentialsErrorIsBounded(t *testing.T) {
	long := strings.Repeat("x", 100000)
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: c
clusters: [{name: %[1]s, cluster: {server: "https://10.0.0.1:6443", certificate-authority: /%[1]s}}]
contexts: [{name: c, context: {cluster: %[1]s, user: %[1]s}}]
users: [{name: %[1]s, user: {tokenFile: /%[1]s, client-certificate: /%[1]s, client-key: /%[1]s, auth-provider: {name: %[1]s}, exec: {apiVersion: v1, command: %[1]s}}}]
`, long)
	err := CheckInlineCredentials([]byte(data))
	if !errors.Is(err, ErrInlineCredentialsRequired) {
		t.Fatalf("CheckInlineCredentials = %.200v", err)
	}
	if n := len(err.Error()); n > 8192 {
		t.Errorf("message of %d bytes", n)
	}
	if err := CheckInlineCredentials([]byte("apiVersion: v1\nkind: Config\ncurrent-context: " + long + "\n")); err == nil || len(err.Error()) > 1024 {
		t.Errorf("missing context: message of %d bytes", len(err.Error()))
	}
}

func TestCheckInlineCredentialsStructure(t *testing.T) {
	for name, data := range map[string]string{
		"not YAML":                "{",
		"no current-context":      "apiVersion: v1\nkind: Config\nclusters: [{name: k, cluster: {server: 'https://x'}}]\n",
		"context without cluster": "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n",
	} {
		err := CheckInlineCredentials([]byte(data))
		if err == nil || errors.Is(err, ErrInlineCredentialsRequired) || !strings.HasPrefix(err.Error(), "invalid kubeconfig") {
			t.Errorf("%s: CheckInlineCredentials = %v; want an invalid kubeconfig error", name, err)
		}
	}
}

// The second line of defence refuses a rest.Config with file, plugin, proxy or impersonation
// settings, whichever way they got there.
func TestCheckRESTConfig(t *testing.T) {
	if err := checkRESTConfig(&rest.Config{Host: "https://10.0.0.1:6443", BearerToken: "t",
		TLSClientConfig: rest.TLSClientConfig{CAData: []byte("x"), CertData: []byte("x"), KeyData: []byte("x")}}); err != nil {
		t.Errorf("inline config refused: %v", err)
	}
	for field, set := range map[string]func(*rest.Config){
		"BearerTokenFile":          func(c *rest.Config) { c.BearerTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token" },
		"ExecProvider":             func(c *rest.Config) { c.ExecProvider = &clientcmdapi.ExecConfig{Command: "sh"} },
		"AuthProvider":             func(c *rest.Config) { c.AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc"} },
		"TLSClientConfig.CertFile": func(c *rest.Config) { c.CertFile = "/c" },
		"TLSClientConfig.KeyFile":  func(c *rest.Config) { c.KeyFile = "/k" },
		"TLSClientConfig.CAFile":   func(c *rest.Config) { c.CAFile = "/ca" },
		"Proxy":                    func(c *rest.Config) { c.Proxy = http.ProxyFromEnvironment },
		"Username/Password":        func(c *rest.Config) { c.Password = "p" },
		"Impersonate":              func(c *rest.Config) { c.Impersonate.Groups = []string{"system:masters"} },
		"Host user info":           func(c *rest.Config) { c.Host = "admin:secret@10.0.0.1:6443" },
	} {
		c := &rest.Config{Host: "https://10.0.0.1:6443"}
		set(c)
		if err := checkRESTConfig(c); !errors.Is(err, ErrInlineCredentialsRequired) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: checkRESTConfig = %v; want a refusal naming it", field, err)
		}
	}
}

// A user named "" is the one clientcmd uses for a context without user.
func TestParseKubeconfigChecksTheUserOfAContextWithoutUser(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}
contexts:
- name: c
  context: {cluster: k}
users:
- name: ""
  user: {tokenFile: ` + newKubeconfigFixture(t).file + `}
`)
	if cfg, err := ParseKubeconfig(data); err == nil {
		t.Fatalf("accepted the unnamed user's tokenFile (BearerTokenFile %q)", cfg.BearerTokenFile)
	} else if !strings.Contains(err.Error(), "tokenFile") {
		t.Errorf("error %q does not name tokenFile", err)
	}
}

func TestParseKubeconfigAcceptsInlineCredentials(t *testing.T) {
	f := newKubeconfigFixture(t)
	for name, tc := range map[string]struct {
		cluster, user []string
		extra         string
	}{
		"token":              {cluster: serverWithCA, user: inlineToken},
		"client certificate": {cluster: serverWithCA, user: []string{"client-certificate-data: $CERT", "client-key-data: $KEY"}},
		"tls-server-name, compression off and extensions": {cluster: append([]string{"tls-server-name: tenant.example",
			"disable-compression: true", "extensions:", "- name: x.example", "  extension: {provider: x}"}, serverWithCA...), user: inlineToken},
		"insecure-skip-tls-verify": {cluster: []string{"server: https://10.0.0.1:6443", "insecure-skip-tls-verify: true"}, user: inlineToken},
		"no user":                  {cluster: serverWithCA},
		// Only the current context's cluster and user reach the rest.Config.
		"unused context with file credentials": {cluster: serverWithCA, user: inlineToken, extra: `- name: other
  user: {tokenFile: $FILE, client-certificate: $CERTFILE, client-key: $KEYFILE}
`},
	} {
		t.Run(name, func(t *testing.T) {
			user := tc.user
			data := f.kubeconfig(tc.cluster, user, tc.extra)
			if name == "no user" {
				data = []byte(strings.Replace(string(data), "    user: u\n", "", 1))
			}
			cfg, err := ParseKubeconfig(data)
			if err != nil {
				t.Fatalf("refused: %v\n%s", err, data)
			}
			if cfg.BearerTokenFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.CAFile != "" || cfg.ExecProvider != nil || cfg.AuthProvider != nil {
				t.Errorf("rest.Config has file or plugin credentials: %+v", cfg)
			}
		})
	}
}

func TestReconcileRefusesFileCredentials(t *testing.T) {
	f := newKubeconfigFixture(t)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, tenancyv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	ten := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "uid-a", Finalizers: []string{Finalizer}},
		Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: tenancyv1alpha1.SecretKeyRef{Namespace: "vc", Name: "a-kubeconfig"}}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "vc", Name: "a-kubeconfig"},
		Data: map[string][]byte{"kubeconfig": f.kubeconfig([]string{"server: https://127.0.0.1:1", "certificate-authority-data: $CERT"},
			[]string{"tokenFile: $FILE"}, "")}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ten, sec).WithStatusSubresource(ten).Build()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := record.NewFakeRecorder(10)
	r := &Reconciler{Client: c, Registry: NewRegistry(ctx, nopHooks{}), KubeconfigNamespace: "vc", Recorder: rec}
	defer r.Registry.remove("a")

	res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: "a"}})
	if err != nil || res.RequeueAfter != 0 {
		t.Fatalf("Reconcile = %+v, %v; want no error and no requeue (the Secret watch retries)", res, err)
	}
	if _, running := r.Registry.Get("a"); running {
		t.Error("a Cluster was started with the refused kubeconfig")
	}
	got := &tenancyv1alpha1.Tenant{}
	if err := c.Get(ctx, types.NamespacedName{Name: "a"}, got); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, tenancyv1alpha1.ConditionKubeconfigValid)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "InlineCredentialsRequired" || !strings.Contains(cond.Message, "tokenFile") {
		t.Errorf("KubeconfigValid = %+v; want False, InlineCredentialsRequired, naming tokenFile", cond)
	}
	select {
	case e := <-rec.Events:
		if !strings.HasPrefix(e, "Warning InlineCredentialsRequired ") || !strings.Contains(e, "tokenFile") {
			t.Errorf("event %q; want a Warning InlineCredentialsRequired naming tokenFile", e)
		}
	default:
		t.Error("no Event recorded")
	}
}

type nopHooks struct{}

func (nopHooks) ClusterStarting(*Cluster) {}
func (nopHooks) ClusterSynced(*Cluster)   {}
func (nopHooks) ClusterStopped(*Cluster)  {}
func (nopHooks) PolicyChanged(*Cluster)   {}
