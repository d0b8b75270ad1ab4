package admit

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vcsyncer/syncer/pkg/policy"
)

func TestQuotaReady(t *testing.T) {
	spec := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceRequestsCPU: resource.MustParse("2")}
	rq := func(hard, used corev1.ResourceList) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: spec},
			Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
	}
	zero := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0"), corev1.ResourceRequestsCPU: resource.MustParse("0")}
	cases := map[string]struct {
		q    *corev1.ResourceQuota
		want bool
	}{
		"no status yet (the admission would enforce nothing)": {rq(nil, nil), false},
		"computed": {rq(spec, zero), true},
		"computed, same values written differently": {rq(corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceRequestsCPU: resource.MustParse("2000m")}, zero), true},
		"spec changed, status still the old one":    {rq(corev1.ResourceList{corev1.ResourcePods: resource.MustParse("20"), corev1.ResourceRequestsCPU: resource.MustParse("2")}, zero), false},
		"hard computed, usage missing":              {rq(spec, corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}), false},
		"nil quota":                                 {nil, false},
	}
	for name, tc := range cases {
		if got := QuotaReady(tc.q); got != tc.want {
			t.Errorf("%s: QuotaReady = %v, want %v", name, got, tc.want)
		}
	}
}

func TestCheckQuotaRoom(t *testing.T) {
	rq := &corev1.ResourceQuota{Status: corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3"), corev1.ResourceRequestsCPU: resource.MustParse("2")},
		Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2"), corev1.ResourceRequestsCPU: resource.MustParse("1500m")},
	}}
	cases := map[string]struct {
		need corev1.ResourceList
		deny bool
	}{
		"room for one Pod":  {corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}, false},
		"no room for two":   {corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}, true},
		"cpu fits exactly":  {corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1"), corev1.ResourceRequestsCPU: resource.MustParse("500m")}, false},
		"cpu over":          {corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1"), corev1.ResourceRequestsCPU: resource.MustParse("501m")}, true},
		"not in the quota":  {corev1.ResourceList{corev1.ResourceSecrets: resource.MustParse("5000")}, false},
		"nothing asked for": {nil, false},
	}
	for name, tc := range cases {
		d := CheckQuotaRoom(rq, tc.need, "Pod app/web")
		if (d != nil) != tc.deny {
			t.Errorf("%s: CheckQuotaRoom = %v, want denial %v", name, d, tc.deny)
			continue
		}
		if d != nil && (d.Rule != policy.RuleQuota || !strings.Contains(d.Message, "limits.quota") || !strings.Contains(d.Message, "Pod app/web")) {
			t.Errorf("%s: denial %q lacks the rule, the object or the remedy", name, d.Error())
		}
	}
	if CheckQuotaRoom(nil, corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}, "x") != nil {
		t.Error("no quota: no refusal")
	}
}

func TestIsQuotaExceeded(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	exceeded := apierrors.NewForbidden(gr, "web", errors.New("exceeded quota: vc-syncer-quota, requested: pods=1, used: pods=3, limited: pods=3"))
	if d := QuotaExceededDenial("Pod app/web", exceeded); d == nil || d.Rule != policy.RuleQuota || !strings.Contains(d.Message, "pods=3") {
		t.Errorf("QuotaExceededDenial(exceeded) = %v, want a quota denial quoting the apiserver", d)
	}
	for name, err := range map[string]error{
		"pod security":     apierrors.NewForbidden(gr, "web", errors.New(`violates PodSecurity "baseline:latest": hostPath volumes`)),
		"terminating":      apierrors.NewForbidden(gr, "web", errors.New("unable to create new content in namespace x because it is being terminated")),
		"not forbidden":    apierrors.NewConflict(gr, "web", errors.New("exceeded quota")),
		"nil":              nil,
		"status not known": apierrors.NewForbidden(gr, "web", errors.New("status unknown for quota: vc-syncer-quota, resources: pods")),
	} {
		if d := QuotaExceededDenial("Pod app/web", err); d != nil {
			t.Errorf("%s: QuotaExceededDenial = %v, want nil", name, d)
		}
	}
}

func TestPodQuotaNeed(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	res := func(req, lim string) corev1.ResourceRequirements {
		r := corev1.ResourceRequirements{}
		if req != "" {
			r.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(req)}
		}
		if lim != "" {
			r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(lim)}
		}
		return r
	}
	p := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "a", Resources: res("100m", "1")}, {Name: "b", Resources: res("200m", "")}},
		InitContainers: []corev1.Container{
			{Name: "init", Resources: res("250m", "2")},
			{Name: "sidecar", RestartPolicy: &always, Resources: res("5", "5")},
		},
	}}
	need := PodQuotaNeed(p)
	want := map[corev1.ResourceName]string{
		corev1.ResourcePods: "1", "count/pods": "1",
		corev1.ResourceRequestsCPU: "300m", corev1.ResourceCPU: "300m", // containers' sum beats the init container
		corev1.ResourceLimitsCPU: "2", // the init container beats the containers' sum (1)
	}
	for name, w := range want {
		got, ok := need[name]
		if !ok || got.Cmp(resource.MustParse(w)) != 0 {
			t.Errorf("need[%s] = %v, want %s", name, got.String(), w)
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory, corev1.ResourceMemory} {
		if _, ok := need[name]; ok {
			t.Errorf("need has %s although no container declares memory", name)
		}
	}
}
