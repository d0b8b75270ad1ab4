package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The tenant's built-in API groups must be served by its own kube-apiserver. A tenant is
// cluster-admin of its control plane, and kube-apiserver registers the APIServices of its
// built-in groups only when it starts, so the tenant can point one (say v1.discovery.k8s.io) at
// a server of its own: that server then answers the syncer's object count with nothing and its
// lists and watches with objects of any number and size, past every bound of the apiserver.
// The core group (/api/v1) cannot be repointed.

// WatchedAPIServices are the APIServices (one per group version) of the non-core kinds the
// syncer lists, watches, reads or writes in a tenant: they must be served locally (no
// spec.service). apps and batch are read for the owners of refused Pods.
var WatchedAPIServices = []string{
	"v1.discovery.k8s.io", "v1.networking.k8s.io", "v1.policy", "v1.scheduling.k8s.io",
	"v1.storage.k8s.io", "v1.node.k8s.io", "v1.coordination.k8s.io", "v1.apps", "v1.batch",
}

// ErrAPIServiceNotLocal is returned (wrapped) by CheckAPIServices for a watched group version
// the tenant serves from elsewhere.
var ErrAPIServiceNotLocal = errors.New("a built-in API of the tenant is not served by its kube-apiserver")

// apiServiceCheckEvery is how often a running Cluster checks WatchedAPIServices again (every
// that many probes: 30 s). A variable for tests.
var apiServiceCheckEvery = 3

// CheckAPIServices reads each of WatchedAPIServices from the tenant apiserver (one GET each)
// and returns an error wrapping ErrAPIServiceNotLocal when one names a service (the group is
// served by a server other than the tenant's kube-apiserver), or the read's error when one
// cannot be read (a Forbidden included: the syncer cannot tell). An APIService that does not
// exist is fine (the group is not served; its kinds are skipped). A fake clientset, which has
// no REST client, passes.
func CheckAPIServices(ctx context.Context, cs kubernetes.Interface) error {
	rc := cs.Discovery().RESTClient()
	if r, ok := rc.(*rest.RESTClient); rc == nil || ok && r == nil {
		return nil // a fake clientset (unit tests): no apiserver to ask
	}
	for _, name := range WatchedAPIServices {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		raw, err := rc.Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices", name).
			SetHeader("Accept", "application/json").Do(rctx).Raw()
		cancel()
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading APIService %s (the syncer checks that the tenant's kube-apiserver serves it; grant get on apiservices.apiregistration.k8s.io): %w", name, err)
		}
		if err := checkAPIService(name, raw); err != nil {
			return err
		}
	}
	return nil
}

// checkAPIService decodes the APIService name (JSON) and returns an error wrapping
// ErrAPIServiceNotLocal when it names a service.
func checkAPIService(name string, raw []byte) error {
	var svc struct {
		Spec struct {
			Service *struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"service"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &svc); err != nil {
		return fmt.Errorf("decoding APIService %s: %w", name, err)
	}
	if s := svc.Spec.Service; s != nil {
		return fmt.Errorf("%w: APIService %s is served by Service %s/%s; the syncer does not watch a tenant whose built-in APIs another server answers (restore the APIService to be served locally: no spec.service)",
			ErrAPIServiceNotLocal, name, s.Namespace, s.Name)
	}
	return nil
}

// watchedAPIServiceOf returns the name of the APIService in WatchedAPIServices that serves a
// resource request to path ("[prefix]/apis/<group>/<version>/<resource...>"), and the path's
// prefix before "/apis/"; "" for any other path (the core group, discovery documents).
func watchedAPIServiceOf(path string) (name, prefix string) {
	i := strings.Index(path, "/apis/")
	if i < 0 {
		return "", ""
	}
	parts := strings.SplitN(path[i+len("/apis/"):], "/", 3)
	if len(parts) < 3 || parts[2] == "" {
		return "", ""
	}
	name = parts[1] + "." + parts[0]
	if !slices.Contains(WatchedAPIServices, name) {
		return "", ""
	}
	return name, path[:i]
}

// maxAPIServiceBytes bounds the body of an APIService read by apiServiceGuard (an APIService
// is small; its caBundle, a few KB, is the largest part). A larger one fails to decode and the
// request it guards is refused.
const maxAPIServiceBytes = 64 << 10

// apiServiceGuard is the transport of a tenant's informers (their lists and watches): before a
// GET of a resource in a group version of WatchedAPIServices it reads that APIService from the
// same apiserver (through next) and refuses the request when the APIService names a service
// (ErrAPIServiceNotLocal, after calling notLocal with the error) or cannot be read (a status
// other than 200 or 404: the syncer cannot tell). So a list or watch of a built-in kind never
// reaches a server the tenant pointed the group at, whenever the informer opens it; the
// periodic check (CheckAPIServices, every 30 s) only reports the state. What is left is the
// moment between the read and the request. The reflector retries a refused request with its
// own backoff. One GET per list or watch opened (each watch lasts 5 to 10 minutes).
type apiServiceGuard struct {
	next     http.RoundTripper
	notLocal func(error)
}

// RoundTrip checks req's APIService (see apiServiceGuard) and passes req to next.
func (g *apiServiceGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return g.next.RoundTrip(req)
	}
	name, prefix := watchedAPIServiceOf(req.URL.Path)
	if name == "" {
		return g.next.RoundTrip(req)
	}
	u := *req.URL
	u.Path, u.RawPath, u.RawQuery = prefix+"/apis/apiregistration.k8s.io/v1/apiservices/"+name, "", ""
	check, err := http.NewRequestWithContext(req.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	check.Header.Set("Accept", "application/json")
	if ua := req.Header.Get("User-Agent"); ua != "" {
		check.Header.Set("User-Agent", ua)
	}
	resp, err := g.next.RoundTrip(check)
	if err != nil {
		return nil, fmt.Errorf("reading APIService %s before a request to its group: %w", name, err)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIServiceBytes))
	_ = resp.Body.Close()
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading APIService %s before a request to its group: %w", name, err)
	case resp.StatusCode == http.StatusNotFound:
		return g.next.RoundTrip(req) // the group is not served: the apiserver answers itself
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("reading APIService %s before a request to its group: HTTP %d (grant get on apiservices.apiregistration.k8s.io)", name, resp.StatusCode)
	}
	if err := checkAPIService(name, raw); err != nil {
		if errors.Is(err, ErrAPIServiceNotLocal) && g.notLocal != nil {
			g.notLocal(err)
		}
		return nil, err
	}
	return g.next.RoundTrip(req)
}
