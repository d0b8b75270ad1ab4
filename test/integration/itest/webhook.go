package itest

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SlowWebhook is a validating admission webhook served over HTTPS on 127.0.0.1 (the tenant
// apiservers of the tests run on this machine) that allows every request after Delay. Installed
// in a tenant, it makes that tenant's apiserver answer the requests its rules match slowly, as a
// hostile tenant (cluster-admin of its own control plane) can.
type SlowWebhook struct {
	Delay    time.Duration
	server   *WebhookServer
	answered atomic.Int64
	waiting  atomic.Int64
}

// SlowWebhookName is the ValidatingWebhookConfiguration Install creates.
const SlowWebhookName = "itest-slow"

// StartSlowWebhook serves the webhook (StartWebhookServer) until Stop.
func StartSlowWebhook(delay time.Duration) (*SlowWebhook, error) {
	w := &SlowWebhook{Delay: delay}
	srv, err := StartWebhookServer(AdmissionHandler(w.serve))
	if err != nil {
		return nil, err
	}
	w.server = srv
	return w, nil
}

// serve answers an AdmissionReview with allowed after w.Delay, or not at all when the apiserver
// gave up first.
func (w *SlowWebhook) serve(ctx context.Context, _ *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	w.waiting.Add(1)
	defer w.waiting.Add(-1)
	select {
	case <-time.After(w.Delay):
	case <-ctx.Done():
		return nil
	}
	w.answered.Add(1)
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// Answered returns how many requests the webhook answered so far; Waiting how many it holds now.
func (w *SlowWebhook) Answered() int64 { return w.answered.Load() }

// Waiting returns how many requests the webhook holds now.
func (w *SlowWebhook) Waiting() int64 { return w.waiting.Load() }

// Stop closes the server.
func (w *SlowWebhook) Stop() { w.server.Close() }

// Install creates, in the tenant behind cs, a ValidatingWebhookConfiguration that sends every
// CREATE of pods/binding and serviceaccounts/token and every UPDATE of pods/status in namespace
// ns to w (timeoutSeconds 30, the API's maximum; failurePolicy Fail), then waits (at most a
// minute) until the tenant apiserver calls it. These are the requests the syncer makes to a
// tenant for a Pod: its service-account tokens (downward), its binding and status (upward).
func (w *SlowWebhook) Install(ctx context.Context, cs kubernetes.Interface, ns string) error {
	cfg := w.server.Configuration(SlowWebhookName, "slow.itest.vcsyncer.io", ns, 30,
		WebhookRule(admissionregistrationv1.Create, "pods/binding", "serviceaccounts/token"), WebhookRule(admissionregistrationv1.Update, "pods/status"))
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		return err
	}
	// The apiserver picks the configuration up from its informer: probe (without waiting for
	// the slow answer) until w is called.
	deadline := time.Now().Add(time.Minute)
	for w.Waiting() == 0 && w.Answered() == 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("the tenant apiserver did not call the webhook at %s within a minute", w.server.URL)
		}
		go func() {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, _ = cs.CoreV1().ServiceAccounts(ns).CreateToken(pctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		}()
		time.Sleep(300 * time.Millisecond)
	}
	return nil
}

// Uninstall deletes the configuration Install created.
func (w *SlowWebhook) Uninstall(ctx context.Context, cs kubernetes.Interface) error {
	return cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, SlowWebhookName, metav1.DeleteOptions{})
}
