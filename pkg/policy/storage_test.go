package policy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

func TestClaimDataSources(t *testing.T) {
	on, off := true, false
	allow := &tenancyv1alpha1.StoragePolicy{AllowDataSources: &on}
	deny := &tenancyv1alpha1.StoragePolicy{AllowDataSources: &off}
	empty, snapshots, example := "", "snapshot.storage.k8s.io", "example.com"
	own, other := "data", "other"
	pvc := func(group *string) *corev1.TypedLocalObjectReference {
		return &corev1.TypedLocalObjectReference{APIGroup: group, Kind: "PersistentVolumeClaim", Name: "src"}
	}
	for name, tc := range map[string]struct {
		p       *tenancyv1alpha1.StoragePolicy
		spec    corev1.PersistentVolumeClaimSpec
		refused string // "" passes; else a substring of the message
	}{
		"no data source":                      {p: deny},
		"own claim":                           {p: allow, spec: corev1.PersistentVolumeClaimSpec{DataSource: pvc(nil)}},
		"own claim, apiGroup \"\"":            {p: allow, spec: corev1.PersistentVolumeClaimSpec{DataSource: pvc(&empty)}},
		"own claim, ref in its namespace":     {p: allow, spec: corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "src", Namespace: &own}}},
		"own claim, data sources disabled":    {p: deny, spec: corev1.PersistentVolumeClaimSpec{DataSource: pvc(nil)}, refused: "storage.allowDataSources: true"},
		"own claim, no storage policy":        {spec: corev1.PersistentVolumeClaimSpec{DataSource: pvc(nil)}, refused: "disabled"},
		"claim kind of another group":         {p: allow, spec: corev1.PersistentVolumeClaimSpec{DataSource: pvc(&example)}, refused: "PersistentVolumeClaim.example.com src"},
		"VolumeSnapshot":                      {p: allow, spec: corev1.PersistentVolumeClaimSpec{DataSource: &corev1.TypedLocalObjectReference{APIGroup: &snapshots, Kind: "VolumeSnapshot", Name: "snap"}}, refused: "VolumeSnapshot.snapshot.storage.k8s.io snap"},
		"populator ref":                       {p: allow, spec: corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{APIGroup: &example, Kind: "Hello", Name: "h"}}, refused: "spec.dataSourceRef Hello.example.com h"},
		"claim in another namespace":          {p: allow, spec: corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "src", Namespace: &other}}, refused: "in namespace other"},
		"dataSource own, dataSourceRef other": {p: allow, spec: corev1.PersistentVolumeClaimSpec{DataSource: pvc(nil), DataSourceRef: &corev1.TypedObjectReference{APIGroup: &snapshots, Kind: "VolumeSnapshot", Name: "snap"}}, refused: "VolumeSnapshot"},
	} {
		t.Run(name, func(t *testing.T) {
			d := ClaimDataSources(tc.p, "data", &tc.spec)
			if tc.refused == "" {
				if d != nil {
					t.Errorf("refused: %v", d.Error())
				}
				return
			}
			if d == nil || d.Rule != RuleStorageDataSource || !strings.Contains(d.Error(), tc.refused) {
				t.Errorf("denial %v, want rule storageDataSource mentioning %q", d, tc.refused)
			}
		})
	}
}

func TestPodClaimDataSources(t *testing.T) {
	on := true
	snapshots := "snapshot.storage.k8s.io"
	spec := &corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "restore", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			Spec: corev1.PersistentVolumeClaimSpec{DataSource: &corev1.TypedLocalObjectReference{APIGroup: &snapshots, Kind: "VolumeSnapshot", Name: "snap"}},
		}}}},
	}}
	d := PodClaimDataSources(&tenancyv1alpha1.StoragePolicy{AllowDataSources: &on}, "data", spec)
	if d == nil || d.Rule != RuleStorageDataSource || !strings.HasPrefix(d.Message, "ephemeral volume restore: ") {
		t.Errorf("denial %v", d)
	}
	if d := PodClaimDataSources(nil, "data", &corev1.PodSpec{Volumes: spec.Volumes[:1]}); d != nil {
		t.Errorf("Pod without templates refused: %v", d)
	}
}
