package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
)

func main() {
	// VCSYNCER_MEMPROFILE_RATE sets runtime.MemProfileRate (bytes per heap-profile sample;
	// the Go default is 512 KiB) for precise heap profiles from --pprof-bind-address.
	if r, err := strconv.Atoi(os.Getenv("VCSYNCER_MEMPROFILE_RATE")); err == nil && r > 0 {
		runtime.MemProfileRate = r
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(app.Execute(ctx))
}
