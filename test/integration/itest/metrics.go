package itest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatalf("scraping the syncer: %v", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	fam := ParseMetrics(t, resp.Body)[name]
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
	sum := 0.0
	for _, v := range ScrapeSeries(t, port, name, match) {
		sum += v
	}
	return sum
}
