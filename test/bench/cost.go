package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// perPodCost is what one Pod costs, from the CPU seconds of every process during the baseline
// burst (straight into the super cluster) and during the burst through the syncer (process
// names as componentCPU gives them, "super/kube-apiserver", "tenant-1/kube-apiserver", ...,
// and "vc-syncer").
type perPodCost struct {
	// SuperCPUPerPodRatio is the CPU of the super cluster's processes (every "super/..."
	// process: apiserver, etcd, scheduler, controller manager, kwok; not the syncer) per Pod
	// through the syncer over the same per Pod straight.
	SuperCPUPerPodRatio float64
	// SuperCPUSecondsPerPod is that CPU per Pod, by "baseline" and "syncer".
	SuperCPUSecondsPerPod map[string]float64
	// SyncerCPUSecondsPerPod is the syncer's CPU per Pod through it.
	SyncerCPUSecondsPerPod float64
	// TenantAPIServerCPUSecondsPerPod is every tenant kube-apiserver's CPU together per Pod
	// through the syncer.
	TenantAPIServerCPUSecondsPerPod float64
	// SuperAPIServerCPUSecondsPerPod and ...Direct are the super kube-apiserver's CPU per Pod
	// through the syncer and straight.
	SuperAPIServerCPUSecondsPerPod, SuperAPIServerCPUSecondsPerPodDirect float64
}

// costPerPod computes perPodCost from the baseline's and the syncer run's CPU seconds by
// process and their numbers of Pods; a side without Pods gives zeros (and a ratio of 0).
func costPerPod(base, synced map[string]float64, basePods, syncedPods int) perPodCost {
	per := func(v float64, pods int) float64 {
		if pods <= 0 {
			return 0
		}
		return v / float64(pods)
	}
	super := func(cpu map[string]float64) float64 {
		s := 0.0
		for p, v := range cpu {
			if strings.HasPrefix(p, "super/") {
				s += v
			}
		}
		return s
	}
	tenantAPIServers := 0.0
	for p, v := range synced {
		if strings.HasPrefix(p, "tenant-") && strings.HasSuffix(p, "/kube-apiserver") {
			tenantAPIServers += v
		}
	}
	c := perPodCost{
		SuperCPUSecondsPerPod:                map[string]float64{"baseline": per(super(base), basePods), "syncer": per(super(synced), syncedPods)},
		SyncerCPUSecondsPerPod:               per(synced["vc-syncer"], syncedPods),
		TenantAPIServerCPUSecondsPerPod:      per(tenantAPIServers, syncedPods),
		SuperAPIServerCPUSecondsPerPod:       per(synced["super/kube-apiserver"], syncedPods),
		SuperAPIServerCPUSecondsPerPodDirect: per(base["super/kube-apiserver"], basePods),
	}
	if b := c.SuperCPUSecondsPerPod["baseline"]; b > 0 {
		c.SuperCPUPerPodRatio = c.SuperCPUSecondsPerPod["syncer"] / b
	}
	return c
}

// heldMetric is the syncer's histogram of the time a new Pod spent inside it.
const heldMetric = "vcsyncer_pod_creation_syncer_held_seconds"

// heldStats returns the count, mean and p50/p99 (bucketQuantile) of the observations of
// heldMetric made between the scrapes before and after, over the given tenants (by the
// metric's tenant label; every tenant when none is given); the zero value when there were none.
func heldStats(before, after []metricSample, tenants ...string) phaseStats {
	return histogramDelta(before, after, heldMetric, func(l map[string]string) bool {
		return len(tenants) == 0 || slices.Contains(tenants, l["tenant"])
	})
}

