package storageclass

import (
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
)

func class(name, provisioner string, created time.Time, ann map[string]string) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Annotations: ann},
		Provisioner: provisioner}
}

func TestDefaultClass(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	def := map[string]string{AnnDefault: "true"}
	for name, tc := range map[string]struct {
		classes []*storagev1.StorageClass
		want    string
	}{
		"none":                  {classes: []*storagev1.StorageClass{class("a", "p", t0, nil)}},
		"annotated false":       {classes: []*storagev1.StorageClass{class("a", "p", t0, map[string]string{AnnDefault: "false"})}},
		"one":                   {classes: []*storagev1.StorageClass{class("a", "p", t0, nil), class("b", "p", t0, def)}, want: "b"},
		"beta annotation":       {classes: []*storagev1.StorageClass{class("b", "p", t0, map[string]string{AnnDefaultBeta: "true"})}, want: "b"},
		"newest wins":           {classes: []*storagev1.StorageClass{class("old", "p", t0, def), class("new", "p", t0.Add(time.Hour), def)}, want: "new"},
		"same time: first name": {classes: []*storagev1.StorageClass{class("zz", "p", t0, def), class("aa", "p", t0, def)}, want: "aa"},
	} {
		if got := DefaultClass(tc.classes); got != tc.want {
			t.Errorf("%s: DefaultClass = %q, want %q", name, got, tc.want)
		}
	}
}

func TestSuperClasses(t *testing.T) {
	t0 := time.Now()
	cs := fake.NewClientset(
		class("standard", "csi.example.com", t0, map[string]string{AnnDefault: "true"}),
		class("local", conversion.NoProvisioner, t0, nil),
	)
	env := &resources.Env{SuperVolumes: informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(TrimSuper))}
	env.SuperVolumes.Storage().V1().StorageClasses().Informer()
	stop := make(chan struct{})
	defer close(stop)
	env.SuperVolumes.Start(stop)
	env.SuperVolumes.WaitForCacheSync(stop)
	got := SuperClasses(env)
	if got.Default != "standard" || !got.Provisions("standard") || got.Provisions("local") || got.Provisions("missing") {
		t.Errorf("SuperClasses: default %q, provisions standard %v local %v missing %v",
			got.Default, got.Provisions("standard"), got.Provisions("local"), got.Provisions("missing"))
	}
	if zero := SuperClasses(&resources.Env{}); zero.Default != "" || zero.Provisions != nil {
		t.Errorf("SuperClasses without a cache = %+v, want the zero value", zero)
	}
}
