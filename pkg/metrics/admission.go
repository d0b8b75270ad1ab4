package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The super-Pod admission window (pkg/admission). Labels: tenant only.
var (
	admissionAdmitted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "admission", Name: "admitted_total",
		Help: "New super Pods admitted by the admission window, by tenant (at once or after waiting).",
	}, []string{"tenant"})
	admissionWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: "admission", Name: "wait_seconds",
		Help:    "Time a new super Pod waited in the admission window before it was admitted, by tenant (0 when admitted at once).",
		Buckets: []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60},
	}, []string{"tenant"})

	admissionWaitingDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "admission", "waiting"),
		"Tenant Pods waiting in the admission window for their super Pod to be created, by tenant.", []string{"tenant"}, nil)
	admissionHeldDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "admission", "held"),
		"Slots of the admission window held (super Pods created and not yet bound, and slots granted to waiting Pods), by tenant.", []string{"tenant"}, nil)
	admissionWindowDesc = prometheus.NewDesc(prometheus.BuildFQName(Namespace, "admission", "window"),
		"Current size of the admission window: super Pods that may be created and not yet bound at once (adapts to the super scheduler).", nil, nil)
)

// AdmissionStats is the window's state at scrape time: its size, and per tenant the Pods
// waiting and the slots held (registered tenants with none included, as 0).
type AdmissionStats func() (window int, waiting, held map[string]int)

var (
	admissionSrc  scrapeSource[AdmissionStats]
	admissionOnce sync.Once
)

func admissionCollectors() []prometheus.Collector {
	return []prometheus.Collector{admissionAdmitted, admissionWait, scrapeCollector[AdmissionStats]{
		descs: []*prometheus.Desc{admissionWaitingDesc, admissionHeldDesc, admissionWindowDesc},
		src:   &admissionSrc,
		collect: func(src AdmissionStats, ch chan<- prometheus.Metric) {
			window, waiting, held := src()
			ch <- gauge(admissionWindowDesc, float64(window))
			for t, n := range waiting {
				ch <- gauge(admissionWaitingDesc, float64(n), t)
			}
			for t, n := range held {
				ch <- gauge(admissionHeldDesc, float64(n), t)
			}
		},
	}}
}

// RegisterAdmissionStats registers the admission metrics, the gauges computed at scrape time
// from src. The last call's src wins.
func RegisterAdmissionStats(src AdmissionStats) {
	admissionOnce.Do(func() { ctrlmetrics.Registry.MustRegister(admissionCollectors()...) })
	admissionSrc.Set(src)
}

// AdmissionAdmitted counts one super Pod of tenant admitted after waiting waited.
func AdmissionAdmitted(tenant string, waited time.Duration) {
	admissionAdmitted.WithLabelValues(tenant).Inc()
	admissionWait.WithLabelValues(tenant).Observe(waited.Seconds())
}

func forgetAdmission(l prometheus.Labels) {
	admissionAdmitted.DeletePartialMatch(l)
	admissionWait.DeletePartialMatch(l)
}