// histogramDelta returns the count, mean and p50/p99 (bucketQuantile) of the observations of
// the Prometheus histogram name made between the scrapes before and after, summed over the
// series whose labels keep accepts; the zero value when there were none.
func histogramDelta(before, after []metricSample, name string, keep func(labels map[string]string) bool) phaseStats {
	type acc struct {
		sum, count float64
		buckets    map[float64]float64
	}
	read := func(samples []metricSample) acc {
		a := acc{buckets: map[float64]float64{}}
		for _, s := range samples {
			if !strings.HasPrefix(s.name, name+"_") || !keep(s.labels) {
				continue
			}
			switch s.name {
			case name + "_sum":
				a.sum += s.value
			case name + "_count":
				a.count += s.value
			case name + "_bucket":
				le, err := strconv.ParseFloat(s.labels["le"], 64)
				if s.labels["le"] == "+Inf" {
					le, err = math.Inf(1), nil
				}
				if err == nil {
					a.buckets[le] += s.value
				}
			}
		}
		return a
	}
	b, a := read(before), read(after)
	n := a.count - b.count
	if n <= 0 {
		return phaseStats{}
	}
	d := map[float64]float64{}
	for le, v := range a.buckets {
		d[le] = v - b.buckets[le]
	}
	return phaseStats{Count: n, Mean: (a.sum - b.sum) / n, P50: bucketQuantile(0.5, d, n), P99: bucketQuantile(0.99, d, n)}
}

// syncerCalls are the values of vcsyncer_pod_creation_call_duration_seconds's call label, in
// the order of a new Pod's downward reconcile: its TokenRequests, the super create, the super
// watch's delivery of the created Pod to the syncer's informer, and the informer's to the
// syncer's handler.
var syncerCalls = []string{"token_request", "super_create", "super_watch", "super_informer"}

// heldBreakdown returns, for the observations made between the scrapes before and after, the
// syncer's phases of a new Pod's creation (vcsyncer_pod_creation_phase_duration_seconds by
// phase: downward_queue, admission_wait, downward_process, super_scheduling, upward_queue,
// upward_process) and the downward reconcile's API calls
// (vcsyncer_pod_creation_call_duration_seconds by call: syncerCalls); a phase
// or call without observations is left out.
func heldBreakdown(before, after []metricSample) (phases, calls map[string]phaseStats) {
	pick := func(name, label string, values []string) map[string]phaseStats {
		out := map[string]phaseStats{}
		for _, v := range values {
			if st := histogramDelta(before, after, name, func(l map[string]string) bool { return l[label] == v }); st.Count > 0 {
				out[v] = st
			}
		}
		return out
	}
	return pick("vcsyncer_pod_creation_phase_duration_seconds", "phase", syncerPhases),
		pick("vcsyncer_pod_creation_call_duration_seconds", "call", syncerCalls)
}

// heldRun is the open-loop run at a fraction of the measured ceiling through the syncer, where
// the syncer's own latency is measured on a machine that is not saturated.
type heldRun struct {
	// Rate is the creation rate over all tenants, Pods/s: Fraction × the throughput the
	// machine's CPUs allow at the saturated run's CPU per Pod through the syncer.
	Rate     float64 `json:"ratePodsPerSecond"`
	Fraction float64 `json:"fractionOfCeiling"`
	// PodsPerTenant Pods were created in each tenant's namespace bench-held.
	PodsPerTenant int `json:"podsPerTenant"`
	// Held is the syncer's heldMetric over the run.
	Held phaseStats `json:"syncerHeld"`
	// EndToEnd is each Pod's latency from its scheduled arrival to Running in its tenant.
	EndToEnd stats `json:"endToEnd"`
	// Phases and Calls are heldBreakdown over the run: where the held time goes (the syncer's
	// queues and processing) and, inside the downward processing, how long the worker waited
	// for the tenant apiserver's TokenRequests and for the super apiserver's create.
	Phases map[string]phaseStats `json:"phases,omitempty"`
	Calls  map[string]phaseStats `json:"calls,omitempty"`
	// TenantCreateCall is the tenant apiserver's answer time to the bench's creates of the run's
	// Pods; DirectCreateCall that of the super apiserver to the same number of the same Pods
	// created straight into it right after, at the same rate (namespaces bench-held-direct-N,
	// deleted after): what one Pod create costs in time on this machine at this load, beside the
	// syncer's super_create.
	TenantCreateCall phaseStats `json:"tenantCreateCall"`
	DirectCreateCall phaseStats `json:"directCreateCall"`
}

