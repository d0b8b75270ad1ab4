package app

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

func heapFreeBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// makeFreeHeap allocates and drops about 128 MiB and collects it, so the runtime holds freed
// heap it has not returned to the OS yet.
func makeFreeHeap() {
	var keep [][]byte
	for range 128 {
		keep = append(keep, make([]byte, 1<<20))
	}
	runtime.KeepAlive(keep)
	runtime.GC()
}

// A quiet syncer returns freed heap to the OS; a busy one does not. The reconcile count is
// read by each check; while busy it has risen by 1000 (far above 100) at every read, so
// every check sees a busy syncer whatever the machine's speed.
func TestReleaseIdleMemory(t *testing.T) {
	var count, reads, releases atomic.Int64
	var busy atomic.Bool
	busy.Store(true)
	processed := func() int64 {
		defer reads.Add(1)
		if busy.Load() {
			return count.Add(1000)
		}
		return count.Load()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		releaseIdleMemory(ctx, logr.Discard(), 100*time.Millisecond, 100, processed, func() {
			releases.Add(1)
			debug.FreeOSMemory()
		})
	}()
	defer func() {
		cancel()
		<-done
	}()
	makeFreeHeap()
	before := heapFreeBytes()
	if before < 2*releaseThresholdBytes {
		t.Skipf("test premise: only %d bytes of free heap after dropping 128 MiB", before)
	}
	// Three checks while busy (the first read is the starting count, before any check).
	for n, deadline := reads.Load(), time.Now().Add(10*time.Second); reads.Load() < n+3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d checks in 10 s, want 3 (one every 100 ms)", reads.Load()-n)
		}
	}
	// Released while busy: counted by the release function (the free heap itself is the
	// process's, which the runtime's scavenger and other tests of the package also change).
	if n := releases.Load(); n != 0 {
		t.Errorf("busy: memory released %d times while reconciles ran; want none", n)
	}
	busy.Store(false)
	// Quiet: released within a few checks. The runtime's scavenger may have returned the free
	// heap first, and then there is rightly nothing to release: only a quiet syncer that holds
	// the free heap and never releases it fails.
	deadline := time.Now().Add(5 * time.Second)
	for releases.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := heapFreeBytes(); releases.Load() == 0 && got >= releaseThresholdBytes {
		t.Errorf("quiet: %d bytes of free heap still held after 5 s (0 releases); want it returned", got)
	}
}
