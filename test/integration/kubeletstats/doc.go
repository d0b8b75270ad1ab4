// Package kubeletstats runs the syncer in-process with its kubelet API (pkg/kubeletproxy)
// against real local control planes (a super cluster whose kwok Node serves resource metrics,
// and two tenants with a Pod each on that Node) and checks that a tenant user's
// `kubectl get --raw /api/v1/nodes/<vNode>/proxy/stats/summary` and .../metrics/resource show
// that tenant's own Pod under its tenant names, never the other tenant's, and not the super
// Node's totals.
//
//	go test -count=1 -run 'TestKubeletStats' ./test/integration/kubeletstats/ -v
//
// kube-apiserver proxies nodes/<node>/proxy only to global unicast addresses (never
// loopback), so the vNodes advertise the kubelet API on this machine's first global unicast
// IPv4 address; on a machine without one the test sends, straight to the kubelet API on
// loopback, exactly what the tenant apiserver would (its kubelet client certificate and
// X-Forwarded-Uri). It is a separate package from test/integration/kubelet because one test
// binary runs one in-process syncer.
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package kubeletstats
