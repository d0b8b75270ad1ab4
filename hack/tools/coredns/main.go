// Command coredns is CoreDNS (github.com/coredns/coredns, pinned in go.mod) with the plugins of
// the default Kubernetes Corefile (kubeadm's: errors, health, ready, kubernetes, prometheus,
// forward, cache, loop, reload, loadbalance) plus bind and log. It stands in for a tenant's
// CoreDNS Pod in the test framework (kwok cannot run containers). CoreDNS's own main imports
// every plugin (core/plugin); registering only these keeps the build small, and the directive
// order still comes from core/dnsserver.
package main

import (
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() {
	coremain.Run()
}
