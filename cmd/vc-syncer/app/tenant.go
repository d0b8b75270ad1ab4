package app

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// terminatingWait bounds how long `tenant add` without --wait waits for a terminating Tenant
// of the same name to be gone before it registers the new one.
const terminatingWait = 2 * time.Minute

type tenantFlags struct {
	superKubeconfig string
	namespace       string
}

func newTenantCommand() *cobra.Command {
	f := &tenantFlags{namespace: "vc-syncer-system"}
	cmd := &cobra.Command{
		Use:   "tenant",
		Short: "Register, list and remove tenants in the super cluster",
		Long: `Manage Tenant objects (tenancy.vcsyncer.io/v1alpha1) and their kubeconfig Secrets in the
super cluster. A running syncer picks changes up without a restart.`,
	}
	cmd.PersistentFlags().StringVar(&f.superKubeconfig, "super-kubeconfig", "",
		"Path to the super cluster's kubeconfig. Empty: $KUBECONFIG, then the in-cluster service account, then ~/.kube/config.")
	cmd.PersistentFlags().StringVar(&f.namespace, "kubeconfig-namespace", f.namespace,
		"Super-cluster namespace of the kubeconfig Secrets (must match the syncer's --kubeconfig-namespace).")
	cmd.AddCommand(newTenantAddCommand(f), newTenantListCommand(f), newTenantRemoveCommand(f))
	return cmd
}

func (f *tenantFlags) client() (client.Client, error) {
	cfg, err := superConfig(f.superKubeconfig)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: Scheme()})
}

