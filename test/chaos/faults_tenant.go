package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// TenantTarget is what the tenant faults of this file act on (a part of Target).
type TenantTarget struct {
	// StopTenantAPIServer kills tenant i's kube-apiserver and leaves it down;
	// StartTenantAPIServer starts it again and returns once it is ready
	// (localcluster.ControlPlane.StopAPIServer and StartAPIServer; TenantDownLong).
	StopTenantAPIServer  func(i int) error
	StartTenantAPIServer func(ctx context.Context, i int) error
	// TenantAdmins are admin clients of the tenants, by tenant index (KubeconfigRotate).
	TenantAdmins []kubernetes.Interface
	// Proxies are the loopback proxies between the syncer and each tenant apiserver, by tenant
	// index: the kubeconfigs registered for the syncer point at them (LossyProxy).
	Proxies []*Proxy
	// Violate reports what a fault itself checks (TenantDownLong: the Tenant reported
	// Unreachable while its apiserver was down). Nil: not reported.
	Violate func(Violation)
	// UnreachableBound overrides UnreachableReportBound (for tests).
	UnreachableBound time.Duration
}

// InvUnreachableReported is the invariant that a Tenant whose apiserver is down for longer
// than UnreachableReportBound is reported Unreachable (status.phase) within it.
const InvUnreachableReported = "tenant-reported-unreachable"

// UnreachableReportBound is how long a tenant apiserver may be down before its Tenant must
// read Unreachable: the syncer probes a synced tenant every 10 s with a 5 s timeout, then the
// Tenant controller writes the status (seen after 6.6-20.8 s in the soaks of seeds 41, 42
// and 45); a shorter down is not checked.
const UnreachableReportBound = 25 * time.Second

// RotateLabel marks the ServiceAccounts and ClusterRoleBindings KubeconfigRotate creates in
// a tenant (namespace kube-system); the previous ones are deleted to revoke their tokens.
const RotateLabel = "chaos.vcsyncer.io/kubeconfig-rotate"

func init() {
	// Registered here, not in the map literal of faults.go, so that kinds added elsewhere merge.
	Injectors[TenantDownLong] = tenantDownLong
	Injectors[KubeconfigRotate] = kubeconfigRotate
	Injectors[LossyProxy] = lossyProxy
}

// tenantPhase returns the phase and the Connected condition's reason of Tenant i ("" when
// it cannot be read).
func tenantPhase(ctx context.Context, t *Target, i int) (tenancyv1alpha1.TenantPhase, string) {
	if t.Tenancy == nil || i >= len(t.TenantNames) {
		return "", ""
	}
	tn := &tenancyv1alpha1.Tenant{}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := t.Tenancy.Get(cctx, client.ObjectKey{Name: t.TenantNames[i]}, tn); err != nil {
		return "", ""
	}
	reason := ""
	if c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionConnected); c != nil {
		reason = string(c.Status) + "/" + c.Reason
	}
	return tn.Status.Phase, reason
}

// waitPhase polls Tenant i until its phase is want or bound passes, and returns how long it
// took (-1: not within bound).
func waitPhase(ctx context.Context, t *Target, i int, want tenancyv1alpha1.TenantPhase, bound time.Duration) time.Duration {
	start := time.Now()
	for {
		if p, _ := tenantPhase(ctx, t, i); p == want {
			return time.Since(start)
		}
		if time.Since(start) > bound || ctx.Err() != nil {
			return -1
		}
		sleepCtx(ctx, 250*time.Millisecond)
	}
}

func fmtWait(d time.Duration) string {
	if d < 0 {
		return "not within the bound"
	}
	return "after " + d.Round(100*time.Millisecond).String()
}

