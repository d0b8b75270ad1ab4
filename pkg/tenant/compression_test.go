package tenant

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// encodingRecorder records the Accept-Encoding header of every request before serving it.
type encodingRecorder struct {
	next http.Handler
	mu   sync.Mutex
	seen map[string]string // "METHOD path?watch" → Accept-Encoding
}

func (e *encodingRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.seen[r.Method+" "+r.URL.Path+" watch="+r.URL.Query().Get("watch")] = r.Header.Get("Accept-Encoding")
	e.mu.Unlock()
	e.next.ServeHTTP(w, r)
}

// TestTenantRequestsAskForNoGzip checks that neither a Cluster's client nor its informers ask a
// tenant apiserver for gzip, even when the kubeconfig does not disable compression: a WatchList
// stream would be compressed one gzip member per event, a cost on both ends, and a decompressed
// body is one the tenant can make larger than what it sends.
func TestTenantRequestsAskForNoGzip(t *testing.T) {
	st := &slowTenant{lateFor: time.Hour, done: make(chan struct{})}
	rec := &encodingRecorder{next: st, seen: map[string]string{}}
	srv := httptest.NewTLSServer(rec)
	defer srv.Close()
	defer close(st.done)

	// TLS, as every tenant is reached: client-go uses http.DefaultTransport (which always asks
	// for gzip) for a plain-HTTP config without TLS settings.
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := &rest.Config{Host: srv.URL, DisableCompression: false, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	c, err := newCluster("t", "uid", cfg, "h", 1, time.Minute, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.events.shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.Client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	inf := c.Informers.Core().V1().ConfigMaps().Informer()
	c.Informers.Start(ctx.Done())
	defer func() { cancel(); c.Informers.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer never synced")
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if _, ok := rec.seen["GET /api/v1/configmaps watch=true"]; !ok {
		t.Fatalf("the informer's watch was not seen; requests: %v", rec.seen)
	}
	for req, enc := range rec.seen {
		if enc != "" {
			t.Errorf("%s asked for Accept-Encoding %q; want none", req, enc)
		}
	}
}
