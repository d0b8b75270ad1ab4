package policy

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// quantities compares ResourceLists by value.
var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestPodCharge(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	defaults := rl("cpu", "100m", "memory", "128Mi")
	ctr := func(req, lim corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	cases := map[string]struct {
		spec  corev1.PodSpec
		phase corev1.PodPhase
		want  corev1.ResourceList
	}{
		"best effort: charged the default, limits from the charge": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil), ctr(nil, nil)}},
			want: rl("pods", "1", "count/pods", "1", "requests.cpu", "200m", "requests.memory", "256Mi", "limits.cpu", "200m", "limits.memory", "256Mi"),
		},
		"requests without limits: limits count the requests": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "2", "memory", "2Gi"), nil)}},
			want: rl("pods", "1", "count/pods", "1", "requests.cpu", "2", "requests.memory", "2Gi", "limits.cpu", "2", "limits.memory", "2Gi"),
		},
		"limit only: the request is the limit": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(nil, rl("cpu", "1"))}},
			want: rl("pods", "1", "count/pods", "1", "requests.cpu", "1", "requests.memory", "128Mi", "limits.cpu", "1", "limits.memory", "128Mi"),
		},
		"extended resources and ephemeral storage from requests": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1", "memory", "1Gi", "nvidia.com/gpu", "2", "ephemeral-storage", "1Gi"), rl("nvidia.com/gpu", "2"))}},
			want: rl("pods", "1", "count/pods", "1", "requests.cpu", "1", "requests.memory", "1Gi", "requests.nvidia.com/gpu", "2", "requests.ephemeral-storage", "1Gi",
				"limits.cpu", "1", "limits.memory", "1Gi", "limits.nvidia.com/gpu", "2", "limits.ephemeral-storage", "1Gi"),
		},
		"init container larger than the containers; sidecar added to both": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					{Name: "side", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "500m", "memory", "64Mi")}},
					ctr(rl("cpu", "3", "memory", "64Mi"), nil),
				},
				Containers: []corev1.Container{ctr(rl("cpu", "1", "memory", "1Gi"), nil)},
			},
			// containers 1 + sidecar 0.5 = 1.5 cpu; init 3 + sidecar 0.5 = 3.5 cpu.
			want: rl("pods", "1", "count/pods", "1", "requests.cpu", "3500m", "requests.memory", "1088Mi", "limits.cpu", "3500m", "limits.memory", "1088Mi"),
		},
		"pod-level resources replace the containers' sum and are not charged a default": {
			spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: rl("cpu", "4", "memory", "4Gi"), Limits: rl("cpu", "8", "memory", "4Gi")},
				Containers: []corev1.Container{ctr(nil, nil), ctr(nil, nil)}},
			want: rl("pods", "1", "count/pods", "1", "requests.cpu", "4", "requests.memory", "4Gi", "limits.cpu", "8", "limits.memory", "4Gi"),
		},
		"overhead added": {
			spec: corev1.PodSpec{Overhead: rl("cpu", "250m"), Containers: []corev1.Container{ctr(rl("cpu", "1", "memory", "1Gi"), nil)}},
			want: rl("pods", "1", "count/pods", "1", "requests.cpu", "1250m", "requests.memory", "1Gi", "limits.cpu", "1250m", "limits.memory", "1Gi"),
		},
		"a Pod its tenant marked finished is charged its spec (the tenant writes its own status)": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "2"), nil)}}, phase: corev1.PodSucceeded,
			want: rl("pods", "1", "count/pods", "1", "requests.cpu", "2", "requests.memory", "128Mi", "limits.cpu", "2", "limits.memory", "128Mi"),
		},
		"explicit zero requests without limits: charged the default as if unset": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "0", "memory", "0"), nil)}},
			want: rl("pods", "1", "count/pods", "1", "requests.cpu", "100m", "requests.memory", "128Mi", "limits.cpu", "100m", "limits.memory", "128Mi"),
		},
		"zero request with a limit: the limit is charged, the zero request adds nothing": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "0"), rl("cpu", "1"))}},
			want: rl("pods", "1", "count/pods", "1", "requests.memory", "128Mi", "limits.cpu", "1", "limits.memory", "128Mi"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &corev1.Pod{Spec: tc.spec, Status: corev1.PodStatus{Phase: tc.phase}}
			before := p.DeepCopy()
			got := PodCharge(p, defaults)
			if diff := cmp.Diff(tc.want, got, quantities); diff != "" {
				t.Errorf("PodCharge (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, p); diff != "" {
				t.Errorf("PodCharge changed the Pod:\n%s", diff)
			}
		})
	}
}

