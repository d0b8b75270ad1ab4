package handover

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resume"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// drainTimeout bounds Drain's wait for the tenant's running reconciles (each is bounded by
// the request timeouts of its clients).
const drainTimeout = 30 * time.Second

// Drain implements tenant.Handover: it waits (up to 30 s) until no reconcile of the tenant
// runs — none starts meanwhile, as the fence holds its requests back once the tenant is not
// claimed — then, with save, writes the tenant's hand-over checkpoint (handoverCheckpoint) to
// its own store (resume.Options.TenantStoreOf), which the next shard resumes from. It
// returns an error when reconciles still run after 30 s or the checkpoint is not written; the
// tenant must then stay here, fenced (counted in vcsyncer_shard_handovers_total{result=
// "drain_failed"}).
func (h *Shard) Drain(ctx context.Context, tenantName string, save bool) (err error) {
	defer func() {
		if err != nil {
			metrics.ShardHandover("drain_failed")
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	if err := h.running.wait(wctx, tenantName); err != nil {
		return fmt.Errorf("reconciles of tenant %s still running after %s: %w", tenantName, drainTimeout, err)
	}
	storeOf := h.state.Options().TenantStoreOf
	if !save || h.ckpt() == nil || storeOf == nil {
		return nil
	}
	c, ok := h.registry.Get(tenantName)
	if !ok {
		return nil
	}
	st, err := storeOf(tenantName)
	if err != nil {
		return err
	}
	cp, err := h.handoverCheckpoint(c)
	if err != nil {
		return err
	}
	data, err := checkpoint.Encode(cp)
	if err != nil {
		return err
	}
	if err := st.Save(ctx, data); err != nil {
		return fmt.Errorf("saving the hand-over checkpoint to %s: %w", st.String(), err)
	}
	ctrl.LoggerFrom(ctx).WithName("sharding").Info("Hand-over checkpoint written", "store", st.String(),
		"sources", len(cp.Sources), "queueItems", cp.QueueItems, "bytes", len(data))
	metrics.ShardHandover("drained")
	return nil
}

// handoverCheckpoint takes the checkpoint of one tenant, in the order of a full one (positions
// before queues): its tenant informers' states; the super informers' ack entries of its super
// objects (no super objects: the next shard's super caches are live already); its unfinished
// requests; and whether the budget leaves it out.
func (h *Shard) handoverCheckpoint(c *tenant.Cluster) (*checkpoint.Checkpoint, error) {
	prefix := resume.TenantPrefix + c.Name + "/"
	superPrefix := resume.SuperPrefix + "/"
	cp := h.ckpt().NewCheckpoint(time.Now())
	states, err := h.state.Sources().Checkpoint(func(id string) bool {
		return strings.HasPrefix(id, prefix) || strings.HasPrefix(id, superPrefix)
	})
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		if strings.HasPrefix(st.ID, superPrefix) {
			acks := map[string]source.ObjectVersion{}
			for k, v := range st.Acked {
				if v.Owner != nil && v.Owner.TenantUID == c.UID {
					acks[k] = v
				}
			}
			st = source.State{ID: st.ID, Acked: acks, Identity: st.Identity}
		}
		cp.Sources = append(cp.Sources, st)
	}
	mine := func(t string) bool { return t == c.Name }
	// The policy mark before the queues: one set after them may stand for enqueues they lack.
	pol, err := json.Marshal(h.state.Marks.Snapshot(mine))
	if err != nil {
		return nil, err
	}
	items := h.state.QueueItems(mine)
	if cp.Queues, err = resume.EncodeQueueItems(items); err != nil {
		return nil, err
	}
	cp.QueueItems = len(items)
	cp.Extras = map[string][]byte{resume.PolicyExtra: pol} // the policy its objects were examined under
	if over, _ := h.state.OverBudget(h.ckpt().MaxItems()); over[c.Name] {
		cp.LeftOut = []string{c.Name} // its items are saved anyway; the next shard lists it cold
	}
	return cp, nil
}
