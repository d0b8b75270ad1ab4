package app

import (
	"context"
	"log/slog"
	"math"
	"runtime/metrics"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
)

// setMemoryLimit sets the Go runtime's soft memory limit (GOMEMLIMIT) to ratio × the
// container's memory limit (cgroup v2 memory.max or cgroup v1 memory.limit_in_bytes), so the
// garbage collector works harder before the kernel would kill the process, instead of letting
// the heap grow to twice its live size (GOGC=100). It does nothing when ratio is 0, when
// GOMEMLIMIT is set in the environment (the operator's choice wins), or when there is no
// cgroup limit (outside a container); it returns the limit set in bytes (0 for none).
// The library is github.com/KimMachineGun/automemlimit.
func setMemoryLimit(log logr.Logger, ratio float64) int64 {
	if ratio <= 0 {
		return 0
	}
	limit, err := memlimit.Set(
		memlimit.WithRatio(ratio),
		memlimit.WithProvider(memlimit.FromCgroup),
		memlimit.WithLogger(slog.New(logr.ToSlogHandler(log.V(1)))),
	)
	if err != nil {
		log.V(1).Info("No memory limit set from the container's", "reason", err.Error())
		return 0
	}
	if limit > 0 && limit < math.MaxInt64 { // MaxInt64: the provider found no limit
		log.Info("Go memory limit set from the container's memory limit", "bytes", limit, "ratio", ratio)
		return limit
	}
	return 0
}

// releaseThresholdBytes is how much free heap (memory the Go runtime holds but no object
// uses, /memory/classes/heap/free:bytes) makes releaseIdleMemory return memory to the OS.
// After a burst of 1000 Pods the syncer holds about 12 MiB of it beside a 22 MiB live heap.
const releaseThresholdBytes = 4 << 20

// releaseIdleMemory returns the heap memory freed by a burst to the operating system once the
// syncer is quiet again: every interval until ctx ends, when fewer than quietSyncs reconciles
// ran since the last check (processed returns the running total) and the runtime holds more
// than releaseThresholdBytes of free heap (4 MiB), it calls release (debug.FreeOSMemory: one
// garbage collection and a scavenge; tens of milliseconds for a heap of tens of MiB). Without
// it the Go runtime keeps the heap it grew to during the burst, about twice the live heap, until
// the background scavenger slowly gives it back. interval 0 turns it off.
func releaseIdleMemory(ctx context.Context, log logr.Logger, interval time.Duration, quietSyncs int64, processed func() int64, release func()) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	last := processed()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := processed()
		busy := now-last >= quietSyncs
		last = now
		if busy {
			continue
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 || sample[0].Value.Uint64() < releaseThresholdBytes {
			continue
		}
		free := sample[0].Value.Uint64()
		release()
		log.V(1).Info("Returned idle heap memory to the operating system", "freeHeapBytes", free)
	}
}
