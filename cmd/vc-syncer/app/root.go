package app

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Execute runs the vc-syncer command line and returns the process exit code.
func Execute(ctx context.Context) int {
	if err := NewCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1
	}
	return 0
}

// NewCommand returns the root `vc-syncer` command.
func NewCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "vc-syncer",
		Short: "Centralized multi-tenant VirtualCluster syncer",
		Long: `vc-syncer syncs many tenant Kubernetes control planes with one shared super cluster.

Tenants own the desired state: Namespaces, Pods, Services, ConfigMaps, Secrets and
ServiceAccounts created in a tenant are copied down into the super cluster, where the Pods run.
Pod binding and status, and Service load-balancer status, are copied back up to the tenant.
Each tenant is registered in the super cluster as a Tenant object (tenancy.vcsyncer.io/v1alpha1)
that names a Secret holding the tenant's kubeconfig.

Start here:
  vc-syncer dev --tenants 2           # local super cluster + 2 tenants + the syncer, until Ctrl-C
  vc-syncer run --super-kubeconfig F  # the syncer against a real super cluster
  vc-syncer tenant add NAME --kubeconfig FILE`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCommand(), newTenantCommand(), newDevCommand(), newVersionCommand())
	return root
}
