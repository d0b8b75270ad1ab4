package tenant

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ErrInlineCredentialsRequired is wrapped by the errors of CheckInlineCredentials and
// ParseKubeconfig when a tenant kubeconfig asks the syncer to read a local file, run a
// command, use an auth-provider plugin, pick its own proxy or act as another identity.
//
// A tenant kubeconfig is written from what the tenant (hostile, by the threat model) supplies,
// but it is evaluated inside the syncer's Pod: a tokenFile of
// /var/run/secrets/kubernetes.io/serviceaccount/token would send the syncer's own
// super-cluster token to a server the tenant chose, and an exec plugin would run a command in
// the syncer's container. Only credentials carried in the kubeconfig itself are accepted.
var ErrInlineCredentialsRequired = errors.New("tenant kubeconfigs must carry inline credentials only")

// InlineCredentialsError lists every field of a tenant kubeconfig that is not allowed, each
// with what to write instead. It wraps ErrInlineCredentialsRequired.
type InlineCredentialsError struct {
	// Problems are "<field path>: <why>; <what to do instead>", in a stable order.
	Problems []string
}

// Error joins the problems with "; " after a fixed prefix.
func (e *InlineCredentialsError) Error() string {
	return "kubeconfig must carry inline credentials only: " + strings.Join(e.Problems, "; ")
}

// Unwrap returns ErrInlineCredentialsRequired.
func (e *InlineCredentialsError) Unwrap() error { return ErrInlineCredentialsRequired }

// Fields of a tenant kubeconfig's current context that the syncer accepts. Everything else
// set in the used cluster or user is refused (an allowlist: a field added to clientcmd later
// is refused until it is reviewed and listed here).
//
//	cluster: server (without user info), certificate-authority-data,
//	         tls-server-name, insecure-skip-tls-verify, disable-compression, extensions
//	user:    token, client-certificate-data, client-key-data, extensions
//
// insecure-skip-tls-verify and extensions are allowed because they only concern the tenant's
// own connection: the tenant chooses the server anyway, and extensions are read only by exec
// plugins, which are refused. Contexts, clusters and users other than the current context's
// are ignored: clientcmd never reads them into a rest.Config.

// CheckInlineCredentials parses kubeconfig bytes and checks the cluster and user of the
// current context against the allowlist above. It returns nil when they carry inline
// credentials only; an *InlineCredentialsError (wrapping ErrInlineCredentialsRequired) naming
// every refused field and what to write instead; or an "invalid kubeconfig" error when the
// bytes do not parse or the current context, or its cluster, is missing. It reads no files.
func CheckInlineCredentials(data []byte) error {
	raw, err := clientcmd.Load(data)
	if err != nil {
		return fmt.Errorf("invalid kubeconfig: %w", err)
	}
	return checkInlineCredentials(raw)
}

// checkInlineCredentials is CheckInlineCredentials on a parsed kubeconfig. It looks the
// context, cluster and user up the way clientcmd's DirectClientConfig does (by name, the empty
// name included), so the entries checked are the entries a rest.Config is built from.
func checkInlineCredentials(raw *clientcmdapi.Config) error {
	kctx, ok := raw.Contexts[raw.CurrentContext]
	if !ok || kctx == nil {
		return fmt.Errorf("invalid kubeconfig: current-context %s names no context in the file", quote(raw.CurrentContext))
	}
	cluster, ok := raw.Clusters[kctx.Cluster]
	if !ok || cluster == nil {
		return fmt.Errorf("invalid kubeconfig: context %s uses cluster %s, which is not in the file", quote(raw.CurrentContext), quote(kctx.Cluster))
	}
	problems := clusterProblems(fmt.Sprintf("clusters[%s].cluster", quote(kctx.Cluster)), *cluster)
	if user, ok := raw.AuthInfos[kctx.AuthInfo]; ok && user != nil {
		problems = append(problems, userProblems(fmt.Sprintf("users[%s].user", quote(kctx.AuthInfo)), *user)...)
	}
	if len(problems) > 0 {
		return &InlineCredentialsError{Problems: problems}
	}
	return nil
}

