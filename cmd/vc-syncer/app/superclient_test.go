package app

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestSuperClientAsksForNoGzip checks that the syncer's super-cluster client does not ask for
// gzip (a WatchList stream would be compressed one gzip member per event) and names the shard
// in its user agent.
func TestSuperClientAsksForNoGzip(t *testing.T) {
	var enc, agent string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc, agent = r.Header.Get("Accept-Encoding"), r.Header.Get("User-Agent")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NamespaceList","apiVersion":"v1","metadata":{},"items":[]}`))
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := superClientConfig(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, "s1")
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if enc != "" {
		t.Errorf("the super client asked for Accept-Encoding %q; want none", enc)
	}
	if agent != "vc-syncer/shard=s1" {
		t.Errorf("user agent %q; want vc-syncer/shard=s1", agent)
	}
}