// heldPodsPerTenant returns how many Pods each tenant creates in the held run (and as many
// again straight into the super cluster, heldRun.DirectCreateCall): want, fewer when the kwok
// Nodes (110 Pods each) would not hold both beside the saturated run's Pods and a margin of 10
// per Node for the system's own; at least 1.
func heldPodsPerTenant(want, nodes, tenants, podsPerTenant int) int {
	if tenants <= 0 {
		return 0
	}
	room := (nodes*100 - tenants*podsPerTenant) / (2 * tenants)
	return max(1, min(want, room))
}

// storedBytesPerPod returns the mean protobuf size (what the apiserver stores in etcd, less
// a few bytes of envelope) of pods, 0 for none.
func storedBytesPerPod(pods []corev1.Pod) float64 {
	if len(pods) == 0 {
		return 0
	}
	total := 0
	for i := range pods {
		total += pods[i].Size()
	}
	return float64(total) / float64(len(pods))
}

// bytesByPart returns the mean protobuf bytes of pods' parts: "metadata.annotations",
// "metadata.managedFields", "metadata (other)", "spec" and "status" (each part's encoded size,
// without the few bytes of field tags), and the two metadata parts in detail:
// "metadata.annotations: <group>" (annotationGroup) and "metadata.managedFields: <manager>
// <operation>"; nil for no Pods.
func bytesByPart(pods []corev1.Pod) map[string]float64 {
	if len(pods) == 0 {
		return nil
	}
	out := map[string]float64{}
	n := float64(len(pods))
	for i := range pods {
		p := &pods[i]
		ann, mf := 0, 0
		for k, v := range p.Annotations {
			b := len(k) + len(v) + 6 // a map entry's key, value, tags and lengths
			ann += b
			out["metadata.annotations: "+annotationGroup(k)] += float64(b) / n
		}
		for j := range p.ManagedFields {
			e := &p.ManagedFields[j]
			b := e.Size() + 2
			mf += b
			out["metadata.managedFields: "+e.Manager+" "+string(e.Operation)] += float64(b) / n
		}
		out["metadata.annotations"] += float64(ann) / n
		out["metadata.managedFields"] += float64(mf) / n
		out["metadata (other)"] += float64(p.ObjectMeta.Size()-ann-mf) / n
		out["spec"] += float64(p.Spec.Size()) / n
		out["status"] += float64(p.Status.Size()) / n
	}
	return out
}

// annotationGroup names the group of a super Pod annotation key for bytesByPart: the tenant
// tokens (sa-token.N), the tenant's root CA, the other vc-syncer annotations (ownership,
// charge, synced images, downward-API values) or "other".
func annotationGroup(key string) string {
	switch {
	case strings.HasPrefix(key, "tenancy.vcsyncer.io/sa-token."):
		return "tenant tokens"
	case key == "tenancy.vcsyncer.io/tenant-ca.crt":
		return "tenant root CA"
	case strings.HasPrefix(key, "tenancy.vcsyncer.io/"):
		return "other vc-syncer"
	}
	return "other"
}

// superPodBytes lists the super cluster's Pods matching opts in namespace ns ("" for all) and
// returns storedBytesPerPod of them and bytesByPart (0 and nil when the list fails, logged).
func superPodBytes(ctx context.Context, cs kubernetes.Interface, ns string, opts metav1.ListOptions) (float64, map[string]float64) {
	l, err := cs.CoreV1().Pods(ns).List(ctx, opts)
	if err != nil {
		logf("super Pods' size: %v", err)
		return 0, nil
	}
	return storedBytesPerPod(l.Items), bytesByPart(l.Items)
}

