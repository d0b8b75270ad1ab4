package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// syncerProc is a running vc-syncer binary.
type syncerProc struct {
	cmd *exec.Cmd
	log *os.File
}

// startSyncer builds (once per call site) and starts `vc-syncer run` against env's super
// cluster, logging to logPath.
func startSyncer(ctx context.Context, env *localcluster.Environment, bin string, fair bool, logPath string, extraArgs ...string) (*syncerProc, error) {
	superKC := filepath.Join(env.Dir, "super.kubeconfig")
	if err := os.WriteFile(superKC, env.Super.Kubeconfig, 0o600); err != nil {
		return nil, err
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{"run", "--super-kubeconfig", superKC, "--metrics-bind-address", "0",
		"--health-probe-bind-address", "0", "--leader-elect=false", "--fair-queuing=" + strconv.FormatBool(fair)}, extraArgs...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	return &syncerProc{cmd: cmd, log: f}, nil
}

// waitLog waits (up to 2 minutes) until the syncer's log holds n lines containing msg.
func (p *syncerProc) waitLog(ctx context.Context, msg string, n int) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(p.log.Name())
		return err == nil && strings.Count(string(b), msg) >= n, nil
	})
}

func (p *syncerProc) pid() int { return p.cmd.Process.Pid }

func (p *syncerProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
	p.log.Close()
}

// ensureBenchPolicy creates, unless it exists, the TenantPolicy named default (every tenant's)
// with the quota of benchPolicyQuota: the built-in bounds (pkg/policy.Builtin: a per-namespace
// ResourceQuota of 128 CPU of limits with a 1-CPU default limit per container) would stop a
// bench at 128 Pods per namespace. Every other rule keeps its built-in default.
func ensureBenchPolicy(ctx context.Context, cl client.Client) error {
	p := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: tenancyv1alpha1.DefaultPolicyName}, Spec: tenancyv1alpha1.TenantPolicySpec{
		Limits: &tenancyv1alpha1.LimitsPolicy{Quota: benchPolicyQuota()},
	}}
	err := cl.Create(ctx, p)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("TenantPolicy default for the bench: %w", err)
	}
	return nil
}

// registerTenants installs the CRD, registers every tenant of env (weight 1) and waits until
// all are Running.
func registerTenants(ctx context.Context, env *localcluster.Environment) error {
	return registerWeightedTenants(ctx, env, nil)
}

// registerWeightedTenants is registerTenants with Tenant.spec.weight from weights by tenant
// name (1 for tenants not in it); an existing Tenant's spec is updated.
func registerWeightedTenants(ctx context.Context, env *localcluster.Environment, weights map[string]int32) error {
	if err := app.InstallCRD(ctx, env.Super.RESTConfig); err != nil {
		return err
	}
	cl, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		return err
	}
	if err := ensureBenchPolicy(ctx, cl); err != nil {
		return err
	}
	for _, t := range env.Tenants {
		w := weights[t.Name]
		if w == 0 {
			w = 1
		}
		// The kubelet client CA of the tenant's apiserver identifies it at the vNodes'
		// kubelet API (served when the syncer runs with --kubelet-bind-address).
		o := app.TenantOptions{Weight: w, KubeletClientCA: t.KubeletClientCA}
		if t.ServiceCIDR != "" {
			o.ServiceCIDRs = []string{t.ServiceCIDR} // as a provider registers a tenant
		}
		// A syncer that just stopped may have written the Tenant's status last: retry a conflict.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			return app.AddTenantWithOptions(ctx, cl, "vc-syncer-system", t.Name, t.Kubeconfig, o)
		}); err != nil {
			return fmt.Errorf("register %s: %w", t.Name, err)
		}
	}
	if err := waitTenantsRunning(ctx, cl, env.Tenants); err != nil {
		return fmt.Errorf("tenants not Running: %w", err)
	}
	return nil
}
