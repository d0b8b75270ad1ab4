// Command vc-syncer is the centralized multi-tenant VirtualCluster syncer.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(app.Execute(ctx))
}