// scrapeFile saves the Prometheus text at url into path and returns its samples.
func scrapeFile(ctx context.Context, url, path string) ([]metricSample, error) {
	if err := saveURL(ctx, url, path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseMetrics(string(b)), nil
}

// costTable returns result.md's rows of what a Pod costs (the cost keys of result.json).
func costTable(r result) string {
	md := fmt.Sprintf("| super cluster CPU per Pod, syncer excluded (ms) | %.2f | %.2f | %.2f (superCPUPerPodRatio) |\n",
		1000*r.SuperCPUSecondsPerPod["baseline"], 1000*r.SuperCPUSecondsPerPod["syncer"], r.SuperCPUPerPodRatio)
	md += fmt.Sprintf("| super kube-apiserver CPU per Pod (ms) | %.2f | %.2f | %.2f |\n",
		1000*r.SuperAPIServerCPUSecondsPerPodDirect, 1000*r.SuperAPIServerCPUSecondsPerPod, ratio(r.SuperAPIServerCPUSecondsPerPod, r.SuperAPIServerCPUSecondsPerPodDirect))
	md += fmt.Sprintf("| tenant kube-apiservers' CPU per Pod (ms) | | %.2f | %.2f of the super apiserver's straight |\n",
		1000*r.TenantAPIServerCPUSecondsPerPod, ratio(r.TenantAPIServerCPUSecondsPerPod, r.SuperAPIServerCPUSecondsPerPodDirect))
	md += fmt.Sprintf("| syncer CPU per Pod (ms) | | %.2f | |\n", 1000*r.SyncerCPUSecondsPerPod)
	if r.SyncerAllocBytesPerPod > 0 {
		md += fmt.Sprintf("| syncer heap allocated per Pod (KB), garbage collections per 100 Pods | | %.0f, %.1f | |\n", r.SyncerAllocBytesPerPod/1000, 100*r.SyncerGCCyclesPerPod)
	}
	md += fmt.Sprintf("| bytes stored per super Pod | %.0f | %.0f | %.2f |\n",
		r.BytesStoredPerSuperPod["baseline"], r.BytesStoredPerSuperPod["syncer"], ratio(r.BytesStoredPerSuperPod["syncer"], r.BytesStoredPerSuperPod["baseline"]))
	for _, part := range []string{"metadata.annotations", "metadata.managedFields", "metadata (other)", "spec", "status"} {
		md += fmt.Sprintf("| … of which %s | %.0f | %.0f | |\n", part, r.SuperPodBytesByPart["baseline"][part], r.SuperPodBytesByPart["syncer"][part])
		var detail []string
		for _, side := range r.SuperPodBytesByPart {
			for k := range side {
				if strings.HasPrefix(k, part+": ") && !slices.Contains(detail, k) {
					detail = append(detail, k)
				}
			}
		}
		slices.Sort(detail)
		for _, k := range detail {
			md += fmt.Sprintf("| …… %s | %.0f | %.0f | |\n", strings.TrimPrefix(k, part+": "), r.SuperPodBytesByPart["baseline"][k], r.SuperPodBytesByPart["syncer"][k])
		}
	}
	if h := r.HeldRun; h != nil {
		md += fmt.Sprintf("| time inside the syncer p50 / p99 (s), %d × %d Pods open loop at %.1f Pods/s (%.2f × ceiling) | | %.3f / %.3f | |\n",
			r.Tenants, h.PodsPerTenant, h.Rate, h.Fraction, h.Held.P50, h.Held.P99)
		md += fmt.Sprintf("| end to end p50 / p99 (s) at that rate | | %.3f / %.3f | |\n", h.EndToEnd.P50, h.EndToEnd.P99)
		for _, ph := range syncerPhases {
			if st, ok := h.Phases[ph]; ok {
				md += fmt.Sprintf("| … %s mean, p50 / p99 (ms) at that rate | | %.1f, %.1f / %.1f | |\n", ph, 1000*st.Mean, 1000*st.P50, 1000*st.P99)
			}
		}
		for _, call := range syncerCalls {
			if st, ok := h.Calls[call]; ok {
				md += fmt.Sprintf("| … the worker's wait for %s mean, p50 / p99 (ms) | | %.1f, %.1f / %.1f | |\n", call, 1000*st.Mean, 1000*st.P50, 1000*st.P99)
			}
		}
		md += fmt.Sprintf("| a Pod create's answer time mean, p50 / p99 (ms) at that rate: super apiserver straight; tenant apiservers | %.1f, %.1f / %.1f | %.1f, %.1f / %.1f | |\n",
			1000*h.DirectCreateCall.Mean, 1000*h.DirectCreateCall.P50, 1000*h.DirectCreateCall.P99,
			1000*h.TenantCreateCall.Mean, 1000*h.TenantCreateCall.P50, 1000*h.TenantCreateCall.P99)
	}
	return md
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
