package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Checkpoint metrics (pkg/checkpoint). Labels: reason and result (fixed sets below), tenant
// (a registered Tenant, or "_super" for the super cluster's sources), kind (a synced kind) and
// mode (cold, watch, relist-diff). All bounded.
var (
	checkpointDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "duration_seconds",
		Help:    "Time to take and save one checkpoint (sources, queues, extra state, store write), in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1ms .. ~33s
	})
	checkpointSize = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "size_bytes",
		Help: "Size of the last saved checkpoint before the store's compression, in bytes.",
	})
	checkpointItems = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "items",
		Help: "Unfinished queue items (queued, processing, delayed, parked) in the last saved checkpoint.",
	})
	checkpointObjects = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "objects",
		Help: "Cached objects in the last saved checkpoint (what a resume does not need to list).",
	})
	checkpointLastSuccess = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "last_success_timestamp_seconds",
		Help: "When the last good checkpoint was taken, or found to hold the current state, in seconds since the Unix epoch (its age is time() minus this).",
	})
	checkpointSkips = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "skips_total",
		Help: "Checkpoints skipped (the previous one kept), by reason (queue_over_budget; unchanged: the stored one holds the same state).",
	}, []string{"reason"})
	checkpointFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "failures_total",
		Help: "Checkpoints that could not be taken or saved.",
	})
	checkpointLoads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "loads_total",
		Help: "Checkpoint loads at start-up, by result (resumed; migrated: of an older schema, migrated; none; unreadable; undecodable; discarded: of a schema this version cannot read, or of other options, see discarded_total).",
	}, []string{"result"})
	checkpointDiscards = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "discarded_total",
		Help: "Checkpoints found but not resumed from (a cold start instead), by reason (unreadable, undecodable, schema_too_old: written by a version older than this one reads; schema_newer: written by a newer version, after a rollback; migration_failed; config_changed: written with other options).",
	}, []string{"reason"})
	sourceResumeMode = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "source", Name: "resume_mode",
		Help: "How each informer started (1 for its mode): watch (resumed from the checkpoint's position, no LIST), relist-diff (listed, enqueued only changes) or cold; by tenant (\"_super\" for the super cluster) and kind.",
	}, []string{"tenant", "kind", "mode"})
	checkpointLeftOut = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "tenant_left_out",
		Help: "1 for each tenant the last checkpoint left out because its queues held more than --checkpoint-max-items unfinished items: a restart lists that tenant again and reconciles all its objects; the other tenants resume from the checkpoint.",
	}, []string{"tenant"})
	listsAvoided = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "checkpoint", Name: "lists_avoided_total",
		Help: "Informer LIST requests answered from a checkpoint instead of an apiserver.",
	})
)

func init() {
	checkpointSkips.WithLabelValues("queue_over_budget") // known reasons are exported at 0
	checkpointSkips.WithLabelValues("unchanged")
	for _, r := range []string{"unreadable", "undecodable", "schema_too_old", "schema_newer", "migration_failed", "config_changed"} {
		checkpointDiscards.WithLabelValues(r)
	}
	ctrlmetrics.Registry.MustRegister(checkpointDuration, checkpointSize, checkpointItems, checkpointObjects,
		checkpointLastSuccess, checkpointSkips, checkpointFailures, checkpointLoads, checkpointDiscards, sourceResumeMode, checkpointLeftOut, listsAvoided)
}

// CheckpointSaved records a saved checkpoint: how long it took, its encoded size in bytes, its
// queue items and cached objects, and when it was taken.
func CheckpointSaved(d time.Duration, bytes, items, objects int, takenAt time.Time) {
	checkpointDuration.Observe(d.Seconds())
	checkpointSize.Set(float64(bytes))
	checkpointItems.Set(float64(items))
	checkpointObjects.Set(float64(objects))
	checkpointLastSuccess.Set(float64(takenAt.UnixNano()) / 1e9)
}

// CheckpointUnchanged records a checkpoint not written because the stored one holds the same
// state: skips_total{reason="unchanged"}, and the stored checkpoint counts as taken at takenAt
// (last_success_timestamp_seconds).
func CheckpointUnchanged(takenAt time.Time) {
	checkpointSkips.WithLabelValues("unchanged").Inc()
	checkpointLastSuccess.Set(float64(takenAt.UnixNano()) / 1e9)
}

// CheckpointSkipped counts a skipped checkpoint by reason.
func CheckpointSkipped(reason string) { checkpointSkips.WithLabelValues(reason).Inc() }

// CheckpointFailed counts a checkpoint that could not be taken or saved.
func CheckpointFailed() { checkpointFailures.Inc() }

// CheckpointLoaded counts a start-up load by result.
func CheckpointLoaded(result string) { checkpointLoads.WithLabelValues(result).Inc() }

// CheckpointDiscarded counts a checkpoint found but not resumed from, by reason.
func CheckpointDiscarded(reason string) { checkpointDiscards.WithLabelValues(reason).Inc() }

// CheckpointDiscards returns vcsyncer_checkpoint_discarded_total{reason} (for tests: compare
// differences).
func CheckpointDiscards(reason string) float64 {
	var m dto.Metric
	if err := checkpointDiscards.WithLabelValues(reason).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// SuperSource is the tenant label value of the super cluster's sources.
const SuperSource = "_super"

// SourceMode records a source's resume mode. id is a pkg/checkpoint/source ID:
// "tenant/<name>/<Kind>" or "<super factory>/<Kind>".
func SourceMode(id, mode string) {
	tenant, kind := SuperSource, id
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		kind = id[i+1:]
	}
	if rest, ok := strings.CutPrefix(id, "tenant/"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			tenant = rest[:i]
		}
	}
	sourceResumeMode.DeletePartialMatch(prometheus.Labels{"tenant": tenant, "kind": kind})
	sourceResumeMode.WithLabelValues(tenant, kind, mode).Set(1)
}

// ListAvoided counts an informer LIST answered from a checkpoint.
func ListAvoided() { listsAvoided.Inc() }

// forgetCheckpointTenant deletes a removed tenant's source series.
func forgetCheckpointTenant(tenant string) {
	sourceResumeMode.DeletePartialMatch(prometheus.Labels{"tenant": tenant})
	checkpointLeftOut.DeletePartialMatch(prometheus.Labels{"tenant": tenant})
}

// CheckpointTenantsLeftOut records the tenants the last checkpoint left out (over their
// budget): 1 for each of them, no series for the others.
func CheckpointTenantsLeftOut(tenants []string) {
	checkpointLeftOut.Reset()
	for _, t := range tenants {
		checkpointLeftOut.WithLabelValues(t).Set(1)
	}
}
