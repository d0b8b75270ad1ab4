package app

import (
	"context"
	"runtime"
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

// A quiet syncer returns freed heap to the OS; a busy one does not.
func TestReleaseIdleMemory(t *testing.T) {
	var processed atomic.Int64
	busy, stopBusy := context.WithCancel(context.Background())
	go func() { // 1000 reconciles every 10 ms: far above 100 per check
		for busy.Err() == nil {
			processed.Add(1000)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		releaseIdleMemory(ctx, logr.Discard(), 100*time.Millisecond, 100, processed.Load)
	}()
	makeFreeHeap()
	before := heapFreeBytes()
	if before < 2*releaseThresholdBytes {
		t.Skipf("test premise: only %d bytes of free heap after dropping 128 MiB", before)
	}
	time.Sleep(500 * time.Millisecond)
	if got := heapFreeBytes(); got < releaseThresholdBytes {
		t.Errorf("busy: free heap %d → %d bytes; want it kept while reconciles run", before, got)
	}
	stopBusy()
	deadline := time.Now().Add(5 * time.Second)
	for heapFreeBytes() >= releaseThresholdBytes && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := heapFreeBytes(); got >= releaseThresholdBytes {
		t.Errorf("quiet: %d bytes of free heap still held after 5 s; want it returned", got)
	}
	cancel()
	<-done
}
