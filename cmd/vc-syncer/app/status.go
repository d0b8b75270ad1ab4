package app

import (
	"net/http"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/pkg/status"
	"github.com/vcsyncer/syncer/pkg/syncer"
)

// addStatusPage serves the status page (pkg/status) at / and /status.json on the metrics
// server, when it is on. The metrics port is the one the Service exposes; see the pkg/status
// documentation for why not the health-probe port.
func addStatusPage(mgr ctrl.Manager, o *options.Options, s *syncer.Syncer) error {
	if o.MetricsBindAddress == "" || o.MetricsBindAddress == "0" {
		return nil
	}
	h, err := status.NewHandler(status.Options{
		Provider: s,
		Tenants:  mgr.GetClient(), // the manager's cache: Tenant objects are watched by the Tenant controller
		Leader:   elected(mgr.Elected()),
	})
	if err != nil {
		return err
	}
	for _, path := range []string{"/", "/status.json"} {
		if err := mgr.AddMetricsServerExtraHandler(path, h); err != nil {
			return err
		}
	}
	return nil
}

// elected returns a func reporting whether ch (Manager.Elected: closed once this replica
// leads, at once without leader election) is closed.
func elected(ch <-chan struct{}) func() bool {
	return func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}

// readyCheck is the /readyz check of `vc-syncer run`. The leader (or the only replica, without
// leader election) is ready once the Syncer is (syncer.ReadyCheck: super caches synced). A
// standby replica is ready as it is: it syncs nothing until it wins the election, and if it
// were not ready a rolling update of a 2-replica Deployment would never finish (the new Pod
// waits for the old leader's Lease, the old Pod waits for the new one to be ready). On
// winning, readiness drops until the Syncer's caches have synced.
func readyCheck(isLeader func() bool, syncerReady healthz.Checker) healthz.Checker {
	return func(req *http.Request) error {
		if !isLeader() {
			return nil
		}
		return syncerReady(req)
	}
}