// clusterProblems returns the refused fields of cluster c, whose kubeconfig path is at.
func clusterProblems(at string, c clientcmdapi.Cluster) []string {
	var p []string
	if c.CertificateAuthority != "" {
		p = append(p, at+".certificate-authority: the syncer would read the file "+quote(c.CertificateAuthority)+
			" in its own Pod; embed the CA certificate with certificate-authority-data (`kubectl config view --flatten --minify` or `vc-syncer tenant add` does it)")
	}
	if c.ProxyURL != "" {
		p = append(p, at+".proxy-url: the tenant would choose the proxy the syncer connects through, bypassing the syncer's own egress settings; remove it (the operator sets a proxy with HTTPS_PROXY/NO_PROXY in the syncer's environment)")
	}
	if serverUserInfo(c.Server) {
		p = append(p, at+".server: the URL carries a user name or password (basic authentication); remove them and authenticate with token or client-certificate-data/client-key-data")
	}
	// Whatever is not allowed and not named above (fields clientcmd may add later).
	rest := c
	rest.LocationOfOrigin, rest.Server, rest.TLSServerName, rest.InsecureSkipTLSVerify = "", "", "", false
	rest.CertificateAuthority, rest.CertificateAuthorityData, rest.ProxyURL = "", nil, ""
	rest.DisableCompression, rest.Extensions = false, nil
	if !reflect.DeepEqual(rest, clientcmdapi.Cluster{}) {
		p = append(p, at+": sets a field the syncer does not allow; only server, certificate-authority-data, tls-server-name, insecure-skip-tls-verify, disable-compression and extensions are allowed")
	}
	return p
}

// quote returns v as a Go-quoted string of at most 128 bytes of v: values in messages come
// from the tenant, and a condition message is limited to 32768 bytes by the API.
func quote(v string) string {
	if len(v) > 128 {
		return strconv.Quote(v[:128]) + "..."
	}
	return strconv.Quote(v)
}

// serverUserInfo reports whether server carries user info, read the way client-go's
// rest.DefaultServerURL reads it (a value without scheme or host is parsed again with a
// scheme in front).
func serverUserInfo(server string) bool {
	u, err := url.Parse(server)
	if err != nil || u.Scheme == "" || u.Host == "" {
		u, err = url.Parse("https://" + server)
	}
	return err == nil && u.User != nil
}

// userProblems returns the refused fields of user u, whose kubeconfig path is at.
func userProblems(at string, u clientcmdapi.AuthInfo) []string {
	const inline = "embed the token with token: or a client certificate with client-certificate-data/client-key-data"
	var p []string
	if u.TokenFile != "" {
		p = append(p, at+".tokenFile: the syncer would read the file "+quote(u.TokenFile)+
			" in its own Pod (client-go re-reads it and prefers it over token:); embed the token with token: (`vc-syncer tenant add --embed-token-file` does it)")
	}
	if u.Exec != nil {
		p = append(p, at+".exec: the syncer would run the command "+quote(u.Exec.Command)+" in its own container; "+inline+
			" (for example a ServiceAccount token from `kubectl create token`)")
	}
	if u.AuthProvider != nil {
		p = append(p, at+".auth-provider: auth-provider plugins ("+quote(u.AuthProvider.Name)+") read and write local state in the syncer's Pod; "+inline)
	}
	if u.ClientCertificate != "" {
		p = append(p, at+".client-certificate: the syncer would read the file "+quote(u.ClientCertificate)+
			" in its own Pod; embed the certificate with client-certificate-data (`kubectl config view --flatten --minify` or `vc-syncer tenant add` does it)")
	}
	if u.ClientKey != "" {
		p = append(p, at+".client-key: the syncer would read the file "+quote(u.ClientKey)+
			" in its own Pod; embed the key with client-key-data (`kubectl config view --flatten --minify` or `vc-syncer tenant add` does it)")
	}
	if u.Username != "" || u.Password != "" {
		p = append(p, at+".username/password: basic authentication is not accepted (kube-apiserver removed it in v1.19); "+inline)
	}
	if u.Impersonate != "" || u.ImpersonateUID != "" || len(u.ImpersonateGroups) > 0 || len(u.ImpersonateUserExtra) > 0 {
		p = append(p, at+".as/as-uid/as-groups/as-user-extra: impersonation is not accepted; give the syncer a credential of the identity it should act as")
	}
	rest := u
	rest.LocationOfOrigin, rest.Token, rest.ClientCertificateData, rest.ClientKeyData, rest.Extensions = "", "", nil, nil, nil
	rest.TokenFile, rest.Exec, rest.AuthProvider, rest.ClientCertificate, rest.ClientKey = "", nil, nil, "", ""
	rest.Username, rest.Password = "", ""
	rest.Impersonate, rest.ImpersonateUID, rest.ImpersonateGroups, rest.ImpersonateUserExtra = "", "", nil, nil
	if !reflect.DeepEqual(rest, clientcmdapi.AuthInfo{}) {
		p = append(p, at+": sets a field the syncer does not allow; only token, client-certificate-data, client-key-data and extensions are allowed")
	}
	return p
}

