// Package kubelet runs the syncer in-process with its kubelet API (pkg/kubeletproxy) against
// real local control planes (a super cluster whose kwok Nodes answer logs, exec, attach and
// port-forward, the latter to an echo server of the test, and two tenants) and checks that a
// tenant user's logs, exec, attach (SPDY and WebSocket), port-forward (SPDY, the WebSocket
// tunnel and the real kubectl) and the real `kubectl cp` work through the tenant apiserver,
// and that the kubelet API refuses every request it cannot attribute to one tenant or that
// names anything but that tenant's own synced Pods.
//
//	go test -count=1 -run 'TestKubeletAPI' ./test/integration/kubelet/ -v
//	go test -count=1 -run 'TestKubeletAPI/attack/(encoded-slash|dot-dot)' ./test/integration/kubelet/ -v
//	go test -count=1 -run 'TestKubeletAPI/(attach|port-forward|cp)' ./test/integration/kubelet/ -v
//
// It is a test or tool (floor 9 of the package map in docs/architecture.md): it may import
// any package of the module, and no package outside test/, e2e/ and hack/ imports it.
package kubelet
