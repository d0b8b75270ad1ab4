package localcluster

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

var getOpts = metav1.GetOptions{}

// FakeNodeName returns the name of the i-th fake Node of the super cluster ("kwok-node-<i>").
func FakeNodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// maxPerNodePodCIDRs is how many Nodes can get their own /24 out of podCIDR; with more Nodes,
// all of them draw Pod IPs from kwok's shared --cidr pool instead.
const maxPerNodePodCIDRs = 256

// fakeNode returns the i-th fake Node of n: managed by kwok (annotation), InternalIP
// 10.200.0.0+i+1, and podCIDR 10.244.<i>.0/24 when n <= 256.
func fakeNode(i, n int) *corev1.Node {
	name := FakeNodeName(i)
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, binary.BigEndian.Uint32(net.IPv4(10, 200, 0, 0).To4())+uint32(i)+1)
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				FakeNodeAnnotation:             fakeNodeValue,
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"type":                 "kwok",
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip.String()},
				{Type: corev1.NodeHostName, Address: name},
				// kwok serves every fake Node's kubelet API on 127.0.0.1 (daemonEndpoints port
				// set by kwok's --node-port); the super apiserver prefers this address type
				// (--kubelet-preferred-address-types=InternalDNS) for logs, exec and proxy.
				{Type: corev1.NodeInternalDNS, Address: "127.0.0.1"},
			},
		},
	}
	if n <= maxPerNodePodCIDRs {
		cidr := fmt.Sprintf("10.244.%d.0/24", i)
		node.Spec.PodCIDR, node.Spec.PodCIDRs = cidr, []string{cidr}
	}
	return node
}

// createFakeNodes creates n fake Nodes for kwok to manage.
func createFakeNodes(ctx context.Context, client kubernetes.Interface, n int) error {
	for i := range n {
		if _, err := client.CoreV1().Nodes().Create(ctx, fakeNode(i, n), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("failed to create fake Node %s: %w", FakeNodeName(i), err)
		}
	}
	return nil
}

// waitNodesReady waits until the n fake Nodes are Ready and carry no node.kubernetes.io/
// taints (not-ready, unreachable), so that the scheduler accepts them.
func (c *ControlPlane) waitNodesReady(ctx context.Context, n int) error {
	err := poll(ctx, readyTimeout, func(ctx context.Context) error {
		for i := range n {
			node, err := c.Client.CoreV1().Nodes().Get(ctx, FakeNodeName(i), getOpts)
			if err != nil {
				return err
			}
			if !nodeReady(node) {
				return fmt.Errorf("Node %s is not Ready", node.Name)
			}
			for _, t := range node.Spec.Taints {
				if strings.HasPrefix(t.Key, "node.kubernetes.io/") {
					return fmt.Errorf("Node %s still has taint %s", node.Name, t.ToString())
				}
			}
		}
		return nil
	}, c.processes()...)
	if err != nil {
		return fmt.Errorf("fake Nodes did not become Ready: %w", err)
	}
	return nil
}

// nodeReady reports whether the Node's Ready condition is True.
func nodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// poll calls check every 100 ms until it returns nil, timeout elapses or ctx ends. It fails
// early when one of procs exits. The error carries check's last error.
func poll(ctx context.Context, timeout time.Duration, check func(context.Context) error, procs ...*process) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		callCtx, callCancel := context.WithTimeout(ctx, 10*time.Second)
		last := check(callCtx)
		callCancel()
		if last == nil {
			return nil
		}
		for _, p := range procs {
			if err := p.unexpectedExit(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up after %s (%w): %w", timeout, context.Cause(ctx), last)
		case <-tick.C:
		}
	}
}
