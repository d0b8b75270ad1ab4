package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// Queue is one tenant's share of one pipeline's queue.
type Queue struct {
	// Depth is the number of the tenant's requests waiting in the queue.
	Depth int `json:"depth"`
	// OldestSeconds is how long the tenant's oldest waiting request has waited, in seconds
	// (0 when Depth is 0).
	OldestSeconds float64 `json:"oldestSeconds"`
}

// Tenant is one row of the status page.
type Tenant struct {
	// Name of the Tenant object.
	Name string `json:"name"`
	// Phase is the Tenant's status.phase (Pending, Connecting, Running, Unreachable, Paused,
	// Terminating); a Provider without the Tenant object derives it from the connection.
	Phase string `json:"phase"`
	// Reason says why the tenant is not Running, e.g. "Connected: Unreachable"; empty when
	// Running.
	Reason string `json:"reason,omitempty"`
	// Weight is the tenant's fair-queue weight (spec.weight, at least 1).
	Weight int32 `json:"weight"`
	// Shard is the replica that syncs the tenant with sharding (Tenant status.shard); empty
	// without sharding or while the tenant moves.
	Shard string `json:"shard,omitempty"`
	// Downward and Upward are the tenant's queues; nil when the syncer keeps no per-tenant
	// queue figures (--fair-queuing=false) or has no connection to the tenant.
	Downward *Queue `json:"downward"`
	Upward   *Queue `json:"upward"`
	// LastSync is when a reconcile of one of the tenant's objects last succeeded, in either
	// direction; zero: never since the syncer started.
	LastSync time.Time `json:"lastSync,omitzero"`
	// LastCheckpoint is when the tenant's sync progress was last checkpointed; zero: never.
	LastCheckpoint time.Time `json:"lastCheckpoint,omitzero"`
	// HotRequests is the number of the tenant's requests whose reconcile failed more than
	// 10 times in a row (vcsyncer_sync_hot_requests); Retrying lists the top MaxRetrying of
	// them, most failures first.
	HotRequests int          `json:"hotRequests,omitempty"`
	Retrying    []HotRequest `json:"retrying,omitempty"`
	// KubeletStreams is the number of the tenant users' requests (kubectl logs, logs -f, exec,
	// attach, port-forward) this replica's kubelet API forwards now
	// (vcsyncer_kubelet_open_streams).
	KubeletStreams int `json:"kubeletStreams"`
}

// MaxRetrying is the most hot requests listed per tenant.
const MaxRetrying = 5