func newTenantAddCommand(f *tenantFlags) *cobra.Command {
	var kubeconfig string
	var waitFor time.Duration
	var weight int32
	var embedTokenFile bool
	var serviceCIDRs []string
	var kubeletClientCA string
	cmd := &cobra.Command{
		Use:   "add NAME --kubeconfig FILE [--weight N] [--service-cidr CIDR] [--kubelet-client-ca FILE] [--embed-token-file]",
		Short: "Register a tenant: store its kubeconfig in a Secret and create its Tenant",
		Long: `Register a tenant control plane. The kubeconfig FILE is reduced to its current context and
flattened (certificate-authority, client-certificate and client-key files are read here and
embedded), then stored in Secret <kubeconfig-namespace>/<NAME>-kubeconfig, key "kubeconfig";
then Tenant NAME is created (or updated) to point at it. NAME must be a DNS label of at most
40 characters: it prefixes the tenant's namespaces in the super cluster. When a Tenant NAME is
still terminating (removed, its super namespaces being deleted), tenant add says so, waits for
it to be gone (up to --wait, or 2 minutes without it) and then registers a new one; it fails,
having written nothing, when the old Tenant outlives that wait.

The syncer accepts inline credentials only, because it evaluates the kubeconfig inside its own
Pod: token, client-certificate-data/client-key-data and certificate-authority-data. A
kubeconfig whose current context uses tokenFile, an exec plugin, an auth-provider, proxy-url,
username/password or impersonation (as, as-groups, ...) is refused here, before anything is
written to the super cluster (and the syncer refuses such a Secret with KubeconfigValid=False,
reason InlineCredentialsRequired). --embed-token-file reads the tokenFile here and stores its
current content as token: instead; a token rotated in that file later is not picked up (run
tenant add again).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if kubeconfig == "" {
				return fmt.Errorf("--kubeconfig is required")
			}
			data, err := flattenKubeconfig(kubeconfig, embedTokenFile)
			if err != nil {
				return err
			}
			var kubeletCA []byte
			if kubeletClientCA != "" {
				if kubeletCA, err = os.ReadFile(kubeletClientCA); err != nil {
					return fmt.Errorf("--kubelet-client-ca: %w", err)
				}
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			// A Tenant of this name still terminating is waited for (up to --wait, or
			// terminatingWait without it) and then replaced by a new one.
			gone := terminatingWait
			if waitFor > 0 {
				gone = waitFor
			}
			goneCtx, cancel := context.WithTimeout(cmd.Context(), gone)
			err = waitTerminatingTenantGone(goneCtx, c, args[0], cmd.OutOrStdout())
			cancel()
			if err != nil {
				return err
			}
			if err := AddTenantWithOptions(cmd.Context(), c, f.namespace, args[0], data, TenantOptions{Weight: weight, ServiceCIDRs: serviceCIDRs, KubeletClientCA: kubeletCA}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "tenant %s registered (Secret %s/%s-kubeconfig)\n", args[0], f.namespace, args[0])
			if waitFor <= 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "the syncer connects to it in the background: `vc-syncer tenant list` shows its phase (or pass --wait)\n")
				return nil
			}
			return WaitTenantRunning(cmd.Context(), c, args[0], waitFor, cmd.OutOrStdout())
		},
	}
	cmd.Flags().DurationVar(&waitFor, "wait", 0, "Wait up to this long (e.g. 1m) for the syncer to report the Tenant Running; fail at once when it reports a problem that waiting does not fix (invalid kubeconfig, refused credentials, unreachable or duplicate control plane), and with its conditions on timeout. 0 returns after registering.")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "Path to the tenant apiserver's kubeconfig (required).")
	cmd.Flags().BoolVar(&embedTokenFile, "embed-token-file", false,
		"Read the file named by the kubeconfig user's tokenFile now and store its content as token: (without it, a tokenFile is refused).")
	cmd.Flags().StringSliceVar(&serviceCIDRs, "service-cidr", nil,
		"The tenant apiserver's --service-cluster-ip-range (Tenant spec.serviceCIDRs; one CIDR, or two comma-separated, one per IP family): "+
			"a part of the super cluster's Service range given to this tenant alone. Super copies of its Services then keep the tenant's ClusterIPs.")
	cmd.Flags().StringVar(&kubeletClientCA, "kubelet-client-ca", "",
		"PEM file of the CA that signs the tenant apiserver's --kubelet-client-certificate (Tenant spec.kubeletClientCA): "+
			"the syncer's kubelet API serves the tenant's kubectl logs and exec only to a client certificate it signed. Empty: refused (401).")
	cmd.Flags().Int32Var(&weight, "weight", 1, "Fair-queue weight (1-1000): the tenant's share of the syncer's workers relative to other tenants when the queues are saturated.")
	return cmd
}

// flattenKubeconfig reads a kubeconfig file, keeps its current context only and embeds the
// certificate files it references, so the result works from inside the super cluster. A user
// tokenFile is refused unless embedTokenFile is true: then the file's content (surrounding
// white space trimmed, as client-go does) becomes token: and tokenFile is dropped. It returns
// the serialized kubeconfig, or an error naming the file and every field the syncer refuses
// (tenant.ParseKubeconfig) with what to do instead.
func flattenKubeconfig(path string, embedTokenFile bool) ([]byte, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read kubeconfig %s: %w", path, err)
	}
	if err := clientcmd.ResolveLocalPaths(raw); err != nil {
		return nil, err
	}
	if err := clientcmdapiMinifyFlatten(raw); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	for name, u := range raw.AuthInfos { // one user at most, after minifying
		if u.TokenFile == "" {
			continue
		}
		if !embedTokenFile {
			return nil, fmt.Errorf("kubeconfig %s: user %q reads its token from the file %s (tokenFile), which the syncer would read in its own Pod; "+
				"pass --embed-token-file to store the file's content as token:, or write token: yourself", path, name, u.TokenFile)
		}
		tok, err := os.ReadFile(u.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: --embed-token-file: %w", path, err)
		}
		if u.Token = strings.TrimSpace(string(tok)); u.Token == "" {
			return nil, fmt.Errorf("kubeconfig %s: --embed-token-file: the tokenFile %s of user %q is empty", path, u.TokenFile, name)
		}
		u.TokenFile = ""
	}
	data, err := clientcmd.Write(*raw)
	if err != nil {
		return nil, err
	}
	if _, err := tenant.ParseKubeconfig(data); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return data, nil
}

// AddTenant creates or updates the kubeconfig Secret and the Tenant named name. It writes
// nothing and returns an error when name is not a DNS label of at most 40 characters or
// weight is outside 1-1000. It stores the kubeconfig bytes as given: the syncer validates them
// (tenant.ParseKubeconfig) and reports a refusal on the Tenant, and tests register broken or
// hostile kubeconfigs this way on purpose; `tenant add` validates before it calls AddTenant.
// When a Tenant of that name is still terminating, it first waits until that one is gone (or
// ctx ends: an error, nothing written), so it never updates a Tenant that is about to vanish.
func AddTenant(ctx context.Context, c client.Client, namespace, name string, kubeconfig []byte, weight int32) error {
	return AddTenantWithOptions(ctx, c, namespace, name, kubeconfig, TenantOptions{Weight: weight})
}

// TenantOptions are the Tenant spec fields `tenant add` sets besides the kubeconfig.
type TenantOptions struct {
	// Weight is spec.weight (1-1000).
	Weight int32
	// ServiceCIDRs is spec.serviceCIDRs: the tenant apiserver's --service-cluster-ip-range
	// (at most 2 CIDRs, one per IP family); empty for none.
	ServiceCIDRs []string
	// KubeletClientCA is spec.kubeletClientCA: the PEM CA bundle of the tenant apiserver's
	// kubelet client certificate; empty for none (the syncer's kubelet API then refuses it).
	KubeletClientCA []byte
}

// AddTenantWithOptions is AddTenant with the Tenant spec fields of o. A ServiceCIDRs entry that
// is not a CIDR is an error, before anything is written.
func AddTenantWithOptions(ctx context.Context, c client.Client, namespace, name string, kubeconfig []byte, o TenantOptions) error {
	weight := o.Weight
	if len(o.ServiceCIDRs) > 2 {
		return fmt.Errorf("--service-cidr: at most 2 ranges (one per IP family), got %d", len(o.ServiceCIDRs))
	}
	if len(o.KubeletClientCA) > 0 {
		if _, err := tenant.ParseCABundle(o.KubeletClientCA); err != nil {
			return fmt.Errorf("--kubelet-client-ca: %w", err)
		}
	}
	for _, cidr := range o.ServiceCIDRs {
		if _, err := netip.ParsePrefix(cidr); err != nil {
			return fmt.Errorf("--service-cidr %q: %w", cidr, err)
		}
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 || len(name) > 40 {
		return fmt.Errorf("invalid tenant name %q: must be a DNS label of at most 40 characters", name)
	}
	if weight < 1 || weight > 1000 {
		return fmt.Errorf("--weight must be between 1 and 1000, got %d", weight)
	}
	if err := waitTerminatingTenantGone(ctx, c, name, nil); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create namespace %s: %w", namespace, err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-kubeconfig"}}
	sec.Data = map[string][]byte{"kubeconfig": kubeconfig}
	if err := c.Create(ctx, sec); apierrors.IsAlreadyExists(err) {
		existing := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(sec), existing); err != nil {
			return err
		}
		existing.Data = sec.Data
		if err := c.Update(ctx, existing); err != nil {
			return fmt.Errorf("failed to update Secret: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("failed to create Secret: %w", err)
	}
	t := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}
	t.Spec = tenancyv1alpha1.TenantSpec{
		KubeconfigSecretRef: tenancyv1alpha1.SecretKeyRef{Namespace: namespace, Name: sec.Name, Key: "kubeconfig"},
		Weight:              weight,
		ServiceCIDRs:        o.ServiceCIDRs,
		KubeletClientCA:     string(o.KubeletClientCA),
	}
	if err := c.Create(ctx, t); apierrors.IsAlreadyExists(err) {
		existing := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(t), existing); err != nil {
			return err
		}
		if existing.DeletionTimestamp != nil {
			// Deleted between the wait above and now: updating it would register nothing.
			return fmt.Errorf("Tenant %s is terminating (deleted while being registered); run tenant add again once it is gone", name)
		}
		existing.Spec = t.Spec
		return c.Update(ctx, existing)
	} else if err != nil {
		return fmt.Errorf("failed to create Tenant: %w", err)
	}
	return nil
}

// waitTerminatingTenantGone returns at once when Tenant name does not exist or is not being
// deleted. When it is terminating (the syncer is deleting its super namespaces before removing
// the finalizer), it prints a line to out (when not nil) and polls every 500 ms until that
// Tenant is gone, so a new Tenant of the same name is created instead of an update of the
// old one, which would vanish with it. It returns an error when ctx ends first.
func waitTerminatingTenantGone(ctx context.Context, c client.Client, name string, out io.Writer) error {
	old := &tenancyv1alpha1.Tenant{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, old); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("failed to read Tenant %s: %w", name, err)
	}
	if old.DeletionTimestamp == nil {
		return nil
	}
	if out != nil {
		fmt.Fprintf(out, "tenant %s is still terminating (the syncer is deleting its super-cluster namespaces); waiting for it to be gone\n", name)
	}
	start := time.Now()
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cur := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cur); apierrors.IsNotFound(err) {
			return true, nil
		} else if err != nil {
			return false, nil // transient read errors: poll again until ctx ends
		}
		return cur.UID != old.UID, nil // already replaced by someone else's Tenant
	})
	if err != nil {
		return fmt.Errorf("Tenant %s is still terminating after %s (its super-cluster namespaces are being deleted; "+
			"`vc-syncer tenant list` shows it); nothing was registered: %w", name, time.Since(start).Round(time.Second), err)
	}
	if out != nil {
		fmt.Fprintf(out, "the previous tenant %s is gone after %s\n", name, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

func newTenantListCommand(f *tenantFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List tenants with weight, phase and conditions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			var list tenancyv1alpha1.TenantList
			if err := c.List(cmd.Context(), &list); err != nil {
				if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
					return fmt.Errorf("failed to list Tenants: the Tenant CRD is not installed (`vc-syncer run` installs it): %w", err)
				}
				return fmt.Errorf("failed to list Tenants from the super cluster: %w", err)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tWEIGHT\tPAUSED\tPHASE\tCONNECTED\tSYNCED\tMESSAGE")
			for _, t := range list.Items {
				cond := func(typ string) string {
					if c := meta.FindStatusCondition(t.Status.Conditions, typ); c != nil {
						return string(c.Status)
					}
					return "Unknown"
				}
				msg := ""
				for _, typ := range []string{tenancyv1alpha1.ConditionKubeconfigValid, tenancyv1alpha1.ConditionConnected} {
					if c := meta.FindStatusCondition(t.Status.Conditions, typ); c != nil && c.Status != metav1.ConditionTrue && msg == "" {
						msg = c.Reason + ": " + c.Message
					}
				}
				fmt.Fprintf(w, "%s\t%d\t%t\t%s\t%s\t%s\t%s\n", t.Name, t.EffectiveWeight(), t.Spec.Paused, t.Status.Phase,
					cond(tenancyv1alpha1.ConditionConnected), cond(tenancyv1alpha1.ConditionSynced), msg)
			}
			return w.Flush()
		},
	}
}

func newTenantRemoveCommand(f *tenantFlags) *cobra.Command {
	var keepSecret bool
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a tenant; the syncer deletes its super-cluster namespaces",
		Long: `Delete Tenant NAME. The running syncer stops syncing it and deletes every super-cluster
namespace it created for the tenant (with everything in them) before the Tenant disappears.
Objects inside the tenant control plane itself are not touched.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			t := &tenancyv1alpha1.Tenant{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Name: args[0]}, t); err != nil {
				return err
			}
			if err := c.Delete(cmd.Context(), t); err != nil {
				return err
			}
			if !keepSecret {
				ref := t.Spec.KubeconfigSecretRef
				sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
				if err := c.Delete(cmd.Context(), sec); client.IgnoreNotFound(err) != nil {
					fmt.Fprintf(os.Stderr, "warning: could not delete Secret %s/%s: %v\n", ref.Namespace, ref.Name, err)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "tenant %s deleted; the syncer is removing its super-cluster namespaces\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&keepSecret, "keep-secret", false, "Keep the tenant's kubeconfig Secret.")
	return cmd
}

// WaitTenantRunning polls Tenant name every 500 ms until its phase is Running, until the
// syncer reports a problem that waiting does not fix (terminalProblem), or until timeout
// passes. It prints the phase once it is Running. The error names the phase and the first
// condition that is not True (the reason the syncer gave, e.g. Unauthorized). Conditions
// whose lastTransitionTime is before the call (left from an earlier registration of the same
// name) end the wait only through the timeout.
func WaitTenantRunning(ctx context.Context, c client.Client, name string, timeout time.Duration, out io.Writer) error {
	since := metav1.NewTime(time.Now().Truncate(time.Second)) // conditions carry whole seconds
	var last tenancyv1alpha1.Tenant
	var problem string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &last); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		problem = terminalProblem(&last, since)
		return last.Status.Phase == tenancyv1alpha1.TenantRunning || problem != "", nil
	})
	if err == nil && problem == "" {
		fmt.Fprintf(out, "tenant %s is Running\n", name)
		return nil
	}
	if problem != "" {
		return fmt.Errorf("tenant %s is not Running: phase %q, %s", name, last.Status.Phase, problem)
	}
	why := "no status yet (is `vc-syncer run` running against this super cluster?)"
	for _, cond := range last.Status.Conditions {
		if cond.Status != metav1.ConditionTrue {
			why = fmt.Sprintf("%s=%s (%s): %s", cond.Type, cond.Status, cond.Reason, cond.Message)
			break
		}
	}
	return fmt.Errorf("tenant %s is not Running after %s: phase %q, %s", name, timeout, last.Status.Phase, why)
}

