package policy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// TestObjectBytesCountsTheWholeObject: keys, labels and annotations count as much as values;
// managedFields do not count; the figure is the object's protobuf size.
func TestObjectBytesCountsTheWholeObject(t *testing.T) {
	big := strings.Repeat("k", 1000)
	values := &corev1.ConfigMap{Data: map[string]string{"a": big}}
	keys := &corev1.ConfigMap{Data: map[string]string{big: ""}}
	labels := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": big}}}
	annotations := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"a": big}}}
	secretKeys := &corev1.Secret{Data: map[string][]byte{big: nil}}
	for name, o := range map[string]any{"values": values, "keys": keys, "labels": labels, "annotations": annotations, "secret keys": secretKeys} {
		if got := ObjectBytes(o); got < 1000 {
			t.Errorf("%s: ObjectBytes = %d, want at least the 1000 bytes it carries", name, got)
		}
	}
	if got, want := ObjectBytes(values), int64(values.Size()); got != want {
		t.Errorf("ObjectBytes = %d, want the protobuf size %d", got, want)
	}
	withMF := values.DeepCopy()
	withMF.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: strings.Repeat("m", 300), FieldsV1: metav1.NewFieldsV1(strings.Repeat("f", 5000))}}
	if got, want := ObjectBytes(withMF), ObjectBytes(values); got != want {
		t.Errorf("managedFields counted: ObjectBytes = %d, want %d", got, want)
	}
	if ObjectBytes(struct{}{}) != 0 {
		t.Error("an object without an encoding counts 0")
	}
}

func TestCachedBytesLimits(t *testing.T) {
	if MaxCachedBytes(nil) != -1 || MaxCachedBytes(&tenancyv1alpha1.LimitsPolicy{}) != -1 || MaxObjectBytes(nil) != -1 {
		t.Error("no field: no cap (-1)")
	}
	l := Default().Limits()
	if got := MaxCachedBytes(l); got != 64<<20 {
		t.Errorf("built-in limits.maxCachedBytes = %d, want 64Mi", got)
	}
	if got := MaxObjectBytes(l); got != 512<<10 {
		t.Errorf("built-in limits.maxObjectBytes = %d, want 512Ki", got)
	}
	q := resource.MustParse("1Mi")
	d := CachedBytesDenial(&tenancyv1alpha1.LimitsPolicy{MaxCachedBytes: &q}, "ConfigMap app/big", 2000, 2000, 1<<20)
	if d.Rule != RuleCachedBytes || !strings.Contains(d.Message, "ConfigMap app/big") || !strings.Contains(d.Message, "limits.maxCachedBytes") || !strings.Contains(d.Message, "1Mi") {
		t.Errorf("denial %q lacks the rule, the object, the cap or the remedy", d.Error())
	}
	// The cap compares the charge: a message that names only the encoded size would not add up.
	d = CachedBytesDenial(&tenancyv1alpha1.LimitsPolicy{MaxCachedBytes: &q}, "ConfigMap app/big", 800, 1500, 1<<20)
	if !strings.Contains(d.Message, "800 bytes encoded, 1500 bytes in the syncer's memory") {
		t.Errorf("denial %q does not name the charge beside the encoded size", d.Message)
	}
}
