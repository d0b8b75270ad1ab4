package main

import (
	"context"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/test/integration/itest"
)

// slowWebhook is a validating admission webhook served by the bench over HTTPS on 127.0.0.1
// (the tenant apiservers run on this machine): it answers every AdmissionReview after delay,
// allowing the request. Installed in one tenant, it makes that tenant's apiserver slow for the
// requests its rules match, as a hostile tenant (cluster-admin of its control plane) can.
type slowWebhook struct {
	delay  time.Duration
	server *itest.WebhookServer
	counts itest.AdmissionCounts // requests answered
}

// startSlowWebhook serves the webhook over HTTPS on a free port of 127.0.0.1
// (itest.StartWebhookServer).
func startSlowWebhook(delay time.Duration) (*slowWebhook, error) {
	w := &slowWebhook{delay: delay}
	srv, err := itest.StartWebhookServer(itest.AdmissionHandler(w.serve))
	if err != nil {
		return nil, err
	}
	w.server = srv
	return w, nil
}

// url returns the webhook's URL for the apiserver (https://127.0.0.1:<port>/validate).
func (w *slowWebhook) url() string { return w.server.URL }

// serve answers an AdmissionReview (admission.k8s.io/v1) with allowed after w.delay, or not
// at all when the apiserver gave up on the request first.
func (w *slowWebhook) serve(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	select {
	case <-time.After(w.delay):
	case <-ctx.Done():
		return nil
	}
	w.counts.Add(req)
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// answered returns how many requests the webhook answered, by resource and operation.
func (w *slowWebhook) answered() map[string]int { return w.counts.Snapshot() }

func (w *slowWebhook) total() int { return w.counts.Total() }

func (w *slowWebhook) stop() { w.server.Close() }

// slowWebhookName is the ValidatingWebhookConfiguration the bench installs in the slow tenant.
const slowWebhookName = "bench-slow"

// install creates, in the tenant behind cs, a ValidatingWebhookConfiguration that sends every
// CREATE of pods/binding and serviceaccounts/token and every UPDATE of pods/status in
// namespace ns to w (timeoutSeconds 5, failurePolicy Fail: the request waits for the answer
// and fails if there is none), then waits until the tenant apiserver calls it (a token request
// answered by w).
func (w *slowWebhook) install(ctx context.Context, cs kubernetes.Interface, ns string) error {
	url := w.url()
	cfg := w.server.Configuration(slowWebhookName, "slow.bench.vcsyncer.io", ns, 5,
		itest.WebhookRule(admissionregistrationv1.Create, "pods/binding", "serviceaccounts/token"), itest.WebhookRule(admissionregistrationv1.Update, "pods/status"))
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		return err
	}
	// The apiserver picks the configuration up from its informer: probe until w is called.
	deadline := time.Now().Add(time.Minute)
	for w.total() == 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("the tenant apiserver did not call the webhook at %s within a minute", url)
		}
		if _, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); err != nil && ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// uninstall deletes the configuration install created.
func uninstall(ctx context.Context, cs kubernetes.Interface) error {
	return cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, slowWebhookName, metav1.DeleteOptions{})
}