// terminalProblem describes what keeps Tenant t from running that waiting longer does not fix,
// or returns "": t is being deleted or paused, or the syncer reported, since the given time and
// for t's current generation, KubeconfigValid=False (except SecretNotFound, which the syncer's
// Secret cache may briefly report right after registration) or Connected=False (refused
// credentials, an unreachable apiserver, a control plane another Tenant already syncs). The
// syncer keeps retrying a Connected=False tenant in the background.
func terminalProblem(t *tenancyv1alpha1.Tenant, since metav1.Time) string {
	switch {
	case t.DeletionTimestamp != nil:
		return "the Tenant is being deleted"
	case t.Spec.Paused:
		return "spec.paused is true"
	}
	for _, cond := range t.Status.Conditions {
		if cond.Status != metav1.ConditionFalse || cond.LastTransitionTime.Before(&since) || cond.ObservedGeneration < t.Generation {
			continue
		}
		switch {
		case cond.Type == tenancyv1alpha1.ConditionKubeconfigValid && cond.Reason != tenant.ReasonSecretNotFound:
			return fmt.Sprintf("%s=False (%s): %s", cond.Type, cond.Reason, cond.Message)
		case cond.Type == tenancyv1alpha1.ConditionConnected:
			return fmt.Sprintf("%s=False (%s): %s (the syncer keeps retrying in the background)", cond.Type, cond.Reason, cond.Message)
		}
	}
	return ""
}
