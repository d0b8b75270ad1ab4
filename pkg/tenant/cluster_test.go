package tenant

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vcsyncer/syncer/pkg/podcache"
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

func TestTrimTenantPod(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{
		NodeName:   "n1",
		Containers: []corev1.Container{{Name: "c", Image: "nginx", Command: []string{"x"}}},
		Volumes:    []corev1.Volume{{Name: "v"}},
	}, Status: corev1.PodStatus{PodIP: "10.0.0.1"}}
	out, _ := TrimTenantObject(p)
	got, ok := podcache.From(out)
	if !ok {
		t.Fatalf("TrimTenantObject returned %T, want a cached Pod", out)
	}
	if got.Spec.NodeName != "n1" || got.Spec.Containers[0].Image != "nginx" || got.Status.PodIP != "10.0.0.1" {
		t.Fatalf("trimmed away what the syncer reads: %+v", got)
	}
	if got.Spec.Volumes != nil || got.Spec.Containers[0].Command != nil {
		t.Fatalf("spec not trimmed: %+v", got.Spec)
	}
}

func TestAPIServerAddress(t *testing.T) {
	for in, want := range map[string]struct {
		host string
		port int32
		err  bool
	}{
		"https://10.0.0.1:6443":         {host: "10.0.0.1", port: 6443},
		"https://tenant-a.example.com":  {host: "tenant-a.example.com", port: 443},
		"http://10.0.0.1":               {host: "10.0.0.1", port: 80},
		"10.0.0.2:8443":                 {host: "10.0.0.2", port: 8443},
		"https://[fd00::1]:6443/prefix": {host: "fd00::1", port: 6443},
		"https://10.0.0.1:99999":        {err: true},
		"https://:6443":                 {err: true},
	} {
		h, p, err := apiServerAddress(in)
		if (err != nil) != want.err || h != want.host || p != want.port {
			t.Errorf("apiServerAddress(%q) = %q, %d, %v; want %q, %d, err %v", in, h, p, err, want.host, want.port, want.err)
		}
	}
}

func TestReasonOf(t *testing.T) {
	gr := schema.GroupResource{Resource: "namespaces"}
	for want, err := range map[string]error{
		"Unauthorized":          apierrors.NewUnauthorized("token expired"),
		"DuplicateControlPlane": fmt.Errorf("%w: Tenant %q already syncs this control plane", ErrDuplicateControlPlane, "a"),
		"Unreachable":           errors.New("dial tcp 127.0.0.1:1: connect: connection refused"),
	} {
		if got := reasonOf(err); got != want {
			t.Errorf("reasonOf(%v) = %q, want %q", err, got, want)
		}
	}
	if got := reasonOf(apierrors.NewForbidden(gr, "kube-system", errors.New("no"))); got != "Unauthorized" {
		t.Errorf("forbidden: %q", got)
	}
}

// A Pod not yet bound is cached with its whole spec (its super Pod is made from it); bound or
// deleted, it is trimmed.
func TestTenantPodWholeUntilBound(t *testing.T) {
	spec := func() corev1.PodSpec {
		return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Command: []string{"x"}}}}
	}
	pending := &corev1.Pod{Spec: spec()}
	out, _ := TrimTenantObject(pending)
	cp, ok := out.(*podcache.Pod)
	if !ok || !cp.Full() {
		t.Fatalf("unbound Pod cached as %T (whole %t), want a whole cached Pod", out, ok && cp.Full())
	}
	if got, _ := podcache.From(cp); len(got.Spec.Containers[0].Command) != 1 {
		t.Errorf("unbound Pod's spec trimmed: %+v", got.Spec)
	}
	if !cp.DeepCopyObject().(*podcache.Pod).Full() {
		t.Error("a copy of a whole cached Pod is not whole")
	}
	bound := &corev1.Pod{Spec: spec()}
	bound.Spec.NodeName = "n1"
	deleted := &corev1.Pod{Spec: spec()}
	deleted.DeletionTimestamp = &metav1.Time{}
	for name, p := range map[string]*corev1.Pod{"bound": bound, "deleted": deleted} {
		out, _ := TrimTenantObject(p)
		cp := out.(*podcache.Pod)
		got, _ := podcache.From(cp)
		if cp.Full() || got.Spec.Containers[0].Command != nil {
			t.Errorf("%s Pod: whole %t, spec %+v; want it trimmed", name, cp.Full(), got.Spec)
		}
	}
}
