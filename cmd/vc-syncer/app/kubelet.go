package app

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/pkg/kubeletproxy"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/syncer"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// addKubeletAPI adds the virtual Nodes' kubelet API (pkg/kubeletproxy) to mgr when
// --kubelet-bind-address is set. Every replica serves it (no leader election): it only
// reads the caches and forwards with the syncer's super credentials cfg.
func addKubeletAPI(mgr manager.Manager, o *options.Options, cfg *rest.Config, s *syncer.Syncer, registry *tenant.Registry) error {
	addr, _, err := o.KubeletEndpoint()
	if err != nil || addr == "" {
		return err
	}
	env := s.Env()
	srv, err := kubeletproxy.New(kubeletproxy.Options{
		Tenants: func() []kubeletproxy.Tenant { return kubeletTenants(registry) },
		SuperPod: func(ns, name string) (metav1.Object, bool) {
			return env.SuperObject(resources.KindPod, ns, name)
		},
		Super:       rest.CopyConfig(cfg),
		BindAddress: o.KubeletBindAddress, CertFile: o.KubeletTLSCertFile, KeyFile: o.KubeletTLSKeyFile,
		AdvertisedHost: addr, MaxStreamsPerTenant: o.KubeletMaxStreamsPerTenant,
		NodeStats: o.KubeletNodeStats, SuperMetricsPath: o.KubeletSuperMetricsPath, SuperMetricsURL: o.KubeletSuperMetricsURL,
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(srv); err != nil {
		return fmt.Errorf("failed to add the kubelet API: %w", err)
	}
	return nil
}

// kubeletTenants lists the registered tenants for the kubelet API: the CA pool of their
// spec.kubeletClientCA and a lookup of their Pods in the syncer's tenant cache.
func kubeletTenants(registry *tenant.Registry) []kubeletproxy.Tenant {
	names := registry.Names()
	out := make([]kubeletproxy.Tenant, 0, len(names))
	for _, n := range names {
		c, ok := registry.Get(n)
		if !ok {
			continue
		}
		t := kubeletproxy.Tenant{Name: c.Name, UID: c.UID, ClientCAs: c.KubeletClientCAs(), Synced: c.Synced()}
		kp := c.Policy().Kubelet()
		switchedOff := func(endpoint string, allowed *bool) {
			if allowed != nil && !*allowed {
				t.Forbidden = append(t.Forbidden, endpoint)
			}
		}
		switchedOff(kubeletproxy.EndpointExec, kp.AllowExec)
		switchedOff(kubeletproxy.EndpointAttach, kp.AllowAttach)
		switchedOff(kubeletproxy.EndpointPortForward, kp.AllowPortForward)
		if kp.MaxStreams != nil {
			t.MaxStreams = int(*kp.MaxStreams)
		}
		if t.Synced {
			lister := podcache.ListerOf(c.Informers.Core().V1().Pods().Informer())
			t.Pod = func(ns, name string) (*corev1.Pod, error) { return lister.Pods(ns).Get(name) }
			t.Pods = func() ([]*corev1.Pod, error) { return lister.List(labels.Everything()) }
		}
		out = append(out, t)
	}
	return out
}
