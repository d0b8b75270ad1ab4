package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// CoreDNS is the component name of a tenant's DNS server started by StartCoreDNS (also its log
// file name in LogDir()).
const CoreDNS = "coredns"

// Names of a tenant's cluster DNS Service, as kubeadm creates it: kube-system/kube-dns with
// selector k8s-app=kube-dns and ports 53/UDP "dns", 53/TCP "dns-tcp", 9153/TCP "metrics".
const (
	ClusterDNSNamespace = metav1.NamespaceSystem
	ClusterDNSService   = "kube-dns"
	ClusterDNSAppLabel  = "kube-dns" // value of label k8s-app on the Service and its Pods
)

// RefusedLabel is the label vc-syncer sets on a tenant Service that has no super copy because
// it was refused (conversion.LabelRefused; this package imports none of the syncer's). A
// tenant's CoreDNS leaves such Services unanswered with `labels !tenancy.vcsyncer.io/refused`
// in its kubernetes plugin block, as the servers StartCoreDNS starts do.
const RefusedLabel = "tenancy.vcsyncer.io/refused"

// ClusterDomain is the DNS domain of every local cluster (kubeadm's and the kubelet's default).
const ClusterDomain = "cluster.local"

// DNSServer is a running CoreDNS that serves one tenant's cluster DNS, as the tenant's CoreDNS
// Pod would: its kubernetes plugin watches the tenant apiserver (Services, EndpointSlices,
// Namespaces, Pods) and answers names under ClusterDomain. It stops with its ControlPlane.
type DNSServer struct {
	// Addr is host:port (127.0.0.1 and a free port) where it answers over UDP and TCP.
	Addr string
	// Corefile is the path of its configuration file.
	Corefile string
}

// createClusterDNSService creates the tenant's kube-system/kube-dns Service the way kubeadm
// does, so that the tenant looks like one that runs cluster DNS (the syncer points tenant Pods
// at it). Its ClusterIP is allocated by the tenant apiserver: nothing in a tenant control plane
// without kubelets needs it at a fixed address. Nothing runs behind it in the tenant itself
// (kwok runs no containers); StartCoreDNS starts a local server that answers in its place.
func createClusterDNSService(ctx context.Context, client kubernetes.Interface) error {
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterDNSService, Namespace: ClusterDNSNamespace, Labels: map[string]string{
			"k8s-app": ClusterDNSAppLabel, "kubernetes.io/name": "CoreDNS",
		}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"k8s-app": ClusterDNSAppLabel},
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: udp, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Port: 53, Protocol: tcp, TargetPort: intstr.FromInt32(53)},
				{Name: "metrics", Port: 9153, Protocol: tcp, TargetPort: intstr.FromInt32(9153)},
			},
		},
	}
	err := poll(ctx, readyTimeout, func(ctx context.Context) error {
		_, err := client.CoreV1().Services(ClusterDNSNamespace).Create(ctx, svc, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("failed to create Service %s/%s: %w", ClusterDNSNamespace, ClusterDNSService, err)
	}
	return nil
}

// corefile returns the Corefile of a tenant DNS server: kubeadm's default server block for
// domain without forward (there is no upstream here), bound to 127.0.0.1:port, with "ready" on
// readyPort, query logging, no cache (answers follow the apiserver at once) and the kubernetes
// plugin reading the cluster through kubeconfig. "pods insecure" answers
// <a-b-c-d>.<ns>.pod.<domain> as kubeadm's Corefile does. The one line kubeadm's lacks,
// "labels !<RefusedLabel>", is what a vc-syncer tenant's CoreDNS needs so that a Service the
// syncer refused (it has no super copy, nothing answers at its ClusterIP) gets no DNS answer.
func corefile(domain string, port, readyPort int, kubeconfig string) string {
	return fmt.Sprintf(`.:%d {
    bind 127.0.0.1
    errors
    log
    ready 127.0.0.1:%d
    kubernetes %s in-addr.arpa ip6.arpa {
        kubeconfig %s
        labels !%s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    loadbalance
}
`, port, readyPort, domain, kubeconfig, RefusedLabel)
}

// StartCoreDNS starts CoreDNS (bin/coredns of the tools directory, built by
// hack/build-tools.sh from hack/tools/coredns) as the cluster DNS of this control plane: its
// kubernetes plugin reads this control plane's apiserver with the admin kubeconfig and answers
// for ClusterDomain (Service names, <pod>.<svc>.<ns>.svc names from EndpointSlice hostnames,
// Pod A records) on 127.0.0.1, over UDP and TCP, on a free port. It returns once CoreDNS's
// ready plugin reports the kubernetes plugin synced with the apiserver. It stands in for the
// CoreDNS Pod of a real tenant, which kwok cannot run; the control plane's Stop stops it. The
// log is LogDir()/coredns.log (one line per query).
//
// An error says the binary is missing (run `make tools`), or CoreDNS did not become ready
// (with its log tail).
func (c *ControlPlane) StartCoreDNS(ctx context.Context) (*DNSServer, error) {
	bin := filepath.Join(c.toolsDir, "bin", CoreDNS)
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		return nil, missingToolsError(c.toolsDir, []string{"bin/" + CoreDNS})
	}
	d := &DNSServer{Corefile: filepath.Join(c.Dir, "Corefile")}
	err := c.startComponent(ctx, CoreDNS, clientTimeout, func() ([]string, probe, error) {
		port, err := FreePort()
		if err != nil {
			return nil, nil, err
		}
		readyPort, err := FreePort()
		if err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(d.Corefile, []byte(corefile(ClusterDomain, port, readyPort, c.KubeconfigPath)), 0o644); err != nil {
			return nil, nil, fmt.Errorf("failed to write %s: %w", d.Corefile, err)
		}
		d.Addr = "127.0.0.1:" + strconv.Itoa(port)
		return []string{"-conf", d.Corefile}, httpProbe("http://127.0.0.1:"+strconv.Itoa(readyPort)+"/ready", nil, ""), nil
	}, bin)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// DigCommand returns the dig command line that asks this server for the A records of fqdn
// (e.g. "kubernetes.default.svc.cluster.local"), for people trying the DNS out by hand.
func (d *DNSServer) DigCommand(fqdn string) string {
	host, port, _ := strings.Cut(d.Addr, ":")
	return fmt.Sprintf("dig @%s -p %s %s", host, port, fqdn)
}
