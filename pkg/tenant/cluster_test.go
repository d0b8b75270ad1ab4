package tenant

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTrimTenantObject(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:          "c",
		Annotations:   map[string]string{lastApplied: `{"big":"json"}`, "keep": "me"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
	}}
	out, err := TrimTenantObject(cm)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap)
	if got.ManagedFields != nil {
		t.Error("managedFields kept")
	}
	if _, ok := got.Annotations[lastApplied]; ok {
		t.Error("last-applied annotation kept")
	}
	if got.Annotations["keep"] != "me" {
		t.Error("other annotations dropped")
	}
	if _, err := TrimTenantObject("not an object"); err != nil {
		t.Error(err)
	}
}