// checkRESTConfig checks a rest.Config built from a tenant kubeconfig for anything that makes
// client-go read a file, run a plugin, choose a proxy or impersonate: a second line of defence
// behind checkInlineCredentials, for fields clientcmd may fill from elsewhere. It returns an
// *InlineCredentialsError naming the rest.Config fields, or nil.
func checkRESTConfig(cfg *rest.Config) error {
	var p []string
	add := func(set bool, field string) {
		if set {
			p = append(p, "rest.Config."+field+" is set")
		}
	}
	add(cfg.BearerTokenFile != "", "BearerTokenFile")
	add(cfg.ExecProvider != nil, "ExecProvider")
	add(cfg.AuthProvider != nil, "AuthProvider")
	add(cfg.AuthConfigPersister != nil, "AuthConfigPersister")
	add(cfg.CertFile != "", "TLSClientConfig.CertFile")
	add(cfg.KeyFile != "", "TLSClientConfig.KeyFile")
	add(cfg.CAFile != "", "TLSClientConfig.CAFile")
	add(cfg.Proxy != nil, "Proxy")
	add(cfg.Username != "" || cfg.Password != "", "Username/Password")
	add(!reflect.DeepEqual(cfg.Impersonate, rest.ImpersonationConfig{}), "Impersonate")
	u, _, err := rest.DefaultServerUrlFor(cfg)
	add(err == nil && u.User != nil, "Host user info")
	add(cfg.Transport != nil || cfg.WrapTransport != nil || cfg.Dial != nil, "Transport/WrapTransport/Dial")
	if len(p) > 0 {
		return &InlineCredentialsError{Problems: p}
	}
	return nil
}

// ParseKubeconfig turns tenant kubeconfig bytes into a rest.Config. It first checks the
// current context's cluster and user with CheckInlineCredentials (before clientcmd reads any
// file), then builds the rest.Config with clientcmd, checks it again (checkRESTConfig) and
// checks that its TLS material builds a transport. It returns an error that says what is
// wrong: an *InlineCredentialsError (errors.Is ErrInlineCredentialsRequired) for a refused
// field, otherwise a parse error, a missing server address or unusable certificates.
func ParseKubeconfig(data []byte) (*rest.Config, error) {
	raw, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("invalid kubeconfig: %w", err)
	}
	if err := checkInlineCredentials(raw); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, raw.CurrentContext, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("invalid kubeconfig: %w", err)
	}
	if cfg.Host == "" {
		return nil, errors.New("invalid kubeconfig: no server address in the current context")
	}
	if err := checkRESTConfig(cfg); err != nil {
		return nil, err
	}
	if _, err := rest.TransportFor(cfg); err != nil {
		return nil, fmt.Errorf("invalid kubeconfig credentials or certificates: %w", err)
	}
	return cfg, nil
}
