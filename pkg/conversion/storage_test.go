package conversion

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSuperVolumeName(t *testing.T) {
	const uid = "0b5f9d1e-3c55-4a36-9b58-5d2f0a0d6c11"
	h := TenantHash(uid)
	cases := map[string]struct {
		tenant, volume string
		want           string // "" means: only check validity, length and prefix
	}{
		"short":       {tenant: "team-a", volume: "fileserver", want: "team-a-" + h + "-fileserver"},
		"with dots":   {tenant: "t", volume: "nfs.share-1", want: "t-" + h + "-nfs.share-1"},
		"exactly 253": {tenant: "t", volume: strings.Repeat("v", 253-len("t-"+h+"-")), want: "t-" + h + "-" + strings.Repeat("v", 253-len("t-"+h+"-"))},
		"254 is cut":  {tenant: "t", volume: strings.Repeat("v", 254-len("t-"+h+"-"))},
		"dot at cut":  {tenant: "t", volume: strings.Repeat("v", 244-len("t-"+h+"-")-1) + "." + strings.Repeat("w", 40)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := SuperVolumeName(tc.tenant, uid, tc.volume)
			if tc.want != "" && got != tc.want {
				t.Errorf("SuperVolumeName(%q, %q) = %q, want %q", tc.tenant, tc.volume, got, tc.want)
			}
			if len(got) > MaxVolumeNameLength {
				t.Errorf("len(%q) = %d > %d", got, len(got), MaxVolumeNameLength)
			}
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Errorf("%q is not a valid PersistentVolume name: %v", got, errs)
			}
			if !strings.HasPrefix(got, SuperNamespacePrefix(tc.tenant, uid)) {
				t.Errorf("%q does not start with the tenant's prefix", got)
			}
		})
	}
	// Two tenants naming the same volume get different super PVs.
	if a, b := SuperVolumeName("a", "uid-1", "data"), SuperVolumeName("a", "uid-2", "data"); a == b {
		t.Errorf("tenants with different UIDs map volume data to the same super PV %q", a)
	}
	// Long names that differ only after the cut stay distinct.
	long := strings.Repeat("x", 260)
	if SuperVolumeName("t", uid, long+"1") == SuperVolumeName("t", uid, long+"2") {
		t.Error("long names differing after the cut collide")
	}
}

func TestIsPublic(t *testing.T) {
	cases := map[string]struct {
		labels map[string]string
		want   bool
	}{
		"nil":   {},
		"true":  {labels: map[string]string{LabelPublic: "true"}, want: true},
		"false": {labels: map[string]string{LabelPublic: "false"}},
		"other": {labels: map[string]string{"public": "true"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsPublic(tc.labels); got != tc.want {
				t.Errorf("IsPublic(%v) = %v, want %v", tc.labels, got, tc.want)
			}
		})
	}
}

func TestConfineStaticBinding(t *testing.T) {
	empty, std := "", "standard"
	for name, tc := range map[string]struct {
		class    *string
		selector *metav1.LabelSelector
		want     map[string]string // nil: no selector
	}{
		"class \"\": only the tenant's PVs": {class: &empty, want: map[string]string{LabelTenantUID: "uid-1"}},
		"tenant selector kept":              {class: &empty, selector: &metav1.LabelSelector{MatchLabels: map[string]string{"disk": "ssd", LabelTenantUID: "forged"}}, want: map[string]string{"disk": "ssd", LabelTenantUID: "uid-1"}},
		"a class: provisioned, untouched":   {class: &std},
		"unset class: the default class":    {},
	} {
		spec := corev1.PersistentVolumeClaimSpec{StorageClassName: tc.class, Selector: tc.selector}
		ConfineStaticBinding(&spec, "uid-1")
		var got map[string]string
		if spec.Selector != nil {
			got = spec.Selector.MatchLabels
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: matchLabels %v, want %v", name, got, tc.want)
		}
	}
}
