package main

import (
	"context"
	"sync"
	"time"
)

// timedScrape is one scrape of the syncer's metrics and when it was asked for.
type timedScrape struct {
	at      time.Time
	samples []metricSample
}

// sampledSeries are the series sampleSyncer keeps: the admission window's gauges and
// counter, the downward queue's gauges, and the Pods' downward reconcile durations.
var sampledSeries = map[string]bool{
	"vcsyncer_admission_window":                true,
	"vcsyncer_admission_held":                  true,
	"vcsyncer_admission_waiting":               true,
	"vcsyncer_admission_admitted_total":        true,
	"vcsyncer_queue_depth":                     true,
	"vcsyncer_queue_in_flight":                 true,
	"vcsyncer_queue_worker_hold_seconds":       true,
	"vcsyncer_sync_duration_seconds_sum":       true,
	"vcsyncer_sync_duration_seconds_count":     true,
	"vcsyncer_write_share_delay_seconds_total": true,
	// the API calls of the downward reconciles that create super Pods, by tenant and call
	"vcsyncer_pod_creation_call_duration_seconds_sum":   true,
	"vcsyncer_pod_creation_call_duration_seconds_count": true,
}

// sampleSyncer scrapes url every interval until the returned stop is called, which returns the
// scrapes (series of sampledSeries only; a failed scrape is skipped).
func sampleSyncer(ctx context.Context, url string, every time.Duration) (stop func() []timedScrape) {
	ctx, cancel := context.WithCancel(ctx)
	var (
		mu  sync.Mutex
		out []timedScrape
		wg  sync.WaitGroup
	)
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			at := time.Now()
			if ms, err := scrape(ctx, url); err == nil {
				var kept []metricSample // not ms[:0]: the whole page would stay reachable
				for _, m := range ms {
					if sampledSeries[m.name] {
						kept = append(kept, m)
					}
				}
				mu.Lock()
				out = append(out, timedScrape{at: at, samples: kept})
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return func() []timedScrape {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}

// weightedTenantSample is where one weighted tenant's new Pods were inside the syncer during
// the admitted interval of case (e) (means of the syncer's gauges over the scrapes in it, every
// 0.5 s): waiting in the downward queue for a worker, being processed by one, waiting in the
// admission window, or holding a slot of it (created and not yet bound, or granted).
type weightedTenantSample struct {
	Tenant string `json:"tenant"`
	// Admitted is the number of admissions of the tenant's Pods by the admission window
	// between the first and last scrape in the interval (Δ vcsyncer_admission_admitted_total):
	// not the super Pods created (a Pod admitted whose create then failed is admitted again).
	Admitted float64 `json:"admitted"`
	// WindowHeld and WindowWaiting are the mean slots held and Pods waiting in the window.
	WindowHeld    float64 `json:"windowHeldMean"`
	WindowWaiting float64 `json:"windowWaitingMean"`
	// QueueDepth and InFlight are the mean requests of the tenant queued for and held by the
	// downward workers (every kind).
	QueueDepth float64 `json:"downwardQueueDepthMean"`
	InFlight   float64 `json:"downwardInFlightMean"`
	// WorkerHoldSeconds is the mean of the queue's moving average of the time the tenant's
	// downward requests hold a worker.
	WorkerHoldSeconds float64 `json:"downwardWorkerHoldSecondsMean"`
	// PodReconciles and PodReconcileSeconds are the tenant's downward Pod reconciles in the
	// interval and their mean duration (Δsum ÷ Δcount of vcsyncer_sync_duration_seconds).
	PodReconciles       float64 `json:"podDownwardReconciles"`
	PodReconcileSeconds float64 `json:"podDownwardReconcileMeanSeconds"`
	// PodWorkerSecondsPerAdmitted is the worker time of the tenant's downward Pod reconciles in
	// the interval ÷ Admitted. For a tenant whose Pods wait in the window it understates what
	// a Pod costs: a slot granted in the interval is used by a run that may come after it.
	PodWorkerSecondsPerAdmitted float64 `json:"podDownwardWorkerSecondsPerAdmitted"`
	// SuperCreates is the tenant's successful super Pod creates in the interval (Δ count of
	// vcsyncer_pod_creation_call_duration_seconds{call="super_create"}), and
	// PodWorkerSecondsPerCreate the worker time of its downward Pod reconciles ÷ SuperCreates:
	// what one of its Pods costs the worker pool, whose caps share worker time by weight.
	SuperCreates              float64 `json:"superCreates"`
	PodWorkerSecondsPerCreate float64 `json:"podDownwardWorkerSecondsPerCreate"`
	// SuperCreateSeconds and TokenRequestSeconds are the mean times of those creates on the
	// super apiserver and of the Pods' TokenRequests on the tenant's apiserver, in seconds: whose
	// apiserver the tenant's Pods wait for while they hold a worker.
	SuperCreateSeconds  float64 `json:"superCreateMeanSeconds"`
	TokenRequestSeconds float64 `json:"tokenRequestMeanSeconds"`
	// WriteShareDelaySeconds is the time the tenant's requests were held back by its share of
	// --super-write-qps in the interval (Δ vcsyncer_write_share_delay_seconds_total).
	WriteShareDelaySeconds float64 `json:"writeShareDelaySeconds"`
}

// tenantSamplesIn summarises the scrapes taken in [start, end] for each tenant, and returns the
// mean admission window size over them; nil when fewer than two scrapes fall in the interval.
func tenantSamplesIn(scrapes []timedScrape, start, end time.Time, tenants []string) ([]weightedTenantSample, float64) {
	var in []timedScrape
	for _, s := range scrapes {
		if !s.at.Before(start) && !s.at.After(end) {
			in = append(in, s)
		}
	}
	if len(in) < 2 {
		return nil, 0
	}
	// value returns the sum of the series name with the given labels (others ignored).
	value := func(ms []metricSample, name string, labels map[string]string) float64 {
		v := 0.0
	next:
		for _, m := range ms {
			if m.name != name {
				continue
			}
			for k, want := range labels {
				if m.labels[k] != want {
					continue next
				}
			}
			v += m.value
		}
		return v
	}
	mean := func(name string, labels map[string]string) float64 {
		sum := 0.0
		for _, s := range in {
			sum += value(s.samples, name, labels)
		}
		return sum / float64(len(in))
	}
	delta := func(name string, labels map[string]string) float64 {
		return value(in[len(in)-1].samples, name, labels) - value(in[0].samples, name, labels)
	}
	var out []weightedTenantSample
	for _, t := range tenants {
		tl := map[string]string{"tenant": t}
		down := map[string]string{"tenant": t, "direction": "downward"}
		pod := map[string]string{"tenant": t, "direction": "downward", "kind": "Pod"}
		ws := weightedTenantSample{Tenant: t,
			Admitted:   delta("vcsyncer_admission_admitted_total", tl),
			WindowHeld: mean("vcsyncer_admission_held", tl), WindowWaiting: mean("vcsyncer_admission_waiting", tl),
			QueueDepth: mean("vcsyncer_queue_depth", down), InFlight: mean("vcsyncer_queue_in_flight", down),
			WorkerHoldSeconds:      mean("vcsyncer_queue_worker_hold_seconds", down),
			PodReconciles:          delta("vcsyncer_sync_duration_seconds_count", pod),
			WriteShareDelaySeconds: delta("vcsyncer_write_share_delay_seconds_total", tl),
		}
		create := map[string]string{"tenant": t, "call": "super_create"}
		token := map[string]string{"tenant": t, "call": "token_request"}
		ws.SuperCreates = delta("vcsyncer_pod_creation_call_duration_seconds_count", create)
		if ws.SuperCreates > 0 {
			ws.SuperCreateSeconds = delta("vcsyncer_pod_creation_call_duration_seconds_sum", create) / ws.SuperCreates
		}
		if n := delta("vcsyncer_pod_creation_call_duration_seconds_count", token); n > 0 {
			ws.TokenRequestSeconds = delta("vcsyncer_pod_creation_call_duration_seconds_sum", token) / n
		}
		if ws.PodReconciles > 0 {
			total := delta("vcsyncer_sync_duration_seconds_sum", pod)
			ws.PodReconcileSeconds = total / ws.PodReconciles
			if ws.Admitted > 0 {
				ws.PodWorkerSecondsPerAdmitted = total / ws.Admitted
			}
			if ws.SuperCreates > 0 {
				ws.PodWorkerSecondsPerCreate = total / ws.SuperCreates
			}
		}
		out = append(out, ws)
	}
	return out, mean("vcsyncer_admission_window", nil)
}
