package app

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/vcsyncer/syncer/config"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// TestEmbeddedCRDMatchesAPI checks that the embedded CRD parses strictly and names the Tenant
// API's group, version and kind (the apiserver-side validation is tested in
// test/integration/syncer).
func TestEmbeddedCRDMatchesAPI(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(config.TenantCRD, crd); err != nil {
		t.Fatal(err)
	}
	gv := tenancyv1alpha1.GroupVersion
	if crd.Spec.Group != gv.Group || crd.Spec.Names.Kind != "Tenant" || crd.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Fatalf("CRD group %q kind %q scope %q", crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.Scope)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != gv.Version || crd.Spec.Versions[0].Subresources == nil {
		t.Fatalf("versions %+v", crd.Spec.Versions)
	}
}
