package isolation

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// Shape of the repointed-API attack: the tenant's own server lists aggItems EndpointSlices of
// aggEndpoints endpoints each to anyone but a count (LIST ?limit=1, which it answers with
// none).
const (
	aggItems     = 3000
	aggEndpoints = 1000
)

// fakeDiscoveryServer is a discovery.k8s.io/v1 server of tenant A's own: it answers a count
// with no EndpointSlices, a list with aggItems large ones, and holds watches open until the
// test ends. lists
// counts the full lists it served to the syncer.
func fakeDiscoveryServer(t *testing.T, lists *atomic.Int64) *httptest.Server {
	t.Helper()
	item, err := json.Marshal(&discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{Kind: "EndpointSlice", APIVersion: "discovery.k8s.io/v1"},
		ObjectMeta:  metav1.ObjectMeta{Name: "NAME", Namespace: aNS, UID: "UID", ResourceVersion: "7"},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: func() []discoveryv1.Endpoint {
			e := make([]discoveryv1.Endpoint, aggEndpoints)
			for i := range e {
				e[i] = discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}}
			}
			return e
		}(),
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{}) // ends the watches it holds open, so Close does not wait on them
	mux := http.NewServeMux()
	mux.HandleFunc("/apis/discovery.k8s.io/v1", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "discovery.k8s.io/v1",
			APIResources: []metav1.APIResource{{Name: "endpointslices", SingularName: "endpointslice", Namespaced: true, Kind: "EndpointSlice",
				Verbs: metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}}},
		})
	})
	list := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		if q.Get("watch") == "true" || q.Get("watch") == "1" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		n := 0
		if q.Get("limit") != "1" && strings.HasPrefix(r.Header.Get("User-Agent"), "vc-syncer") {
			lists.Add(1)
			n = aggItems
		}
		_, _ = fmt.Fprint(w, `{"kind":"EndpointSliceList","apiVersion":"discovery.k8s.io/v1","metadata":{"resourceVersion":"7"},"items":[`)
		for i := range n {
			if i > 0 {
				_, _ = w.Write([]byte{','})
			}
			s := strings.Replace(strings.Replace(string(item), `"NAME"`, strconv.Quote(fmt.Sprintf("agg-%05d", i)), 1), `"UID"`, strconv.Quote(fmt.Sprintf("agg-uid-%05d", i)), 1)
			_, _ = w.Write([]byte(s))
		}
		_, _ = fmt.Fprint(w, `]}`)
	}
	mux.HandleFunc("/apis/discovery.k8s.io/v1/endpointslices", list)
	mux.HandleFunc("/apis/discovery.k8s.io/v1/namespaces/", list)
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(func() {
		// Watches through the tenant apiserver (its own controllers' too) stay open: end
		// them first, or Close waits for them.
		close(stop)
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// attackRepointedAPI: tenant A, cluster-admin of its control plane, points the APIService of
// a built-in group the syncer watches (v1.discovery.k8s.io, which kube-apiserver registers
// only when it starts) at a server of its own, through an ExternalName Service. That server
// could answer the syncer's count with nothing and its lists with objects of any number and
// size. The wall: the syncer checks that its watched APIs are served by the tenant's
// kube-apiserver, before it counts and every 30 s while it runs; A is then not watched (Synced
// False, reason TooManyObjects, the APIService named in the message; vcsyncer_tenant_suspended
// 1), the fake server serves the syncer no list, and B's new Pod still syncs. Restored, A is
// synced again.
func (s *suite) attackRepointedAPI(t *testing.T) {
	ctx := context.Background()
	var lists atomic.Int64
	srv := fakeDiscoveryServer(t, &lists)
	_, portStr, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	port, _ := strconv.Atoi(portStr)

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hostile-api"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	if _, err := s.a.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(s.a.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	apis := dc.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	orig, err := apis.Get(ctx, "v1.discovery.k8s.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	origSpec, _, _ := unstructured.NestedMap(orig.Object, "spec")
	defer func() {
		itest.Eventually(t, maxWait, "APIService v1.discovery.k8s.io restored", func(ctx context.Context) error {
			cur, err := apis.Get(ctx, "v1.discovery.k8s.io", metav1.GetOptions{})
			if err != nil {
				return err
			}
			_ = unstructured.SetNestedMap(cur.Object, origSpec, "spec")
			_, err = apis.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		_ = s.a.Client.CoreV1().Services("default").Delete(ctx, svc.Name, metav1.DeleteOptions{})
		s.waitSynced(t, s.a.Name)
	}()

	cur := orig.DeepCopy()
	_ = unstructured.SetNestedMap(cur.Object, map[string]any{"namespace": "default", "name": svc.Name, "port": int64(port)}, "spec", "service")
	_ = unstructured.SetNestedField(cur.Object, true, "spec", "insecureSkipTLSVerify")
	unstructured.RemoveNestedField(cur.Object, "spec", "caBundle")
	if _, err := apis.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("tenant A (cluster-admin) cannot repoint APIService v1.discovery.k8s.io: %v", err)
	}
	itest.Eventually(t, 4*maxWait, "tenant A not watched while its API is served elsewhere", func(ctx context.Context) error {
		var tn tenancyv1alpha1.Tenant
		if err := s.c.Get(ctx, clientKey(s.a.Name), &tn); err != nil {
			return err
		}
		c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionSynced)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "APIService v1.discovery.k8s.io is served by Service default/hostile-api") {
			return itest.Errorf("ATTACK ESCAPED: tenant A's v1.discovery.k8s.io is served by its own server and A is still synced: Synced %+v; %d full lists served to the syncer", c, lists.Load())
		}
		if g := tenantGauge("vcsyncer_tenant_suspended", s.a.Name); g != 1 {
			return itest.Errorf("vcsyncer_tenant_suspended = %v", g)
		}
		return nil
	})
	if n := lists.Load(); n > 0 {
		t.Errorf("ATTACK ESCAPED: tenant A's own server served the syncer %d lists of %d EndpointSlices", n, aggItems)
	}
	s.bPodRuns(t, "web-during-repointed-api")
}
