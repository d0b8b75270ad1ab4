package policy

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// TestBuiltinSetsEveryField keeps Resolve's promise that accessors never return nil and that
// every rule has a default: a field added to the API without a built-in default fails here.
func TestBuiltinSetsEveryField(t *testing.T) {
	b := Builtin()
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f, name := v.Field(i), path+"."+v.Type().Field(i).Name
			if name == ".Pods.AllowedPriorityClassNames" {
				continue // nil means every public class
			}
			switch f.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map:
				if f.IsNil() {
					t.Errorf("Builtin()%s is unset", name)
					continue
				}
				if f.Kind() == reflect.Pointer && f.Elem().Kind() == reflect.Struct && !isLeafStruct(f.Elem().Type()) {
					walk(name, f.Elem())
				}
			}
		}
	}
	walk("", reflect.ValueOf(b))
}

func TestResolveLayers(t *testing.T) {
	def := &tenancyv1alpha1.TenantPolicySpec{
		Pods:     &tenancyv1alpha1.PodPolicy{AllowedCSIDrivers: []string{"csi.example.com"}, AllowedSchedulerNames: []string{"a"}},
		Services: &tenancyv1alpha1.ServicePolicy{AllowedTypes: []corev1.ServiceType{corev1.ServiceTypeNodePort}},
	}
	q := resource.MustParse("1Mi")
	named := &tenancyv1alpha1.TenantPolicySpec{
		Pods:   &tenancyv1alpha1.PodPolicy{AllowedSchedulerNames: []string{}, NodeSelector: map[string]string{"pool": "a"}},
		Limits: &tenancyv1alpha1.LimitsPolicy{MaxObjectBytes: &q},
	}
	e := Resolve(def, named)
	cases := map[string]struct{ got, want any }{
		"csi drivers from default":            {e.Pods().AllowedCSIDrivers, []string{"csi.example.com"}},
		"empty list in named allows nothing":  {e.Pods().AllowedSchedulerNames, []string{}},
		"node selector from named":            {e.Pods().NodeSelector, map[string]string{"pool": "a"}},
		"volume types built in":               {e.Pods().AllowedVolumeTypes, Builtin().Pods.AllowedVolumeTypes},
		"service types from default":          {e.Services().AllowedTypes, []corev1.ServiceType{corev1.ServiceTypeNodePort}},
		"local traffic policy built in":       {*e.Services().AllowLocalTrafficPolicy, false},
		"max bytes from named":                {e.Limits().MaxObjectBytes.String(), "1Mi"},
		"max objects built in":                {*e.Limits().MaxObjects, int32(20000)},
		"quota built in (no node ports)":      {e.Limits().Quota.Name(corev1.ResourceServicesNodePorts, resource.DecimalSI).String(), "0"},
		"disruption budgets built in":         {*e.DisruptionBudgets().AllowBlocking, false},
		"default policy unchanged by resolve": {def.Pods.AllowedSchedulerNames, []string{"a"}},
	}
	for name, tc := range cases {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", name, tc.got, tc.want)
		}
	}
	if e.Generation == Default().Generation {
		t.Errorf("a changed policy has the default's generation %s", e.Generation)
	}
	if again := Resolve(def, named); again.Generation != e.Generation {
		t.Errorf("Resolve is not deterministic: %s then %s", e.Generation, again.Generation)
	}
	if Resolve(nil, nil).Generation != Default().Generation {
		t.Errorf("Resolve(nil, nil) differs from Default()")
	}
}

func TestRefusalsReportOncePerVersionAndPolicy(t *testing.T) {
	var r Refusals
	steps := []struct {
		rv, gen string
		want    bool
	}{
		{"1", "g1", true}, {"1", "g1", false}, {"2", "g1", true}, {"2", "g2", true}, {"2", "g2", false},
	}
	for i, s := range steps {
		if got := r.Record("Pod/ns/p", s.rv, s.gen, RuleVolumeType); got != s.want {
			t.Errorf("step %d: Record(%s, %s) = %v, want %v", i, s.rv, s.gen, got, s.want)
		}
	}
	if !r.Refused("Pod/ns/p", "2", "g2") || r.Refused("Pod/ns/p", "2", "g1") {
		t.Errorf("Refused does not follow the last record")
	}
	r.Forget("Pod/ns/p")
	if r.Refused("Pod/ns/p", "2", "g2") || r.Len() != 0 {
		t.Errorf("Forget left the record")
	}
}