func TestBudgetHardAndBackstop(t *testing.T) {
	quota := Builtin().Limits.Quota
	quota["cpu"] = resource.MustParse("32")
	quota["requests.nvidia.com/gpu"] = resource.MustParse("4")
	quota["count/deployments.apps"] = resource.MustParse("10")
	quota["gold.storageclass.storage.k8s.io/requests.storage"] = resource.MustParse("1Ti")
	want := rl("pods", "1000", "requests.cpu", "32", "requests.memory", "256Gi", "limits.cpu", "128", "limits.memory", "512Gi", "requests.nvidia.com/gpu", "4",
		// Object counts and claims' storage are the tenant's too, not each namespace's.
		"services", "200", "services.nodeports", "0", "services.loadbalancers", "0", "persistentvolumeclaims", "200",
		"requests.storage", "10Ti", "secrets", "2000", "configmaps", "2000", "count/deployments.apps", "10",
		"gold.storageclass.storage.k8s.io/requests.storage", "1Ti")
	if diff := cmp.Diff(want, BudgetHard(quota), quantities); diff != "" {
		t.Errorf("BudgetHard (-want +got):\n%s", diff)
	}
	var backstop []string
	for k := range quota {
		if BackstopKey(k) {
			backstop = append(backstop, string(k))
		}
	}
	// Not pods: the budget alone counts Pods, as it counts their cpu and memory.
	wantBackstop := []string{"configmaps", "count/deployments.apps", "gold.storageclass.storage.k8s.io/requests.storage", "persistentvolumeclaims",
		"requests.storage", "secrets", "services", "services.loadbalancers", "services.nodeports"}
	if diff := cmp.Diff(wantBackstop, backstop, cmp.Transformer("sort", func(s []string) []string {
		out := append([]string(nil), s...)
		sort.Strings(out)
		return out
	})); diff != "" {
		t.Errorf("backstop keys (-want +got):\n%s", diff)
	}
}

func TestChargeRoundTrip(t *testing.T) {
	c := rl("pods", "1", "requests.cpu", "100m", "limits.memory", "128Mi")
	s := FormatCharge(c)
	if s != "limits.memory=128Mi,pods=1,requests.cpu=100m" {
		t.Errorf("FormatCharge = %q", s)
	}
	got, ok := ParseCharge(s)
	if !ok {
		t.Fatalf("ParseCharge(%q) failed", s)
	}
	if diff := cmp.Diff(c, got, quantities); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, ok := ParseCharge("pods"); ok {
		t.Error("ParseCharge accepted a value without =")
	}
}

func TestBudgetDenialMessage(t *testing.T) {
	d := BudgetDenial("Pod a/p4", []BudgetExceeded{{Name: "requests.cpu", Requested: resource.MustParse("2"), Used: resource.MustParse("63"), Hard: resource.MustParse("64")}})
	if d.Rule != RuleTenantQuota {
		t.Errorf("rule %s", d.Rule)
	}
	for _, want := range []string{"exceeded tenant budget", "requested requests.cpu=2, used 63, limited 64"} {
		if !strings.Contains(d.Error(), want) {
			t.Errorf("%q does not say %q", d.Error(), want)
		}
	}
}
