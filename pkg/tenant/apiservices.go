package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// syncer lists, watches or writes in a tenant: they must be served locally (no spec.service).
var WatchedAPIServices = []string{
	"v1.discovery.k8s.io", "v1.networking.k8s.io", "v1.policy", "v1.scheduling.k8s.io",
	"v1.storage.k8s.io", "v1.node.k8s.io", "v1.coordination.k8s.io",
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
	}
	return nil
}
