package endpointslice

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func slice(svc, managedBy string) *discoveryv1.EndpointSlice {
	l := map[string]string{}
	if svc != "" {
		l[discoveryv1.LabelServiceName] = svc
	}
	if managedBy != "" {
		l[discoveryv1.LabelManagedBy] = managedBy
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "s-abcde", Namespace: "apps", UID: "s-uid", Labels: l},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses: []string{"192.0.2.1"},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "apps", Name: "p", UID: "tuid"},
		}},
	}
}

func TestSynced(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = idx.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "apps"}})
	_ = idx.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}})
	svcs := corelisters.NewServiceLister(idx).Services("apps")
	cases := map[string]struct {
		in   *discoveryv1.EndpointSlice
		want bool
	}{
		"user slice of a selector-less Service":         {in: slice("ext", ""), want: true},
		"mirrored by the tenant's mirroring controller": {in: slice("ext", "endpointslicemirroring-controller.k8s.io"), want: true},
		"tenant EndpointSlice controller's":             {in: slice("ext", "endpointslice-controller.k8s.io"), want: false},
		"Service with a selector":                       {in: slice("web", "endpointslice-controller.k8s.io"), want: false},
		"user slice for a Service with a selector":      {in: slice("web", ""), want: false},
		"Service missing (applied before it)":           {in: slice("later", ""), want: false},
		"no service-name label":                         {in: slice("", ""), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Synced(tc.in, svcs); got != tc.want {
				t.Errorf("Synced = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	superNS := resources.SuperNamespace(c, "apps")
	cases := map[string]struct {
		managedBy string
	}{
		"mirrored":  {managedBy: "endpointslicemirroring-controller.k8s.io"},
		"user":      {managedBy: ""},
		"claims it": {managedBy: "endpointslice-controller.k8s.io"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := slice("ext", tc.managedBy)
			got := Desired(c, in, superNS, nil, false)
			if got.Labels[discoveryv1.LabelManagedBy] != ManagedBy {
				t.Errorf("managed-by %q, want %q", got.Labels[discoveryv1.LabelManagedBy], ManagedBy)
			}
			if got.Labels[discoveryv1.LabelServiceName] != "ext" {
				t.Errorf("service-name %q, want the super Service ext", got.Labels[discoveryv1.LabelServiceName])
			}
			if !conversion.OwnedByTenant(got, "u") || got.Namespace != superNS {
				t.Errorf("not stamped or misplaced: %s %v", got.Namespace, got.Labels)
			}
			ref := got.Endpoints[0].TargetRef
			if ref.Namespace != superNS || ref.UID != "" {
				t.Errorf("targetRef %+v", ref)
			}
			if got.Endpoints[0].Addresses[0] != "192.0.2.1" {
				t.Errorf("address changed: %v", got.Endpoints[0].Addresses)
			}
			if in.Endpoints[0].TargetRef.Namespace != "apps" || in.Labels[discoveryv1.LabelManagedBy] != tc.managedBy {
				t.Error("tenant object modified")
			}
			if !Equal(got, got.DeepCopy()) {
				t.Error("Equal(x, copy) = false")
			}
			other := got.DeepCopy()
			other.Endpoints[0].Addresses = []string{"192.0.2.2"}
			if Equal(got, other) {
				t.Error("Equal ignores addresses")
			}
		})
	}
}
