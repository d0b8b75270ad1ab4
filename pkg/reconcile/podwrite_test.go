package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
)

// TestPodWritesWithoutDecoding checks CreatePod and UpdatePodStatus against an apiserver that
// records what it was sent: the method, path, field manager and body are the typed client's,
// the answer is not decoded, an error answer is the typed client's error, and a fake clientset
// still works.
func TestPodWritesWithoutDecoding(t *testing.T) {
	type req struct{ method, path, manager, name string }
	var got []req
	conflict := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p corev1.Pod
		_ = json.NewDecoder(r.Body).Decode(&p)
		got = append(got, req{r.Method, r.URL.Path, r.URL.Query().Get("fieldManager"), p.Name})
		w.Header().Set("Content-Type", "application/json")
		if conflict {
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"AlreadyExists","code":409,"details":{"name":"p","kind":"pods"}}`)
			return
		}
		// An answer the callers never read: the typed client would fail to decode it.
		fmt.Fprint(w, `{"kind":"Pod","apiVersion":"v1","metadata":"not a Pod"}`)
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "7"}}
	if err := CreatePod(ctx, cs, "ns", pod, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
		t.Fatal(err)
	}
	if err := UpdatePodStatus(ctx, cs, "ns", pod, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
		t.Fatal(err)
	}
	want := []req{{"POST", "/api/v1/namespaces/ns/pods", FieldManager, "p"}, {"PUT", "/api/v1/namespaces/ns/pods/p/status", FieldManager, "p"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests %v; want %v", got, want)
	}
	conflict = true
	if err := CreatePod(ctx, cs, "ns", pod, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("CreatePod on a 409 AlreadyExists answer: %v; want an AlreadyExists error", err)
	}

	f := fake.NewClientset()
	if err := CreatePod(ctx, f, "ns", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.CoreV1().Pods("ns").Get(ctx, "q", metav1.GetOptions{}); err != nil {
		t.Errorf("the fake clientset has no Pod after CreatePod: %v", err)
	}
}
