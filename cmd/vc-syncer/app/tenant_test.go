package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// writeTenantKubeconfig writes cert.pem, key.pem, token and a kubeconfig into a temporary
// directory. The kubeconfig's current context uses the user lines given (relative file names
// are resolved against the directory by clientcmd) and a cluster whose CA is the file
// cert.pem; an unused second context points at a user with an exec plugin.
func writeTenantKubeconfig(t *testing.T, user ...string) string {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("tenant.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kc := `apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster: {server: "https://10.0.0.1:6443", certificate-authority: cert.pem}
contexts:
- name: c
  context: {cluster: k, user: u}
- name: unused
  context: {cluster: k, user: plugin}
users:
- name: u
  user:
    ` + strings.Join(user, "\n    ") + `
- name: plugin
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true, interactiveMode: Never}
`
	for name, data := range map[string][]byte{"cert.pem": certPEM, "key.pem": keyPEM, "token": []byte("tenant-token\n"), "kubeconfig": []byte(kc)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "kubeconfig")
}

func TestFlattenKubeconfigEmbedsCertificateFiles(t *testing.T) {
	data, err := flattenKubeconfig(writeTenantKubeconfig(t, "client-certificate: cert.pem", "client-key: key.pem"), false)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Contexts) != 1 || len(cfg.AuthInfos) != 1 || len(cfg.Clusters) != 1 {
		t.Errorf("not minified to the current context: %d contexts, %d users, %d clusters", len(cfg.Contexts), len(cfg.AuthInfos), len(cfg.Clusters))
	}
	u, k := cfg.AuthInfos["u"], cfg.Clusters["k"]
	if u == nil || k == nil || u.ClientCertificate != "" || u.ClientKey != "" || k.CertificateAuthority != "" ||
		len(u.ClientCertificateData) == 0 || len(u.ClientKeyData) == 0 || len(k.CertificateAuthorityData) == 0 {
		t.Errorf("files not embedded:\n%s", data)
	}
}

func TestFlattenKubeconfigRefusesFileAndPluginCredentials(t *testing.T) {
	for name, tc := range map[string]struct {
		user []string
		want []string // substrings of the error
	}{
		"tokenFile":           {user: []string{"tokenFile: token"}, want: []string{"tokenFile", "--embed-token-file"}},
		"token and tokenFile": {user: []string{"token: x", "tokenFile: token"}, want: []string{"tokenFile", "--embed-token-file"}},
		"exec plugin": {user: []string{"exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true, interactiveMode: Never}"},
			want: []string{"exec", "token"}},
		"auth-provider": {user: []string{"auth-provider: {name: oidc, config: {idp-issuer-url: 'https://issuer.example', client-id: 'x', id-token: 'z'}}"},
			want: []string{"auth-provider"}},
	} {
		t.Run(name, func(t *testing.T) {
			data, err := flattenKubeconfig(writeTenantKubeconfig(t, tc.user...), false)
			if err == nil {
				t.Fatalf("accepted:\n%s", data)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// --embed-token-file stores the token client-go would use: the file's content, which wins
// over token: when both are set.
func TestFlattenKubeconfigEmbedTokenFile(t *testing.T) {
	for name, user := range map[string][]string{
		"tokenFile":           {"tokenFile: token"},
		"token and tokenFile": {"token: stale", "tokenFile: token"},
	} {
		t.Run(name, func(t *testing.T) {
			data, err := flattenKubeconfig(writeTenantKubeconfig(t, user...), true)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := clientcmd.Load(data)
			if err != nil {
				t.Fatal(err)
			}
			if u := cfg.AuthInfos["u"]; u == nil || u.Token != "tenant-token" || u.TokenFile != "" {
				t.Errorf("token not embedded:\n%s", data)
			}
		})
	}
	empty := writeTenantKubeconfig(t, "tokenFile: token")
	if err := os.WriteFile(filepath.Join(filepath.Dir(empty), "token"), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := flattenKubeconfig(empty, true); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty token file: err %v, want a refusal", err)
	}
}