// HotRequest is one request whose reconciles keep failing.
type HotRequest struct {
	// Direction is downward or upward; Kind, Namespace and Name name the tenant object.
	Direction string `json:"direction"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Retries is the number of failed reconciles in a row.
	Retries int `json:"retries"`
	// Reason is the last failure's retry reason (vcsyncer_sync_retries_total's reason label);
	// LastError its message (at most 512 bytes).
	Reason    string `json:"reason"`
	LastError string `json:"lastError"`
	// Since is when the first of these failures happened.
	Since time.Time `json:"since"`
	// LongBackoff is true when the request failed at least 30 times without a change of its
	// object and is retried only every 5 minutes until it changes.
	LongBackoff bool `json:"longBackoff,omitempty"`
}

// Provider reports what the running syncer knows per tenant. *syncer.Syncer implements it.
type Provider interface {
	// TenantStatuses returns a row for every tenant the syncer has a connection for, with
	// the phase derived from that connection, and may add rows with an empty Phase for
	// tenants it has no connection to but remembers (a Paused tenant's last sync). Weight
	// and phase are taken from the Tenant object when there is one; a row with an empty
	// Phase and no Tenant object (a removed tenant) is not shown.
	TenantStatuses() []Tenant
}

// Snapshot is everything the page shows at one instant; GET /status.json returns it.
type Snapshot struct {
	// Time is when the snapshot was taken; the page computes every age against it.
	Time time.Time `json:"time"`
	// Leader is false on a standby replica, which syncs nothing until it wins the election.
	Leader bool `json:"leader"`
	// Tenants are sorted by name.
	Tenants []Tenant `json:"tenants"`
	// Error is set when the Tenant objects could not be listed; Tenants then holds only
	// what the Provider knows.
	Error string `json:"error,omitempty"`
}

// Options configures a Handler.
type Options struct {
	// Provider gives the per-tenant runtime state. Required.
	Provider Provider
	// Tenants lists Tenant objects (usually the manager's cached client). Optional: without
	// it the page shows only the tenants the Provider knows, with derived phases.
	Tenants client.Reader
	// Leader reports whether this replica is the leader. Defaults to always true.
	Leader func() bool
	// RefreshInterval is how often the page polls /status.json. Defaults to 2s.
	RefreshInterval time.Duration
	// Now returns the current time. Defaults to time.Now.
	Now func() time.Time
}

// ErrNoProvider is returned by NewHandler when Options.Provider is nil.
var ErrNoProvider = errors.New("status: Options.Provider is required")

// Snapshot builds the current Snapshot. It lists Tenant objects through Options.Tenants (a
// cache read when that is the manager's client) and calls the Provider once.
func (h *Handler) Snapshot(ctx context.Context) Snapshot {
	snap := Snapshot{Time: h.o.Now().UTC(), Leader: h.o.Leader()}
	live := h.o.Provider.TenantStatuses()
	var objs []tenancyv1alpha1.Tenant
	if h.o.Tenants != nil {
		var list tenancyv1alpha1.TenantList
		if err := h.o.Tenants.List(ctx, &list); err != nil {
			snap.Error = fmt.Sprintf("failed to list Tenants: %v", err)
		} else {
			objs = list.Items
		}
	}
	snap.Tenants = merge(objs, live)
	for i := range snap.Tenants { // UTC, so the JSON times all end in "Z" (the page parses them)
		t := &snap.Tenants[i]
		t.LastSync, t.LastCheckpoint = utc(t.LastSync), utc(t.LastCheckpoint)
		for j := range t.Retrying {
			t.Retrying[j].Since = utc(t.Retrying[j].Since)
		}
	}
	return snap
}

// merge joins Tenant objects (phase, reason, weight) with the Provider's rows (queues,
// times), one row per name, sorted by name. Provider rows without a Tenant object are kept
// only when they have a phase (a connection the Tenant cache does not show yet).
func merge(objs []tenancyv1alpha1.Tenant, live []Tenant) []Tenant {
	byName := make(map[string]Tenant, len(live))
	for _, t := range live {
		byName[t.Name] = t
	}
	out := make([]Tenant, 0, max(len(objs), len(live)))
	for i := range objs {
		obj := &objs[i]
		row, ok := byName[obj.Name]
		if !ok {
			row = Tenant{Name: obj.Name}
		}
		delete(byName, obj.Name)
		row.Weight = obj.EffectiveWeight()
		row.Shard = obj.Status.Shard
		if obj.Status.Phase != "" {
			row.Phase = string(obj.Status.Phase)
			row.Reason = reasonOf(obj)
		} else if row.Phase == "" {
			row.Phase = string(tenancyv1alpha1.TenantPending)
			row.Reason = "not reconciled yet"
		}
		out = append(out, row)
	}
	for _, row := range byName {
		if row.Phase != "" {
			out = append(out, row)
		}
	}
	slices.SortFunc(out, func(a, b Tenant) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// reasonOf returns "Type: Reason" of the Tenant's first condition that is not True (its
// message when it has no reason), or "" when all are True or the phase is Running.
func reasonOf(t *tenancyv1alpha1.Tenant) string {
	if t.Status.Phase == tenancyv1alpha1.TenantRunning {
		return ""
	}
	for _, c := range t.Status.Conditions {
		if c.Status == metav1.ConditionTrue {
			continue
		}
		why := c.Reason
		if why == "" {
			why = c.Message
		}
		return c.Type + ": " + why
	}
	return ""
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// formatDuration renders d for the page: "850ms", "4.2s", "3m07s", "2h05m". The page's
// script (pageScript) formats the same way.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
		fallthrough
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// formatAge renders how long before now t was: "never" for the zero time, else
// formatDuration(now-t) + " ago".
func formatAge(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return formatDuration(now.Sub(t)) + " ago"
}
