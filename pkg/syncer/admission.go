package syncer

import (
	"context"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/vcsyncer/syncer/pkg/admission"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
)

// AdmissionOptions configures the admission window for new super Pods (pkg/admission).
type AdmissionOptions struct {
	// MaxWindow bounds the window, in Pods; 0 turns the window off (Pods are created as fast
	// as the downward workers go). MinWindow is its lower bound and start (default
	// admission.DefaultMinWindow).
	MaxWindow, MinWindow int
}

// newAdmission builds the window (nil when o.MaxWindow is 0 or fair queuing is off): a granted
// Pod is enqueued again as a live event, and the window follows the super Pod informer
// (admission.Window.SuperPodHandler).
func (s *Syncer) newAdmission(o AdmissionOptions, fair bool) (*admission.Window[resources.Request], error) {
	if o.MaxWindow <= 0 || !fair {
		return nil, nil
	}
	w := admission.New(admission.Options[resources.Request]{
		MinWindow: o.MinWindow, MaxWindow: o.MaxWindow, Weight: s.weight,
		Wake:    func(req resources.Request) { s.enqueue(s.down, req, true) },
		OnAdmit: metrics.AdmissionAdmitted,
	})
	if _, err := s.env.SuperInformers.Core().V1().Pods().Informer().AddEventHandler(w.SuperPodHandler()); err != nil {
		return nil, err
	}
	metrics.RegisterAdmissionStats(func() (int, map[string]int, map[string]int) {
		st := w.Stats()
		if s.registry != nil {
			for _, name := range s.registry.Names() { // 0, not absent, for registered tenants
				if _, ok := st.Waiting[name]; !ok {
					st.Waiting[name] = 0
				}
				if _, ok := st.HeldBy[name]; !ok {
					st.HeldBy[name] = 0
				}
			}
		}
		return st.Window, st.Waiting, st.HeldBy
	})
	return w, nil
}

// adjustAdmission adapts the window every admission.DefaultAdjustInterval until ctx is done.
func (s *Syncer) adjustAdmission(ctx context.Context) {
	wait.UntilWithContext(ctx, func(context.Context) { s.admission.Adjust() }, admission.DefaultAdjustInterval)
}
