package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of the Tenant API.
var GroupVersion = schema.GroupVersion{Group: "tenancy.vcsyncer.io", Version: "v1alpha1"}

// SchemeBuilder adds the Tenant types to a scheme.
var SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

// AddToScheme adds Tenant and TenantList to the given scheme.
var AddToScheme = SchemeBuilder.AddToScheme

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Tenant{}, &TenantList{}, &TenantPolicy{}, &TenantPolicyList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