// tenantDownLong kills tenant f.Target's kube-apiserver, keeps it down for the hold while it
// watches the Tenant's status, starts it again and waits (bounded) for the Tenant to be
// Running again. A hold of at least UnreachableReportBound in which the Tenant never read
// Unreachable is reported to t.Violate.
func tenantDownLong(ctx context.Context, t *Target, f Fault) (string, error) {
	if t.StopTenantAPIServer == nil || t.StartTenantAPIServer == nil || len(t.TenantUIDs) == 0 {
		return "", errNoCandidate
	}
	i := f.Target % len(t.TenantUIDs)
	if err := t.StopTenantAPIServer(i); err != nil {
		return "", fmt.Errorf("stopping tenant %d kube-apiserver: %w", i, err)
	}
	start := time.Now()
	reported, reason := time.Duration(-1), ""
	for time.Since(start) < f.Hold() && ctx.Err() == nil {
		if reported < 0 {
			if p, r := tenantPhase(ctx, t, i); p == tenancyv1alpha1.TenantUnreachable {
				reported, reason = time.Since(start), r
			}
		}
		sleepCtx(ctx, min(500*time.Millisecond, f.Hold()-time.Since(start)))
	}
	down := time.Since(start)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	if err := t.StartTenantAPIServer(rctx, i); err != nil {
		return "", fmt.Errorf("starting tenant %d kube-apiserver again: %w", i, err)
	}
	ready := time.Since(start) - down
	running := waitPhase(ctx, t, i, tenancyv1alpha1.TenantRunning, time.Minute)
	name := fmt.Sprint(i)
	if i < len(t.TenantNames) {
		name = t.TenantNames[i]
	}
	bound := UnreachableReportBound
	if t.UnreachableBound > 0 {
		bound = t.UnreachableBound
	}
	if reported < 0 && down >= bound && t.Violate != nil && ctx.Err() == nil {
		p, r := tenantPhase(ctx, t, i)
		t.Violate(Violation{Invariant: InvUnreachableReported, Key: "tenant/" + name,
			Message: fmt.Sprintf("fault #%d: tenant %s kube-apiserver down for %s, the Tenant never read Unreachable (phase now %q, Connected %s)", f.Seq, name, down.Round(time.Second), p, r)})
	}
	return fmt.Sprintf("tenant %d kube-apiserver down for %s: Tenant Unreachable %s (Connected %s); started again, ready after %s, Tenant Running again %s",
		i, down.Round(100*time.Millisecond), fmtWait(reported), reason, ready.Round(100*time.Millisecond), fmtWait(running)), nil
}

