package localcluster

import "strconv"

// KwokMetricsPath is where the super cluster's kwok serves each fake Node's resource metrics
// (a kubelet's /metrics/resource), on the Node's kubelet API: vc-syncer's
// --kubelet-super-metrics-path for this super cluster.
const KwokMetricsPath = "/metrics/nodes/{nodeName}/metrics/resource"

// KwokMetricsURL returns the URL of a fake Node's resource metrics on kwok's kubelet API
// ({nodeName} in place of the Node's name), for vc-syncer's --kubelet-super-metrics-url: kwok
// listens on loopback, where kube-apiserver refuses to proxy nodes/<node>/proxy ("address not
// allowed"). Its serving certificate is signed by the super cluster's CA. Empty for a tenant
// control plane.
func (c *ControlPlane) KwokMetricsURL() string {
	if !c.superPlane || c.kwokPort == 0 {
		return ""
	}
	return "https://127.0.0.1:" + strconv.Itoa(c.kwokPort) + KwokMetricsPath
}

// Usage kwok reports for every container of every super Pod (kwokMetricsConfig), unless the
// super Pod's annotations kwok.x-k8s.io/usage-cpu and kwok.x-k8s.io/usage-memory say otherwise.
const (
	KwokContainerCPU    = "10m"
	KwokContainerMemory = "16Mi"
)

// kwokMetricsConfig is the kwok configuration that makes the fake Nodes' kubelet API serve
// resource metrics: a Metric at KwokMetricsPath with the families of a kubelet's
// /metrics/resource (kwok's kustomize/metrics/resource, v0.8.0, without
// container_start_time_seconds, whose value there is the container's age rather than a unix
// time) and a ClusterResourceUsage
// giving each container KwokContainerCPU and KwokContainerMemory. Nothing in it runs a
// command; it only reads the Pods kwok already watches.
func kwokMetricsConfig() string {
	return `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata:
  name: vc-syncer-usage
spec:
  usages:
  - usage:
      cpu:
        expression: |
          "kwok.x-k8s.io/usage-cpu" in pod.metadata.annotations
          ? Quantity(pod.metadata.annotations["kwok.x-k8s.io/usage-cpu"])
          : Quantity("` + KwokContainerCPU + `")
      memory:
        expression: |
          "kwok.x-k8s.io/usage-memory" in pod.metadata.annotations
          ? Quantity(pod.metadata.annotations["kwok.x-k8s.io/usage-memory"])
          : Quantity("` + KwokContainerMemory + `")
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Metric
metadata:
  name: vc-syncer-metrics-resource
spec:
  path: "` + KwokMetricsPath + `"
  metrics:
  - name: scrape_error
    dimension: node
    help: 1 if there was an error while getting metrics from the node, 0 otherwise
    kind: gauge
    value: '0'
  - name: container_cpu_usage_seconds_total
    dimension: container
    help: Cumulative cpu time consumed by the container in core-seconds
    kind: counter
    labels:
    - {name: container, value: 'container.name'}
    - {name: namespace, value: 'pod.metadata.namespace'}
    - {name: pod, value: 'pod.metadata.name'}
    value: 'pod.CumulativeUsage("cpu", container.name)'
  - name: container_memory_working_set_bytes
    dimension: container
    help: Current working set of the container in bytes
    kind: gauge
    labels:
    - {name: container, value: 'container.name'}
    - {name: namespace, value: 'pod.metadata.namespace'}
    - {name: pod, value: 'pod.metadata.name'}
    value: 'pod.Usage("memory", container.name)'
  - name: pod_cpu_usage_seconds_total
    dimension: pod
    help: Cumulative cpu time consumed by the pod in core-seconds
    kind: counter
    labels:
    - {name: namespace, value: 'pod.metadata.namespace'}
    - {name: pod, value: 'pod.metadata.name'}
    value: 'pod.CumulativeUsage("cpu")'
  - name: pod_memory_working_set_bytes
    dimension: pod
    help: Current working set of the pod in bytes
    kind: gauge
    labels:
    - {name: namespace, value: 'pod.metadata.namespace'}
    - {name: pod, value: 'pod.metadata.name'}
    value: 'pod.Usage("memory")'
  - name: node_cpu_usage_seconds_total
    dimension: node
    help: Cumulative cpu time consumed by the node in core-seconds
    kind: counter
    value: 'node.CumulativeUsage("cpu")'
  - name: node_memory_working_set_bytes
    dimension: node
    help: Current working set of the node in bytes
    kind: gauge
    value: 'node.Usage("memory")'
`
}
