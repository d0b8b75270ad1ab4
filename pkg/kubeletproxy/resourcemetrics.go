package kubeletproxy

import (
	"math"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// tenantPod names, by its tenant names and UID, a super Pod the calling tenant may see.
type tenantPod struct{ namespace, name, uid string }

// Names of the kubelet's resource metrics (/metrics/resource) this file reads or writes.
const (
	labelNamespace = "namespace"
	labelPod       = "pod"
	labelContainer = "container"

	famContainerStart  = "container_start_time_seconds"
	famContainerCPU    = "container_cpu_usage_seconds_total"
	famContainerMemory = "container_memory_working_set_bytes"
	famPodCPU          = "pod_cpu_usage_seconds_total"
	famPodMemory       = "pod_memory_working_set_bytes"
	famNodeCPU         = "node_cpu_usage_seconds_total"
	famNodeMemory      = "node_memory_working_set_bytes"
)

// nodeSums are the node-level families a tenant sees, each replaced by the sum of its pod
// family over the tenant's own Pods: the super Node's totals would tell a tenant how much the
// other tenants on that node use.
var nodeSums = map[string]string{famNodeCPU: famPodCPU, famNodeMemory: famPodMemory}

// nodeSumHelp is the help text of the node-level families a tenant sees.
var nodeSumHelp = map[string]string{
	famNodeCPU:    "Cumulative cpu time consumed by the tenant's own Pods on the node in core-seconds (vc-syncer: not the node's total)",
	famNodeMemory: "Current working set of the tenant's own Pods on the node in bytes (vc-syncer: not the node's total)",
}

// keptUnlabelled are node-level families passed on as they are (without labels): they say
// nothing about other tenants.
var keptUnlabelled = map[string]bool{"scrape_error": true, "resource_scrape_error": true}

// filterResourceMetrics returns the families of a super Node's resource metrics that a tenant
// may see, its names in place of the super ones: of every family with namespace and pod
// labels, only the samples of the super Pods in pods (keyed superNamespace/superName),
// relabelled with their tenant namespace and name and keeping no label but container;
// node_cpu_usage_seconds_total and node_memory_working_set_bytes replaced by the sums of
// the tenant's pod_cpu_usage_seconds_total and pod_memory_working_set_bytes; scrape_error
// and resource_scrape_error as they are; every other family (node-level ones such as
// node_swap_usage_bytes, histograms, summaries) dropped. The result is sorted by name.
func filterResourceMetrics(fams map[string]*dto.MetricFamily, pods map[string]tenantPod) []*dto.MetricFamily {
	var out []*dto.MetricFamily
	for name, f := range fams {
		if _, ok := nodeSums[name]; ok || f == nil {
			continue
		}
		if t := f.GetType(); t != dto.MetricType_COUNTER && t != dto.MetricType_GAUGE && t != dto.MetricType_UNTYPED {
			continue
		}
		var kept []*dto.Metric
		for _, m := range f.GetMetric() {
			if keptUnlabelled[name] {
				if len(m.GetLabel()) == 0 {
					kept = append(kept, copyValue(f.GetType(), m, nil))
				}
				continue
			}
			ns, pod, container := labelsOf(m)
			tp, ok := pods[ns+"/"+pod]
			if ns == "" || pod == "" || !ok {
				continue
			}
			ls := []*dto.LabelPair{}
			if container != "" {
				ls = append(ls, label(labelContainer, container))
			}
			ls = append(ls, label(labelNamespace, tp.namespace), label(labelPod, tp.name))
			kept = append(kept, copyValue(f.GetType(), m, ls))
		}
		if len(kept) > 0 {
			out = append(out, &dto.MetricFamily{Name: ptr.To(name), Help: f.Help, Type: f.Type, Metric: kept})
		}
	}
	for node, podFam := range nodeSums {
		if _, ok := fams[node]; !ok {
			continue
		}
		var sum float64
		var ts int64
		for _, o := range out {
			if o.GetName() != podFam {
				continue
			}
			for _, m := range o.GetMetric() {
				sum += valueOf(m)
				ts = max(ts, m.GetTimestampMs())
			}
		}
		typ := dto.MetricType_GAUGE
		if node == famNodeCPU {
			typ = dto.MetricType_COUNTER
		}
		m := &dto.Metric{}
		setValue(typ, m, sum)
		if ts > 0 {
			m.TimestampMs = ptr.To(ts)
		}
		out = append(out, &dto.MetricFamily{Name: ptr.To(node), Help: ptr.To(nodeSumHelp[node]), Type: typ.Enum(), Metric: []*dto.Metric{m}})
	}
	slices.SortFunc(out, func(a, b *dto.MetricFamily) int { return cmpString(a.GetName(), b.GetName()) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func label(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: ptr.To(name), Value: ptr.To(value)}
}

// labelsOf returns the namespace, pod and container labels of m.
func labelsOf(m *dto.Metric) (ns, pod, container string) {
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case labelNamespace:
			ns = l.GetValue()
		case labelPod:
			pod = l.GetValue()
		case labelContainer:
			container = l.GetValue()
		}
	}
	return ns, pod, container
}

// valueOf returns the value of a counter, gauge or untyped sample.
func valueOf(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}

func setValue(t dto.MetricType, m *dto.Metric, v float64) {
	m.Counter, m.Gauge, m.Untyped = nil, nil, nil
	switch t {
	case dto.MetricType_COUNTER:
		m.Counter = &dto.Counter{Value: ptr.To(v)}
	case dto.MetricType_GAUGE:
		m.Gauge = &dto.Gauge{Value: ptr.To(v)}
	default:
		m.Untyped = &dto.Untyped{Value: ptr.To(v)}
	}
}

// copyValue returns a sample with m's value and timestamp and the labels ls (nothing else of
// m: no exemplar, no created timestamp).
func copyValue(t dto.MetricType, m *dto.Metric, ls []*dto.LabelPair) *dto.Metric {
	out := &dto.Metric{Label: ls}
	setValue(t, out, valueOf(m))
	if m.TimestampMs != nil {
		out.TimestampMs = ptr.To(m.GetTimestampMs())
	}
	return out
}

// summaryOf builds the kubelet's stats summary (the fields metrics consumers read: CPU
// usage in core-nanoseconds, working-set memory, start times) of node from its filtered
// resource metrics (filterResourceMetrics). pods lists the Pods to report, each in the
// summary even without samples. now stamps samples that carry no timestamp.
func summaryOf(node string, fams []*dto.MetricFamily, pods map[string]tenantPod, now time.Time) statsv1alpha1.Summary {
	type key struct{ namespace, name string }
	byPod := map[key]*statsv1alpha1.PodStats{}
	for _, tp := range pods {
		byPod[key{tp.namespace, tp.name}] = &statsv1alpha1.PodStats{PodRef: statsv1alpha1.PodReference{
			Name: tp.name, Namespace: tp.namespace, UID: tp.uid}}
	}
	container := func(ps *statsv1alpha1.PodStats, name string) *statsv1alpha1.ContainerStats {
		for i := range ps.Containers {
			if ps.Containers[i].Name == name {
				return &ps.Containers[i]
			}
		}
		ps.Containers = append(ps.Containers, statsv1alpha1.ContainerStats{Name: name})
		return &ps.Containers[len(ps.Containers)-1]
	}
	at := func(m *dto.Metric) metav1.Time {
		if m.TimestampMs != nil {
			return metav1.NewTime(time.UnixMilli(m.GetTimestampMs()).UTC())
		}
		return metav1.NewTime(now.UTC())
	}
	sum := statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: node}}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			v := valueOf(m)
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				continue
			}
			ns, pod, c := labelsOf(m)
			ps := byPod[key{ns, pod}]
			switch f.GetName() {
			case famNodeCPU:
				sum.Node.CPU = cpuStats(at(m), v)
			case famNodeMemory:
				sum.Node.Memory = memoryStats(at(m), v)
			}
			if ps == nil {
				continue
			}
			switch f.GetName() {
			case famPodCPU:
				ps.CPU = cpuStats(at(m), v)
			case famPodMemory:
				ps.Memory = memoryStats(at(m), v)
			case famContainerCPU:
				container(ps, c).CPU = cpuStats(at(m), v)
			case famContainerMemory:
				container(ps, c).Memory = memoryStats(at(m), v)
			case famContainerStart:
				if v > maxUnixSeconds {
					continue
				}
				t := metav1.NewTime(time.Unix(int64(v), 0).UTC())
				cs := container(ps, c)
				cs.StartTime = t
				if ps.StartTime.IsZero() || t.Before(&ps.StartTime) {
					ps.StartTime = t
				}
			}
		}
	}
	sum.Pods = make([]statsv1alpha1.PodStats, 0, len(byPod))
	for _, ps := range byPod {
		slices.SortFunc(ps.Containers, func(a, b statsv1alpha1.ContainerStats) int { return cmpString(a.Name, b.Name) })
		sum.Pods = append(sum.Pods, *ps)
	}
	slices.SortFunc(sum.Pods, func(a, b statsv1alpha1.PodStats) int {
		if c := cmpString(a.PodRef.Namespace, b.PodRef.Namespace); c != 0 {
			return c
		}
		return cmpString(a.PodRef.Name, b.PodRef.Name)
	})
	return sum
}

// maxUnixSeconds bounds the start times read (year 5138): a larger value is not a time.
const maxUnixSeconds = 1e11

// cpuStats returns the CPU stats of seconds of CPU time, nil when out of range.
func cpuStats(t metav1.Time, seconds float64) *statsv1alpha1.CPUStats {
	if seconds*1e9 >= 1<<63 {
		return nil
	}
	return &statsv1alpha1.CPUStats{Time: t, UsageCoreNanoSeconds: ptr.To(uint64(seconds * 1e9))}
}

// memoryStats returns the memory stats of a working set of bytes, nil when out of range.
func memoryStats(t metav1.Time, bytes float64) *statsv1alpha1.MemoryStats {
	if bytes >= 1<<63 {
		return nil
	}
	return &statsv1alpha1.MemoryStats{Time: t, WorkingSetBytes: ptr.To(uint64(bytes))}
}
