package itest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, outside the kernel's
// ephemeral range where it has room (localcluster.FreePort).
func FreePort(t *testing.T) int {
	t.Helper()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// ParseMetrics parses a Prometheus text exposition.
func ParseMetrics(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parsing metrics: %v", err)
	}
	return fams
}

// ScrapeSeries returns the values (a histogram's: its count) of the syncer's series of family name whose labels include
// match, keyed by their label set.
func ScrapeSeries(t *testing.T, port int, name string, match map[string]string) map[string]float64 {
	t.Helper()
	return series(scrape(t, port)[name], match)
}

// scrape returns every metric family the syncer on port exposes.
func scrape(t *testing.T, port int) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatalf("scraping the syncer: %v", err)
	}
	defer resp.Body.Close()
	return ParseMetrics(t, resp.Body)
}

// series returns the values of fam's series whose labels include match (ScrapeSeries).
func series(fam *dto.MetricFamily, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	if fam == nil {
		return out
	}
next:
	for _, m := range fam.Metric {
		var b strings.Builder
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
			fmt.Fprintf(&b, "%s=%q,", l.GetName(), l.GetValue())
		}
		for k, v := range match {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			out[b.String()] = m.Counter.GetValue()
		case m.Gauge != nil:
			out[b.String()] = m.Gauge.GetValue()
		case m.Histogram != nil:
			out[b.String()] = float64(m.Histogram.GetSampleCount())
		}
	}
	return out
}

// ScrapeSum returns the sum of the values of metric name's series on the metrics port that
// carry every label of match (ScrapeSeries), 0 when none does.
func ScrapeSum(t *testing.T, port int, name string, match map[string]string) float64 {
	t.Helper()
	return sum(ScrapeSeries(t, port, name, match))
}

// WaitCheckpoint waits up to timeout until the syncer on port has saved a checkpoint (or found
// the stored one current) that it began after since and that holds no unfinished queue item:
// everything the syncer had queued or in progress at since was done and acknowledged, and a
// restart resumes from a position past it. It reads vcsyncer_checkpoint_last_success_timestamp_seconds
// and vcsyncer_checkpoint_items from one scrape, and returns when the checkpoint was taken.
// This is the condition a fixed sleep of a few checkpoint intervals stood for.
func WaitCheckpoint(t *testing.T, port int, since time.Time, timeout time.Duration) time.Time {
	t.Helper()
	var taken time.Time
	var items float64
	deadline := time.Now().Add(timeout)
	for {
		fams := scrape(t, port)
		last := sum(series(fams["vcsyncer_checkpoint_last_success_timestamp_seconds"], nil))
		items = sum(series(fams["vcsyncer_checkpoint_items"], nil))
		taken = time.Unix(0, int64(last*1e9))
		if !taken.Before(since) && items == 0 {
			return taken
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint without unfinished items taken after %s within %s on :%d (last taken %s with %.0f items)",
				since.Format(time.RFC3339Nano), timeout, port, taken.Format(time.RFC3339Nano), items)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sum(values map[string]float64) float64 {
	s := 0.0
	for _, v := range values {
		s += v
	}
	return s
}

// APIServerRequests returns apiserver_request_total{verb=verb} of the apiserver cs talks to,
// by resource (scraped from its /metrics).
func APIServerRequests(t *testing.T, cs kubernetes.Interface, verb string) map[string]float64 {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("scraping the apiserver: %v", err)
	}
	out := map[string]float64{}
	fam := ParseMetrics(t, bytes.NewReader(raw))["apiserver_request_total"]
	if fam == nil {
		t.Fatal("apiserver has no apiserver_request_total")
	}
	for _, m := range fam.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["verb"] == verb {
			out[labels["resource"]] += m.Counter.GetValue()
		}
	}
	return out
}

// RegistryValue returns the sum of the counter (or histogram sample count) named name over the
// series whose labels include want, from the Prometheus registry of a syncer running in the
// test's process (controller-runtime's metrics.Registry).
func RegistryValue(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			n := 0
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
					n++
				}
			}
			if n != len(want) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}
