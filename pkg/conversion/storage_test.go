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

func TestClaimClass(t *testing.T) {
	empty, std := "", "standard"
	for name, tc := range map[string]struct {
		ann       map[string]string
		field     *string
		want      string
		wantIsSet bool
	}{
		"neither":                      {},
		"field":                        {field: &std, want: std, wantIsSet: true},
		"field \"\"":                   {field: &empty, want: "", wantIsSet: true},
		"annotation \"\" only":         {ann: map[string]string{AnnotationBetaStorageClass: ""}, want: "", wantIsSet: true},
		"annotation before field":      {ann: map[string]string{AnnotationBetaStorageClass: ""}, field: &std, want: "", wantIsSet: true},
		"annotation class, field \"\"": {ann: map[string]string{AnnotationBetaStorageClass: std}, field: &empty, want: std, wantIsSet: true},
	} {
		got, set := ClaimClass(tc.ann, &corev1.PersistentVolumeClaimSpec{StorageClassName: tc.field})
		if got != tc.want || set != tc.wantIsSet {
			t.Errorf("%s: ClaimClass = %q, %v; want %q, %v", name, got, set, tc.want, tc.wantIsSet)
		}
	}
}

func TestConfinementClaim(t *testing.T) {
	empty, std, local, missing := "", "standard", "local", "manual"
	classes := SuperClasses{Default: std, Provisions: func(c string) bool { return c == std }}
	noDefault := SuperClasses{Provisions: classes.Provisions}
	confined := map[string]string{LabelTenantUID: "uid-1"}
	for name, tc := range map[string]struct {
		ann       map[string]string
		class     *string
		selector  *metav1.LabelSelector
		classes   SuperClasses
		wantClass string
		want      map[string]string // nil: no selector
	}{
		"class \"\": only the tenant's PVs": {class: &empty, classes: classes, want: confined},
		"tenant selector kept": {class: &empty, classes: classes, wantClass: "",
			selector: &metav1.LabelSelector{MatchLabels: map[string]string{"disk": "ssd", LabelTenantUID: "forged"}},
			want:     map[string]string{"disk": "ssd", LabelTenantUID: "uid-1"}},
		"provisioning class: untouched":         {class: &std, classes: classes, wantClass: std},
		"annotation \"\" only: confined":        {ann: map[string]string{AnnotationBetaStorageClass: ""}, classes: classes, want: confined},
		"annotation \"\" over a field class":    {ann: map[string]string{AnnotationBetaStorageClass: ""}, class: &std, classes: classes, want: confined},
		"annotation class over field \"\"":      {ann: map[string]string{AnnotationBetaStorageClass: std}, class: &empty, classes: classes, wantClass: std},
		"no class, super default: the default":  {classes: classes, wantClass: std},
		"no class, no super default: static":    {classes: noDefault, want: confined},
		"class without provisioner: static":     {class: &local, classes: classes, wantClass: local, want: confined},
		"class the super cluster lacks: static": {class: &missing, classes: classes, wantClass: missing, want: confined},
		"provisioning class with a selector: confined": {class: &std, classes: classes, wantClass: std,
			selector: &metav1.LabelSelector{MatchLabels: map[string]string{"disk": "ssd"}},
			want:     map[string]string{"disk": "ssd", LabelTenantUID: "uid-1"}},
		"classes unknown: confined": {class: &std, wantClass: std, want: confined},
	} {
		spec := corev1.PersistentVolumeClaimSpec{StorageClassName: tc.class, Selector: tc.selector}
		Confinement{TenantName: "t1", TenantUID: "uid-1", Namespace: "data", Classes: tc.classes}.Claim(tc.ann, &spec)
		if spec.StorageClassName == nil || *spec.StorageClassName != tc.wantClass {
			t.Errorf("%s: storageClassName %v, want %q", name, spec.StorageClassName, tc.wantClass)
		}
		var got map[string]string
		if spec.Selector != nil {
			got = spec.Selector.MatchLabels
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: matchLabels %v, want %v", name, got, tc.want)
		}
	}
}

func TestConfinementClaimDataSourceRef(t *testing.T) {
	own, other := "data", "other"
	cf := Confinement{TenantUID: "u", Namespace: "data"}
	spec := corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "src", Namespace: &own}}
	cf.Claim(nil, &spec)
	if spec.DataSourceRef.Namespace != nil {
		t.Errorf("dataSourceRef namespace %q kept (the tenant namespace is not the super one)", *spec.DataSourceRef.Namespace)
	}
	spec = corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "src", Namespace: &other}}
	cf.Claim(nil, &spec)
	if spec.DataSourceRef.Namespace == nil || *spec.DataSourceRef.Namespace != other {
		t.Error("another namespace is not rewritten (callers refuse it)")
	}
}

func TestConfinementTemplate(t *testing.T) {
	tmpl := &corev1.PersistentVolumeClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{
			Labels: map[string]string{"app": "db", LabelManagedBy: ManagedByValue, LabelTenantUID: "other-tenant"},
			Annotations: map[string]string{"note": "x", AnnotationTenant: "other", AnnotationBetaStorageClass: "",
				"pv.kubernetes.io/bind-completed": "yes", "volume.kubernetes.io/selected-node": "n1"},
		},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "disk-1"},
	}
	Confinement{TenantName: "t1", TenantUID: "uid-1", Classes: SuperClasses{Default: "standard"}}.Template(tmpl)
	if !reflect.DeepEqual(tmpl.Labels, map[string]string{"app": "db"}) || !reflect.DeepEqual(tmpl.Annotations, map[string]string{"note": "x"}) {
		t.Errorf("template metadata %v %v", tmpl.Labels, tmpl.Annotations)
	}
	if *tmpl.Spec.StorageClassName != "" || tmpl.Spec.Selector.MatchLabels[LabelTenantUID] != "uid-1" {
		t.Errorf("annotation \"\" not applied: class %q selector %v", *tmpl.Spec.StorageClassName, tmpl.Spec.Selector)
	}
	if tmpl.Spec.VolumeName != SuperVolumeName("t1", "uid-1", "disk-1") {
		t.Errorf("volumeName %q not mapped", tmpl.Spec.VolumeName)
	}
}
