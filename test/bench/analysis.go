package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vcsyncer/syncer/pkg/localcluster"
)

func ptrTo[T any](v T) *T { return &v }

// syncerPhases are the phases of a new tenant Pod's creation that the syncer measures itself
// (vcsyncer_pod_creation_phase_duration_seconds), in the order a Pod goes through them.
// admission_wait, the time a Pod waited for the admission window, is part of
// downward_process.
var syncerPhases = []string{"downward_queue", "downward_process", "admission_wait", "super_scheduling", "upward_queue", "upward_process"}

// phaseStats is one phase of syncerPhases over every tenant: the mean (exact, from the
// histogram's sum and count) and the p50 and p99 estimated from its buckets (linear within a
// bucket, as PromQL's histogram_quantile does), in seconds.
type phaseStats struct {
	Count float64 `json:"count"`
	Mean  float64 `json:"meanSeconds"`
	P50   float64 `json:"p50Seconds"`
	P99   float64 `json:"p99Seconds"`
}

// parseMetricsFile reads a Prometheus text exposition file into metric families.
func parseMetricsFile(path string) (map[string]*dto.MetricFamily, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(f)
}

// syncerPhaseStats returns, from the syncer's /metrics saved in path, the phase breakdown of
// new Pods (syncerPhases) summed over tenants. Errors: the file cannot be read or parsed; a
// phase without observations is left out.
func syncerPhaseStats(path string) (map[string]phaseStats, error) {
	mfs, err := parseMetricsFile(path)
	if err != nil {
		return nil, err
	}
	mf := mfs["vcsyncer_pod_creation_phase_duration_seconds"]
	if mf == nil {
		return nil, fmt.Errorf("%s: no vcsyncer_pod_creation_phase_duration_seconds", path)
	}
	// The admission window's wait (part of downward_process) as one more "phase".
	if aw := mfs["vcsyncer_admission_wait_seconds"]; aw != nil {
		for _, m := range aw.GetMetric() {
			m.Label = append(m.Label, &dto.LabelPair{Name: ptrTo("phase"), Value: ptrTo("admission_wait")})
			mf.Metric = append(mf.Metric, m)
		}
	}
	type acc struct {
		count, sum float64
		buckets    map[float64]float64 // upper bound -> cumulative count
	}
	byPhase := map[string]*acc{}
	for _, m := range mf.GetMetric() {
		phase := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "phase" {
				phase = l.GetValue()
			}
		}
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		a := byPhase[phase]
		if a == nil {
			a = &acc{buckets: map[float64]float64{}}
			byPhase[phase] = a
		}
		a.count += float64(h.GetSampleCount())
		a.sum += h.GetSampleSum()
		for _, b := range h.GetBucket() {
			a.buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
	}
	out := map[string]phaseStats{}
	for phase, a := range byPhase {
		if a.count == 0 {
			continue
		}
		out[phase] = phaseStats{Count: a.count, Mean: a.sum / a.count,
			P50: bucketQuantile(0.5, a.buckets, a.count), P99: bucketQuantile(0.99, a.buckets, a.count)}
	}
	return out, nil
}

// bucketQuantile estimates the q-quantile of a histogram with cumulative bucket counts by
// upper bound (the +Inf bucket implied by total), interpolating linearly inside the bucket
// that holds it (PromQL histogram_quantile's rule); a quantile in the +Inf bucket is the
// largest finite bound.
func bucketQuantile(q float64, buckets map[float64]float64, total float64) float64 {
	bounds := make([]float64, 0, len(buckets))
	for b := range buckets {
		if !math.IsInf(b, 1) {
			bounds = append(bounds, b)
		}
	}
	sort.Float64s(bounds)
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range bounds {
		c := buckets[b]
		if c >= rank {
			if c == below {
				return b
			}
			return lower + (b-lower)*(rank-below)/(c-below)
		}
		lower, below = b, c
	}
	if len(bounds) == 0 {
		return 0
	}
	return bounds[len(bounds)-1]
}