// kubeconfigRotate rotates tenant f.Target's kubeconfig Secret (the Tenant's
// spec.kubeconfigSecretRef) to a new credential: a token of a new ServiceAccount of the
// tenant bound to cluster-admin, the server and CA kept. The previous rotations'
// ServiceAccounts are deleted (their tokens revoked) at once (f.Pick even) or after the hold
// (odd). The first rotation's previous credential, the admin certificate, cannot be revoked.
func kubeconfigRotate(ctx context.Context, t *Target, f Fault) (string, error) {
	if t.Tenancy == nil || t.Super == nil || len(t.TenantNames) == 0 || len(t.TenantAdmins) < len(t.TenantNames) {
		return "", errNoCandidate
	}
	i := f.Target % len(t.TenantNames)
	tc := t.TenantAdmins[i]
	tn := &tenancyv1alpha1.Tenant{}
	if err := t.Tenancy.Get(ctx, client.ObjectKey{Name: t.TenantNames[i]}, tn); err != nil {
		return "", fmt.Errorf("reading Tenant %s: %w", t.TenantNames[i], err)
	}
	ref := tn.Spec.KubeconfigSecretRef
	sa := fmt.Sprintf("chaos-rotate-%d-%d", f.Seq, f.Pick%100000)
	labels := map[string]string{RotateLabel: "true"}
	if _, err := tc.CoreV1().ServiceAccounts(metav1.NamespaceSystem).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: sa, Labels: labels}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("tenant %d: creating ServiceAccount %s: %w", i, sa, err)
	}
	if _, err := tc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa, Labels: labels},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: metav1.NamespaceSystem, Name: sa}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("tenant %d: creating ClusterRoleBinding %s: %w", i, sa, err)
	}
	exp := int64((24 * time.Hour).Seconds())
	tr, err := tc.CoreV1().ServiceAccounts(metav1.NamespaceSystem).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("tenant %d: requesting a token of %s: %w", i, sa, err)
	}
	if tr.Status.Token == "" {
		return "", fmt.Errorf("tenant %d: the token request of %s gave no token", i, sa)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sec, err := t.Super.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		kc, err := rotatedKubeconfig(sec.Data[ref.KubeconfigKey()], sa, tr.Status.Token)
		if err != nil {
			return err
		}
		sec.Data[ref.KubeconfigKey()] = kc
		_, err = t.Super.CoreV1().Secrets(ref.Namespace).Update(ctx, sec, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("rotating Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	now := f.Pick%2 == 0
	var revoked []string
	if now {
		revoked, err = revokeRotated(ctx, tc, sa)
	}
	sleepCtx(ctx, f.Hold())
	if !now {
		revoked, err = revokeRotated(ctx, tc, sa)
	}
	if err != nil {
		return "", fmt.Errorf("tenant %d: revoking the previous credentials: %w", i, err)
	}
	when := map[bool]string{true: "at once", false: "after " + f.Hold().String()}[now]
	if len(revoked) == 0 {
		revoked = []string{"none (the admin certificate cannot be revoked)"}
	}
	// The Tenant may never have left Running (the new Cluster is put in place at once): the
	// settle check says whether syncing went on.
	running := waitPhase(ctx, t, i, tenancyv1alpha1.TenantRunning, 30*time.Second)
	return fmt.Sprintf("Secret %s/%s rotated to a token of ServiceAccount kube-system/%s; previous ServiceAccounts revoked %s: %s; Tenant Running %s after the grace",
		ref.Namespace, ref.Name, sa, when, strings.Join(revoked, ","), fmtWait(running)), nil
}

// rotatedKubeconfig returns kubeconfig with its current context's user replaced by one that
// authenticates with token (named user); the cluster (server, CA) is kept.
func rotatedKubeconfig(kubeconfig []byte, user, token string) ([]byte, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parsing the kubeconfig: %w", err)
	}
	ctxName := cfg.CurrentContext
	kctx := cfg.Contexts[ctxName]
	if kctx == nil {
		return nil, fmt.Errorf("the kubeconfig has no current context %q", ctxName)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[kctx.Cluster] = cfg.Clusters[kctx.Cluster]
	out.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	out.Contexts[ctxName] = &clientcmdapi.Context{Cluster: kctx.Cluster, AuthInfo: user}
	out.CurrentContext = ctxName
	return clientcmd.Write(*out)
}

// revokeRotated deletes the ServiceAccounts (and their ClusterRoleBindings) of earlier
// rotations in tenant tc, all but keep, and returns their names.
func revokeRotated(ctx context.Context, tc kubernetes.Interface, keep string) ([]string, error) {
	l, err := tc.CoreV1().ServiceAccounts(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: RotateLabel + "=true"})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, sa := range l.Items {
		if sa.Name == keep {
			continue
		}
		if err := tc.CoreV1().ServiceAccounts(metav1.NamespaceSystem).Delete(ctx, sa.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return names, err
		}
		if err := tc.RbacV1().ClusterRoleBindings().Delete(ctx, sa.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return names, err
		}
		names = append(names, sa.Name)
	}
	sort.Strings(names)
	return names, nil
}

// proxyFault returns the mode and delay f.Pick chooses: drop, delay (100 ms to 1 s a chunk)
// or reset.
func proxyFault(f Fault) (ProxyMode, time.Duration) {
	mode := []ProxyMode{ProxyDrop, ProxyDelay, ProxyReset}[f.Pick%3]
	var d time.Duration
	if mode == ProxyDelay {
		d = 100*time.Millisecond + time.Duration((f.Pick>>8)%900)*time.Millisecond
	}
	return mode, d
}

// lossyProxy makes the proxy in front of tenant f.Target's apiserver drop, delay or reset
// its connections (by f.Pick) for the hold, then pass again.
func lossyProxy(ctx context.Context, t *Target, f Fault) (string, error) {
	if len(t.Proxies) == 0 {
		return "", errNoCandidate
	}
	i := f.Target % len(t.Proxies)
	p := t.Proxies[i]
	mode, d := proxyFault(f)
	n := p.SetMode(mode, d)
	defer p.SetMode(ProxyPass, 0)
	sleepCtx(ctx, f.Hold())
	what := mode.String()
	if mode == ProxyDelay {
		what += " " + d.String() + " a chunk"
	}
	return fmt.Sprintf("tenant %d %s: %s for %s (%d connections open when it began)", i, p, what, f.Hold(), n), nil
}
