package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// scrapeSource holds the stats function a scrape-time collector reads. The syncer sets it
// when the component that knows the numbers starts; the last Set wins. The zero value holds
// none, and its collector then reports nothing.
type scrapeSource[F any] struct {
	mu  sync.Mutex
	f   F
	set bool
}

// Set makes f the source read at every later scrape.
func (s *scrapeSource[F]) Set(f F) {
	s.mu.Lock()
	s.f, s.set = f, true
	s.mu.Unlock()
}

// Get returns the current source, and false when none was set.
func (s *scrapeSource[F]) Get() (F, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f, s.set
}

// scrapeCollector is a prometheus.Collector of gauges computed at scrape time: it describes
// descs and, when src holds a function, collect turns that function's numbers into metrics.
type scrapeCollector[F any] struct {
	descs   []*prometheus.Desc
	src     *scrapeSource[F]
	collect func(f F, ch chan<- prometheus.Metric)
}

// Describe implements prometheus.Collector.
func (c scrapeCollector[F]) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c scrapeCollector[F]) Collect(ch chan<- prometheus.Metric) {
	if f, ok := c.src.Get(); ok {
		c.collect(f, ch)
	}
}

// gauge returns a constant gauge sample of desc with value v and the given label values.
func gauge(desc *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
}
