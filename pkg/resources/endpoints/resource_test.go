package endpoints

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

func TestDesired(t *testing.T) {
	c := &tenant.Cluster{Name: "t", UID: "u"}
	superNS := resources.SuperNamespace(c, "apps")
	cases := map[string]struct {
		in          []corev1.EndpointSubset
		wantSubsets []corev1.EndpointSubset
	}{
		"addresses passed as-is": {
			in: []corev1.EndpointSubset{{
				Addresses: []corev1.EndpointAddress{{IP: "192.0.2.1", Hostname: "db-0", NodeName: ptr("kwok-node-0")}},
				Ports:     []corev1.EndpointPort{{Port: 5432}},
			}},
			wantSubsets: []corev1.EndpointSubset{{
				Addresses: []corev1.EndpointAddress{{IP: "192.0.2.1", Hostname: "db-0", NodeName: ptr("kwok-node-0")}},
				Ports:     []corev1.EndpointPort{{Port: 5432}},
			}},
		},
		"targetRef namespaces mapped, UIDs dropped": {
			in: []corev1.EndpointSubset{{
				Addresses:         []corev1.EndpointAddress{{IP: "10.244.0.5", TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "apps", Name: "p", UID: "tuid", ResourceVersion: "7"}}},
				NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.244.0.6", TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: "other", Name: "q"}}},
			}},
			wantSubsets: []corev1.EndpointSubset{{
				Addresses:         []corev1.EndpointAddress{{IP: "10.244.0.5", TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: superNS, Name: "p"}}},
				NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.244.0.6", TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: resources.SuperNamespace(c, "other"), Name: "q"}}},
			}},
		},
		"no subsets": {in: nil, wantSubsets: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "apps", UID: "e-uid", Labels: map[string]string{"a": "b"}}, Subsets: tc.in}
			orig := in.DeepCopy()
			got := Desired(c, in, superNS, nil, false)
			if d := cmp.Diff(tc.wantSubsets, got.Subsets); d != "" {
				t.Errorf("subsets (-want +got):\n%s", d)
			}
			if d := cmp.Diff(orig, in); d != "" {
				t.Errorf("tenant object modified:\n%s", d)
			}
			if got.Labels[discoveryv1.LabelSkipMirror] != "true" || got.Labels["a"] != "b" || !conversion.OwnedByTenant(got, "u") {
				t.Errorf("labels %v", got.Labels)
			}
			if got.Namespace != superNS || got.Name != "db" {
				t.Errorf("placed at %s/%s", got.Namespace, got.Name)
			}
			if !Equal(got, got.DeepCopy()) {
				t.Error("Equal(x, copy of x) = false")
			}
			changed := got.DeepCopy()
			changed.Subsets = append(changed.Subsets, corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.99"}}})
			if Equal(got, changed) {
				t.Error("Equal ignores subsets")
			}
		})
	}
}

func TestSynced(t *testing.T) {
	cases := map[string]struct {
		spec corev1.ServiceSpec
		want bool
	}{
		"no selector":   {spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}, want: true},
		"selector":      {spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}, want: false},
		"ExternalName":  {spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example"}, want: false},
		"empty map sel": {spec: corev1.ServiceSpec{Selector: map[string]string{}}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Synced(&corev1.Service{Spec: tc.spec}); got != tc.want {
				t.Errorf("Synced = %v, want %v", got, tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }
