package tenant

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// apiServer answers GET /apis/apiregistration.k8s.io/v1/apiservices/<name> with the JSON in
// bodies (404 for a name not there; status for a name in statuses), and with protobuf unless
// JSON is asked for, as a kube-apiserver answers a client configured for protobuf.
func apiServer(t *testing.T, bodies map[string]string, statuses map[string]int) kubernetes.Interface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/apis/apiregistration.k8s.io/v1/apiservices/")
		if code, ok := statuses[name]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":%q}`, code,
				map[int]string{http.StatusForbidden: "Forbidden", http.StatusInternalServerError: "InternalError"}[code])
			return
		}
		if a := r.Header.Get("Accept"); a != "application/json" {
			w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
			_, _ = w.Write([]byte("k8s\x00 protobuf"))
			return
		}
		b, ok := bodies[name]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":404,"reason":"NotFound"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(b))
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
		AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json", ContentType: "application/vnd.kubernetes.protobuf"}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// CheckAPIServices passes a tenant whose watched APIs are served locally (or not at all), and
// refuses one whose APIService names a service (ErrAPIServiceNotLocal) or that it may not read.
func TestCheckAPIServices(t *testing.T) {
	local := `{"kind":"APIService","apiVersion":"apiregistration.k8s.io/v1","metadata":{"name":"x"},"spec":{"group":"g","version":"v1","groupPriorityMinimum":1,"versionPriority":1}}`
	repointed := `{"kind":"APIService","apiVersion":"apiregistration.k8s.io/v1","metadata":{"name":"x"},"spec":{"service":{"namespace":"default","name":"hostile-api","port":443},"group":"discovery.k8s.io","version":"v1","insecureSkipTLSVerify":true,"groupPriorityMinimum":1,"versionPriority":1}}`
	all := map[string]string{}
	for _, n := range WatchedAPIServices {
		all[n] = local
	}
	ctx := context.Background()
	if err := CheckAPIServices(ctx, apiServer(t, all, nil)); err != nil {
		t.Errorf("all served locally: %v", err)
	}
	some := map[string]string{"v1.discovery.k8s.io": local} // the others not served at all
	if err := CheckAPIServices(ctx, apiServer(t, some, nil)); err != nil {
		t.Errorf("groups not served: %v", err)
	}
	bad := map[string]string{}
	for k, v := range all {
		bad[k] = v
	}
	bad["v1.discovery.k8s.io"] = repointed
	err := CheckAPIServices(ctx, apiServer(t, bad, nil))
	if !errors.Is(err, ErrAPIServiceNotLocal) || !strings.Contains(err.Error(), "default/hostile-api") {
		t.Errorf("v1.discovery.k8s.io repointed: %v, want ErrAPIServiceNotLocal naming the Service", err)
	}
	err = CheckAPIServices(ctx, apiServer(t, all, map[string]int{"v1.policy": http.StatusForbidden}))
	if !apierrors.IsForbidden(err) {
		t.Errorf("APIService unreadable: %v, want the Forbidden error", err)
	}
}

// WatchedAPIServices names the group version of every non-core kind the syncer caches from a
// tenant (HeldKinds), and of Leases (its vNode heartbeats).
func TestWatchedAPIServicesCoverHeldKinds(t *testing.T) {
	objs := kindObjects(t, "x", 1)
	for kind, obj := range objs {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj.(runtime.Object))
		if err != nil {
			continue // a cached form (Pod, Event copy): core kinds
		}
		gv := gvks[0].GroupVersion()
		if gv.Group == "" {
			continue
		}
		if name := gv.Version + "." + gv.Group; !slices.Contains(WatchedAPIServices, name) {
			t.Errorf("%s (%s) is cached from tenants but APIService %s is not checked", kind, gv, name)
		}
	}
	if !slices.Contains(WatchedAPIServices, "v1.coordination.k8s.io") {
		t.Error("Leases (vNode heartbeats) are not checked")
	}
}