// cpuUse is one process's CPU during a burst: seconds, and cores (seconds per second of the
// burst's wall time).
type cpuUse struct {
	Process string  `json:"process"`
	Seconds float64 `json:"cpuSeconds"`
	Cores   float64 `json:"cores"`
}

// busiest returns the processes of cpu (CPU seconds by process) sorted by CPU, highest first,
// with their cores over wall seconds.
func busiest(cpu map[string]float64, wall float64) []cpuUse {
	out := make([]cpuUse, 0, len(cpu))
	for p, s := range cpu {
		cores := 0.0
		if wall > 0 {
			cores = s / wall
		}
		out = append(out, cpuUse{Process: p, Seconds: s, Cores: cores})
	}
	slices.SortFunc(out, func(a, b cpuUse) int {
		if a.Seconds != b.Seconds {
			if a.Seconds > b.Seconds {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Process, b.Process)
	})
	return out
}

// bottleneck names what limits a burst, from the CPU each process used over wall seconds on
// a machine with cores CPUs, and the Pod phases: the machine when its CPUs were nearly all in
// use (≥ 90%), else the busiest process when it used ≥ 0.9 of a core (a single-threaded limit
// or a client rate limit shows as less), else the phase with the longest median.
func bottleneck(cpu []cpuUse, wall float64, cores int, phases map[string]phaseStats) string {
	total := 0.0
	for _, c := range cpu {
		total += c.Seconds
	}
	var top string
	if len(cpu) > 0 {
		top = fmt.Sprintf("%s (%.2f cores)", cpu[0].Process, cpu[0].Cores)
	}
	if wall > 0 && total/wall >= 0.9*float64(cores) {
		return fmt.Sprintf("the machine's CPU: %.2f of %d cores in use, most by %s", total/wall, cores, top)
	}
	if len(cpu) > 0 && cpu[0].Cores >= 0.9 {
		return "the CPU of " + top
	}
	longest, at := "", 0.0
	for _, p := range syncerPhases {
		if s, ok := phases[p]; ok && s.P50 > at {
			longest, at = p, s.P50
		}
	}
	if longest != "" {
		return fmt.Sprintf("waiting: phase %s has the longest median (%.2f s); no process above 0.9 cores (busiest %s)", longest, at, top)
	}
	return "unknown (no phase data); busiest " + top
}

// apiserverRequests returns the requests the apiserver of cp has answered since it started
// (apiserver_request_total from its /metrics) by requestKinds. Errors: /metrics unreadable.
func apiserverRequests(ctx context.Context, cp *localcluster.ControlPlane) (map[string]float64, error) {
	samples, err := apiserverMetrics(ctx, cp)
	if err != nil {
		return nil, err
	}
	return requestKinds(samples), nil
}

// requestKinds sums the apiserver_request_total samples by "VERB resource[/subresource]" (the
// verb as the apiserver labels it: POST, PUT, PATCH, GET, LIST, WATCH, ...) and adds the key
// "429": every answer with code 429 Too Many Requests, the sign that API Priority and Fairness
// rejected or queued-out a client.
func requestKinds(samples []metricSample) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if s.name != "apiserver_request_total" {
			continue
		}
		if s.labels["code"] == "429" {
			out["429"] += s.value
		}
		key := s.labels["verb"] + " " + s.labels["resource"]
		if s.labels["subresource"] != "" {
			key += "/" + s.labels["subresource"]
		}
		out[key] += s.value
	}
	return out
}

// requestsPerPod returns, for each key of after, (after − before) / pods, leaving out keys
// that did not change; the zero map for pods ≤ 0.
func requestsPerPod(before, after map[string]float64, pods int) map[string]float64 {
	out := map[string]float64{}
	if pods <= 0 {
		return out
	}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d / float64(pods)
		}
	}
	return out
}
