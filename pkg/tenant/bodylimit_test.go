package tenant

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The tenant Client's transport fails a read past maxResponseBytes (a repointed group's
// server answering with a body of any size) and passes a body up to the bound whole.
func TestTenantResponsesAreBounded(t *testing.T) {
	old := maxResponseBytes
	maxResponseBytes = 1000
	t.Cleanup(func() { maxResponseBytes = old })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 1000
		if r.URL.Path == "/big" {
			n = 5000
		}
		_, _ = w.Write([]byte(strings.Repeat("x", n)))
	}))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: bodyLimit{next: http.DefaultTransport}}
	for path, wantErr := range map[string]bool{"/small": false, "/big": true} {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if got := errors.Is(err, ErrResponseTooLarge); got != wantErr {
			t.Errorf("%s: read %d bytes, err %v; want ErrResponseTooLarge %v", path, len(b), err, wantErr)
		}
		if wantErr && int64(len(b)) > maxResponseBytes+1 {
			t.Errorf("%s: %d bytes read past the bound of %d", path, len(b), maxResponseBytes)
		}
		if !wantErr && len(b) != 1000 {
			t.Errorf("%s: %d bytes, want the whole 1000", path, len(b))
		}
	}
}

// A TokenRequest's answer is bounded at maxTokenResponseBytes, far below maxResponseBytes;
// other requests to the same server keep the larger bound.
func TestTenantTokenResponsesAreBoundedTighter(t *testing.T) {
	old := maxTokenResponseBytes
	maxTokenResponseBytes = 100
	t.Cleanup(func() { maxTokenResponseBytes = old })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 1000)))
	}))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: bodyLimit{next: http.DefaultTransport}}
	for _, tc := range []struct {
		method, path string
		wantErr      bool
	}{
		{http.MethodPost, "/api/v1/namespaces/ns/serviceaccounts/default/token", true},
		{http.MethodGet, "/api/v1/namespaces/ns/serviceaccounts/default", false},
		{http.MethodPost, "/api/v1/namespaces/ns/pods/p/binding", false},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if got := errors.Is(err, ErrResponseTooLarge); got != tc.wantErr {
			t.Errorf("%s %s: read %d bytes, err %v; want ErrResponseTooLarge %v", tc.method, tc.path, len(b), err, tc.wantErr)
		}
	}
}
