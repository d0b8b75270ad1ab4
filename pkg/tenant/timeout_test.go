package tenant

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// slowTenant is a fake tenant apiserver: requests for ConfigMap "slow" (get and create) answer
// after slowFor; ConfigMaps are listed empty and watched by one stream that sends "a" at once
// and "b" after lateFor, then stays open.
type slowTenant struct {
	slowFor, lateFor time.Duration
	watches          atomic.Int32
	done             chan struct{}
}

func (s *slowTenant) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	q := r.URL.Query()
	switch {
	case r.URL.Path == "/api/v1/namespaces/ns/configmaps/slow" || (r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/ns/configmaps"):
		select {
		case <-time.After(s.slowFor):
		case <-s.done:
		}
		fmt.Fprint(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"slow","namespace":"ns","resourceVersion":"1"}}`)
	case r.URL.Path == "/api/v1/configmaps" && q.Get("watch") == "true":
		s.watches.Add(1)
		fl := w.(http.Flusher)
		send := func(typ, name, rv, ann string) {
			fmt.Fprintf(w, `{"type":%q,"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":%q,"namespace":"ns","resourceVersion":%q%s}}}`+"\n", typ, name, rv, ann)
			fl.Flush()
		}
		send("ADDED", "a", "2", "")
		if q.Get("sendInitialEvents") == "true" { // client-go's WatchList: the initial list ends with a bookmark
			send("BOOKMARK", "", "2", `,"annotations":{"k8s.io/initial-events-end":"true"}`)
		}
		select {
		case <-time.After(s.lateFor):
			send("ADDED", "b", "3", "")
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case r.URL.Path == "/api/v1/configmaps":
		fmt.Fprint(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	default:
		http.NotFound(w, r)
	}
}

// TestRequestTimeout checks that the tenant client's requests (a get and a write) fail after
// the request timeout while the informers' watch on the same Cluster stays open past it.
func TestRequestTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	st := &slowTenant{slowFor: 3 * time.Second, lateFor: 4 * timeout, done: make(chan struct{})}
	srv := httptest.NewServer(st)
	defer srv.Close()
	defer close(st.done)

	c, err := newCluster("t", "uid", &rest.Config{Host: srv.URL}, "h", 1, timeout, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.events.shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	if _, err := c.Client.CoreV1().ConfigMaps("ns").Get(ctx, "slow", metav1.GetOptions{}); err == nil {
		t.Error("get of a slow object succeeded; want a timeout error")
	} else {
		t.Logf("get: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "slow", Namespace: "ns"}}
	if _, err := c.Client.CoreV1().ConfigMaps("ns").Create(ctx, cm, metav1.CreateOptions{}); err == nil {
		t.Error("slow create succeeded; want a timeout error")
	}

	inf := c.Informers.Core().V1().ConfigMaps().Informer()
	got := make(chan string, 16)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		got <- o.(*corev1.ConfigMap).Name
	}}); err != nil {
		t.Fatal(err)
	}
	c.Informers.Start(ctx.Done())
	defer func() { cancel(); c.Informers.Shutdown() }()
	deadline := time.After(30 * time.Second)
	for seen := map[string]bool{}; !seen["b"]; {
		select {
		case n := <-got:
			seen[n] = true
		case <-deadline:
			t.Fatalf("the watch never delivered the event sent %v after it opened (watches opened: %d)", st.lateFor, st.watches.Load())
		}
	}
	if n := st.watches.Load(); n != 1 {
		t.Errorf("the informer opened %d watches; want 1 (the request timeout cut the watch)", n)
	}
}
