package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The Event pipeline's counters (super Events copied into tenants, pkg/resources/event).
// Labels: tenant, type (Normal|Warning, the Event's type), reason (the fixed drop reasons of
// pkg/resources/event: queueFull, failed). All bounded.
var (
	eventsQueued = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "events", Name: "queued_total",
		Help: "Super Event changes queued for copying into a tenant, by tenant and Event type (a change of an Event already waiting coalesces with it and is counted too).",
	}, []string{"tenant", "type"})
	eventsDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "events", Name: "dropped_total",
		Help: "Super Event copies dropped before reaching a tenant, by tenant, Event type and reason (queueFull: the tenant's Event queue was full, Normals are dropped first; failed: the write kept failing).",
	}, []string{"tenant", "type", "reason"})
	eventsPendingDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "events", "pending"),
		"Super Event copies waiting for a tenant's Event rate limit, by tenant.", []string{"tenant"}, nil)
)

// EventStats returns, per tenant, the number of Event copies waiting.
type EventStats func() map[string]int

var eventStatsSrc scrapeSource[EventStats]

func eventCollectors() []prometheus.Collector {
	return []prometheus.Collector{eventsQueued, eventsDropped, scrapeCollector[EventStats]{
		descs: []*prometheus.Desc{eventsPendingDesc},
		src:   &eventStatsSrc,
		collect: func(src EventStats, ch chan<- prometheus.Metric) {
			for t, n := range src() {
				ch <- gauge(eventsPendingDesc, float64(n), t)
			}
		},
	}}
}

// RegisterEventStats sets the source of vcsyncer_events_pending (the last call wins).
func RegisterEventStats(src EventStats) {
	Register()
	eventStatsSrc.Set(src)
}

// EventQueued counts one super Event change of eventType queued for tenant.
func EventQueued(tenant, eventType string) { eventsQueued.WithLabelValues(tenant, eventType).Inc() }

// EventDropped counts one Event copy of eventType for tenant dropped for reason.
func EventDropped(tenant, eventType, reason string) {
	eventsDropped.WithLabelValues(tenant, eventType, reason).Inc()
}

// EventsDropped returns the current count of dropped Event copies of (tenant, type, reason).
func EventsDropped(tenant, eventType, reason string) float64 {
	var m dto.Metric
	if err := eventsDropped.WithLabelValues(tenant, eventType, reason).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

func forgetEvents(l prometheus.Labels) {
	eventsQueued.DeletePartialMatch(l)
	eventsDropped.DeletePartialMatch(l)
}
