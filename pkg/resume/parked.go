package resume

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"time"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/trackingqueue"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var _ checkpoint.Queues = (*State)(nil)

// work parked for tenants that are registered but not synced (their requests cannot run yet,
// and a resumed tenant is not re-listed in full when it syncs): direction → request → delay
// window (zero for "now").
type parkedWork struct {
	down, up map[resources.Request]trackingqueue.DelayWindow
}

// Park keeps req (of a registered tenant that is not synced) until the tenant syncs. c is the
// tenant's Cluster when known: if it has synced meanwhile (ClusterSynced sets Synced before it
// drains, under the same lock), req goes to its queue at once instead of being parked after the
// drain and forgotten.
func (st *State) Park(req resources.Request, down bool, w trackingqueue.DelayWindow, c *tenant.Cluster) {
	st.parkMu.Lock()
	defer st.parkMu.Unlock()
	if c != nil && c.Synced() {
		st.cfg.Pipelines.Enqueue(req, down)
		return
	}
	p := st.parked[req.Tenant]
	if p == nil {
		p = &parkedWork{down: map[resources.Request]trackingqueue.DelayWindow{}, up: map[resources.Request]trackingqueue.DelayWindow{}}
		st.parked[req.Tenant] = p
	}
	m := p.up
	if down {
		m = p.down
	}
	if _, ok := m[req]; !ok {
		m[req] = w
	}
}

// DrainParked seeds the queues with the work parked for tenant (call when it has synced).
func (st *State) DrainParked(tenantName string) {
	st.parkMu.Lock()
	defer st.parkMu.Unlock()
	p := st.parked[tenantName]
	if p == nil {
		return
	}
	delete(st.parked, tenantName)
	seed := func(down bool, m map[resources.Request]trackingqueue.DelayWindow) {
		snap := trackingqueue.Snapshot[resources.Request]{Delayed: map[resources.Request]trackingqueue.DelayWindow{}}
		for req, w := range m {
			if w.Latest.IsZero() {
				snap.Queued = append(snap.Queued, req)
			} else {
				snap.Delayed[req] = w
			}
		}
		st.cfg.Pipelines.Seed(down, snap)
	}
	seed(true, p.down)
	seed(false, p.up)
}

// DropParked forgets the work parked for a removed tenant.
func (st *State) DropParked(tenantName string) {
	st.parkMu.Lock()
	delete(st.parked, tenantName)
	st.parkMu.Unlock()
}

// ParkedCount returns the number of requests parked for tenant, in both directions.
func (st *State) ParkedCount(tenantName string) int {
	st.parkMu.Lock()
	defer st.parkMu.Unlock()
	p := st.parked[tenantName]
	if p == nil {
		return 0
	}
	return len(p.down) + len(p.up)
}

// QueueItem is one unfinished request in a checkpoint.
type QueueItem struct {
	Req      resources.Request
	Down     bool
	Earliest time.Time // zero: run now
	Latest   time.Time
}

// QueueSize implements checkpoint.Queues. It also drops the work parked for tenants whose state
// is no longer kept (removed while the syncer was down: they never start, so ClusterStopped
// never drops it), so that it neither leaks nor counts against the checkpoint budget.
func (st *State) QueueSize() int {
	st.parkMu.Lock()
	n := 0
	for name, p := range st.parked {
		if st.keepTenantState != nil && !st.keepTenantState(name) {
			delete(st.parked, name)
			continue
		}
		n += len(p.down) + len(p.up)
	}
	st.parkMu.Unlock()
	return n + st.cfg.Pipelines.Size()
}

// SnapshotQueues implements checkpoint.Queues: every unfinished request of both pipelines
// (queued, processing, delayed, dropped at shutdown, waiting in the admission window) and
// every parked one, taken under the parking lock so no request moves between a queue and the
// parked set while it runs. The policy marks are taken first (policyState saves them): a mark
// set after the queues were taken may stand for enqueues they do not hold.
func (st *State) SnapshotQueues() ([]byte, int, error) {
	st.Marks.capture(st.keepTenantForCheckpoint)
	items := st.QueueItems(st.keepTenantForCheckpoint)
	data, err := EncodeQueueItems(items)
	return data, len(items), err
}

// EncodeQueueItems encodes items for a checkpoint (DecodeQueueItems reads them).
func EncodeQueueItems(items []QueueItem) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(items); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeQueueItems decodes the queue items SnapshotQueues encoded (none for empty data).
func DecodeQueueItems(data []byte) ([]QueueItem, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var items []QueueItem
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&items); err != nil {
		return nil, fmt.Errorf("decoding checkpointed queues: %w", err)
	}
	return items, nil
}

// QueueItems returns the unfinished requests of the tenants keep accepts, as SnapshotQueues
// describes.
func (st *State) QueueItems(keep func(tenant string) bool) []QueueItem {
	st.parkMu.Lock()
	var items []QueueItem
	add := func(snap trackingqueue.Snapshot[resources.Request], down bool) {
		seen := map[resources.Request]bool{}
		for _, l := range [][]resources.Request{snap.Queued, snap.Processing, snap.Orphans} {
			for _, r := range l {
				if !seen[r] {
					seen[r] = true
					items = append(items, QueueItem{Req: r, Down: down})
				}
			}
		}
		for r, w := range snap.Delayed {
			if !seen[r] {
				seen[r] = true
				items = append(items, QueueItem{Req: r, Down: down, Earliest: w.Earliest, Latest: w.Latest})
			}
		}
	}
	down, up := st.cfg.Pipelines.Snapshots()
	add(down, true)
	add(up, false)
	if st.cfg.Pipelines.Window != nil {
		// Pods waiting in the admission window are in no queue meanwhile.
		add(trackingqueue.Snapshot[resources.Request]{Queued: st.cfg.Pipelines.Window()}, true)
	}
	for _, p := range st.parked {
		for r, w := range p.down {
			items = append(items, QueueItem{Req: r, Down: true, Earliest: w.Earliest, Latest: w.Latest})
		}
		for r, w := range p.up {
			items = append(items, QueueItem{Req: r, Down: false, Earliest: w.Earliest, Latest: w.Latest})
		}
	}
	st.parkMu.Unlock()
	kept := items[:0]
	for _, it := range items {
		if keep(it.Req.Tenant) {
			kept = append(kept, it)
		}
	}
	return kept
}

// ParkItems parks items (of the tenants keep accepts; all with keep nil) and returns how many.
func (st *State) ParkItems(items []QueueItem, keep func(tenant string) bool) int {
	n := 0
	for _, it := range items {
		if keep == nil || keep(it.Req.Tenant) {
			st.Park(it.Req, it.Down, trackingqueue.DelayWindow{Earliest: it.Earliest, Latest: it.Latest}, nil)
			n++
		}
	}
	return n
}

// RestoreQueues parks the checkpointed requests under their tenants; each tenant's are seeded
// into the queues when it syncs.
func (st *State) RestoreQueues(data []byte) error {
	items, err := DecodeQueueItems(data)
	if err != nil {
		return err
	}
	st.ParkItems(items, nil)
	return nil
}
