// Package kubeletproxy serves the kubelet API of the tenants' virtual Nodes, so that a tenant
// user's `kubectl logs`, `exec`, `attach` and `port-forward` work through the tenant
// apiserver: the vNodes advertise this server's address and port (pkg/vnode), the tenant
// apiserver connects to it as it would to a kubelet, and the server forwards each request to
// the super apiserver's subresource of the super Pod (pods/log, pods/exec, pods/attach,
// pods/portforward) with the syncer's own super-cluster credentials. Its stats/summary and
// metrics/resource answer from the super Node's resource metrics, reduced to the calling
// tenant's own Pods under their tenant names.
//
// # Usage
//
// New builds a Server from Options: a function listing the registered tenants (name, UID, the
// CA pool of Tenant spec.kubeletClientCA, a tenant Pod lookup in the syncer's cache), a super
// Pod lookup in the syncer's super cache, and the syncer's super rest.Config. Start (a
// manager.Runnable) serves it over TLS on Options.BindAddress; `vc-syncer run
// --kubelet-bind-address` wires it.
//
// # Implementation details
//
// Every request is attributed to exactly one tenant by its verified TLS client certificate:
// the handshake requests a certificate, and the handler verifies its chain (client-auth key
// usage) against each tenant's spec.kubeletClientCA. No certificate, one no tenant's CA
// verifies, or one that two tenants' CAs verify is answered 401 and counted in
// vcsyncer_kubelet_unauthenticated_total{reason}. The caller's headers are never forwarded
// (Authorization, cookies and impersonation headers included): the forwarded request is new,
// with the checked names in its path, the allowlisted query parameters, and only the headers a
// SPDY or WebSocket upgrade needs.
//
// The path is parsed without decoding: a percent sign anywhere (an encoded or double-encoded
// slash or dot), a "." or ".." segment, an empty or extra segment, or a name Kubernetes would
// not accept (namespace and container: DNS labels, Pod: a DNS subdomain, so at most 253
// characters) is answered 404 before anything is looked up. Served: containerLogs, exec,
// attach (/<endpoint>/<namespace>/<pod>/<container>), portForward (/portForward/<namespace>/
// <pod>), stats/summary, metrics/resource and healthz; anything else is 404. Then the
// tenant Pod must be in the tenant's cache and declare the container (containers and init
// containers; ephemeral containers are never synced), and the super Pod at the place the tenant namespace maps to
// (conversion.SuperNamespace) must be the syncer's copy of exactly that Pod: its ownership
// stamps name the tenant's UID, the namespace, the name and the tenant Pod's UID. A tenant
// thus reaches only its own synced Pods, whatever names it sends. Each outcome is counted in
// vcsyncer_kubelet_requests_total{tenant,endpoint,result}.
//
// Query parameters are allowlisted per endpoint and their values checked: the log flags
// (follow, previous, timestamps) are booleans, tailLines, limitBytes and sinceSeconds
// integers in range, sinceTime RFC 3339, each at most once; port-forward ports 1–65535 (the
// tenant apiserver's port=<p1>,<p2> becomes the super apiserver's ports=<p>, once each).
// Another value is answered 400 (result bad_query), never forwarded.
//
// A tenant's TenantPolicy can switch exec, attach and port-forward off (kubelet.allowExec,
// allowAttach, allowPortForward; Tenant.Forbidden): such a request is answered 403 naming the
// field (result policy_forbidden), before its Pod is looked up. Logs are always served.
//
// stats/summary and metrics/resource (GET, exact paths; stats.go, resourcemetrics.go) need
// the vNode, which a kubelet request does not name: a tenant apiserver's
// nodes/<node>/proxy/<path> sets X-Forwarded-Uri to /api/v1/nodes/<node>/proxy/<path> (it
// overwrites a caller's), and a request without it, or naming no DNS-subdomain Node, is
// answered 404 (result node_not_named). vNodes are named as their super Nodes. The tenant's
// Pods on that Node are those of its cache with spec.nodeName = <node> whose super Pod is the
// syncer's copy of exactly that Pod (isCopyOf, as for logs and exec); with none, the answer
// is empty and the super cluster is not asked. Otherwise the server reads the super Node's
// resource metrics (Prometheus text) through the super apiserver's
// nodes/<node>/proxy<Options.SuperMetricsPath> ("{nodeName}" substituted; a kubelet's
// /metrics/resource by default, kwok's /metrics/nodes/{nodeName}/metrics/resource), with
// the syncer's credentials, at most MaxSuperMetricsBytes (4 MiB; more, an error status or
// text that does not parse is 502, result super_error). Of every family with namespace and
// pod labels only the samples of those super Pods are kept, relabelled with the tenant
// namespace and name and no label but container; node_cpu_usage_seconds_total and
// node_memory_working_set_bytes are replaced by the sums over the tenant's own Pods (the
// super Node's totals would tell a tenant what the other tenants on it use);
// scrape_error and resource_scrape_error pass; every other family (node_swap_usage_bytes,
// histograms) is dropped. metrics/resource serves that text; stats/summary the
// k8s.io/kubelet stats/v1alpha1 Summary built from the same samples (node cpu and memory,
// each Pod's podRef with tenant name, namespace and UID, cpu usageCoreNanoSeconds,
// memory workingSetBytes, containers; no usageNanoCores, which needs two readings, and no
// filesystem or network stats, which resource metrics lack). Each request holds one of the
// tenant's places (below) while the super Node is read.
//
// Tenants are hostile, so what one can hold is bounded. Every forwarded request holds one of
// the tenant's places until it ends (its TenantPolicy's kubelet.maxStreams, at most and by
// default Options.MaxStreamsPerTenant, 32): a log read, `logs -f`, exec, attach,
// port-forward. One more is answered 429 with a message naming the limit (result
// too_many_streams); vcsyncer_kubelet_open_streams{tenant} shows the count.
// The server closes keep-alive connections idle for IdleTimeout (90s) and connections
// without a TLS handshake and request headers after ReadHeaderTimeout (10s). Every
// RevalidateInterval (2s) the client certificate of each open stream is verified again
// against the current Tenants: a stream whose certificate no longer names its tenant alone
// (the Tenant was removed or re-created, its spec.kubeletClientCA changed, or another
// Tenant's CA verifies it too) is ended, its request context cancelled and, for an upgraded
// stream, its hijacked connection closed (http.Server.Close never closes those), and counted
// in vcsyncer_kubelet_streams_revoked_total{reason}.
//
// # Implementation considerations
//
// Forwarding through the super apiserver, not to the super Node's kubelet, needs no kubelet
// client credentials in the syncer and no network path from the syncer to the nodes; the
// super apiserver authorizes each request against the syncer's RBAC (pods/log get;
// pods/exec, pods/attach, pods/portforward create) and audits it, and the
// ValidatingAdmissionPolicy that confines the syncer's writes can confine its CONNECTs to the
// namespaces it manages. The cost is one more hop for the stream bytes.
//
// Resource metrics go through nodes/<node>/proxy, so with Options.NodeStats (off by
// default) the syncer needs nodes/proxy get in the super cluster, which by itself opens every
// node's whole kubelet API (node-wide stats, the logs and, through a WebSocket GET, exec of
// every Pod); through the super apiserver the ValidatingAdmissionPolicy vc-syncer-confine
// allows a nodes/proxy CONNECT only for a resource metrics path, but a kubelet called
// directly with the syncer's token authorizes its whole API with that grant. Concurrent
// requests for one Node share one read of its metrics (singleflight), at most maxNodeReads
// reads run at once. Nothing
// the tenant sends reaches that path: the Node name is checked and the path is the
// syncer's. kube-apiserver proxies nodes/<node>/proxy only to global unicast addresses, so
// a super cluster whose kubelets listen on loopback (the local kwok) is read directly
// instead (Options.SuperMetricsURL, with the super config's CA and client certificate,
// never its token); for the same reason a tenant apiserver serves nodes/<vNode>/proxy only
// when the vNodes advertise a global unicast address (a Service IP does), not loopback.
//
// The server's own certificate is Options.CertFile/KeyFile, or a self-signed one generated at
// start. A tenant apiserver verifies a kubelet's serving certificate only when it runs with
// --kubelet-certificate-authority; give it the CA of CertFile then.
//
// It sits on floor 1 of the package map in docs/architecture.md and may import packages on
// floors 0–1 only (today: pkg/conversion, pkg/metrics); test/layering checks it.
package kubeletproxy