// A running Cluster whose watched API becomes served elsewhere (or unreadable) is marked once
// and its Tenant notified (the controller replaces it); a transient error marks nothing.
func TestRunningCheckMarksTheCluster(t *testing.T) {
	repointed := `{"kind":"APIService","apiVersion":"apiregistration.k8s.io/v1","metadata":{"name":"v1.policy"},"spec":{"service":{"namespace":"x","name":"y"}}}`
	for name, tc := range map[string]struct {
		bodies   map[string]string
		statuses map[string]int
		want     bool
	}{
		"served locally": {bodies: map[string]string{}, want: false},
		"repointed":      {bodies: map[string]string{"v1.policy": repointed}, want: true},
		"forbidden":      {statuses: map[string]int{"v1.policy": http.StatusForbidden}, want: true},
		"server error":   {statuses: map[string]int{"v1.policy": http.StatusInternalServerError}, want: false},
	} {
		t.Run(name, func(t *testing.T) {
			notified := 0
			c := &Cluster{Name: "t", Client: apiServer(t, tc.bodies, tc.statuses), notify: func(string) { notified++ }}
			c.checkAPIServicesRunning(context.Background())
			c.checkAPIServicesRunning(context.Background())
			if c.APIServicesNotLocal() != tc.want || notified != map[bool]int{true: 1}[tc.want] {
				t.Errorf("marked %v, notified %d times; want marked %v, notified once if marked", c.APIServicesNotLocal(), notified, tc.want)
			}
		})
	}
}

// The informers' transport reads the APIService of a watched group version before each GET of
// its resources, and refuses the GET, which then never reaches the apiserver, when the
// APIService names a service (notLocal called) or cannot be read; other requests pass
// unchecked.
func TestAPIServiceGuard(t *testing.T) {
	repointed := `{"kind":"APIService","apiVersion":"apiregistration.k8s.io/v1","metadata":{"name":"v1.discovery.k8s.io"},"spec":{"service":{"namespace":"default","name":"hostile-api"}}}`
	local := `{"kind":"APIService","apiVersion":"apiregistration.k8s.io/v1","metadata":{"name":"v1.discovery.k8s.io"},"spec":{}}`
	for name, tc := range map[string]struct {
		method, path string
		body         string // the APIService v1.discovery.k8s.io; "" answers 404
		status       int    // the APIService read's status when not 0
		wantChecks   int
		wantPassed   bool
		wantNotLocal bool
	}{
		"local":                {method: "GET", path: "/apis/discovery.k8s.io/v1/endpointslices", body: local, wantChecks: 1, wantPassed: true},
		"repointed":            {method: "GET", path: "/apis/discovery.k8s.io/v1/endpointslices", body: repointed, wantChecks: 1, wantNotLocal: true},
		"repointed, namespace": {method: "GET", path: "/prefix/apis/discovery.k8s.io/v1/namespaces/a/endpointslices", body: repointed, wantChecks: 1, wantNotLocal: true},
		"not served":           {method: "GET", path: "/apis/discovery.k8s.io/v1/endpointslices", wantChecks: 1, wantPassed: true},
		"forbidden":            {method: "GET", path: "/apis/discovery.k8s.io/v1/endpointslices", status: http.StatusForbidden, wantChecks: 1},
		"core group":           {method: "GET", path: "/api/v1/pods", body: repointed, wantPassed: true},
		"discovery document":   {method: "GET", path: "/apis/discovery.k8s.io/v1", body: repointed, wantPassed: true},
		"other group":          {method: "GET", path: "/apis/rbac.authorization.k8s.io/v1/roles", body: repointed, wantPassed: true},
		"a write":              {method: "POST", path: "/apis/discovery.k8s.io/v1/namespaces/a/endpointslices", body: repointed, wantPassed: true},
	} {
		t.Run(name, func(t *testing.T) {
			var checks, passed int
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/apis/apiregistration.k8s.io/v1/apiservices/v1.discovery.k8s.io") {
					checks++
					switch {
					case tc.status != 0:
						w.WriteHeader(tc.status)
					case tc.body == "":
						w.WriteHeader(http.StatusNotFound)
					default:
						_, _ = w.Write([]byte(tc.body))
					}
					return
				}
				passed++
			}))
			t.Cleanup(srv.Close)
			var notLocal error
			c := &http.Client{Transport: &apiServiceGuard{next: http.DefaultTransport, notLocal: func(err error) { notLocal = err }}}
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			resp, err := c.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			if checks != tc.wantChecks || (passed == 1) != tc.wantPassed || (err == nil) != tc.wantPassed {
				t.Errorf("APIService reads %d, request passed %v (err %v); want %d, %v", checks, passed == 1, err, tc.wantChecks, tc.wantPassed)
			}
			if (notLocal != nil) != tc.wantNotLocal || tc.wantNotLocal && !errors.Is(err, ErrAPIServiceNotLocal) {
				t.Errorf("notLocal %v, error %v; want notLocal %v", notLocal, err, tc.wantNotLocal)
			}
		})
	}
}
