package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
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
	mu     sync.Mutex
	counts map[string]int // requests answered, by "<resource>/<subresource> <operation>"
}

// startSlowWebhook serves the webhook over HTTPS on a free port of 127.0.0.1
// (itest.StartWebhookServer).
func startSlowWebhook(delay time.Duration) (*slowWebhook, error) {
	w := &slowWebhook{delay: delay, counts: map[string]int{}}
	srv, err := itest.StartWebhookServer(w.serve)
	if err != nil {
		return nil, err
	}
	w.server = srv
	return w, nil
}

// url returns the webhook's URL for the apiserver (https://127.0.0.1:<port>/validate).
func (w *slowWebhook) url() string { return w.server.URL }

// serve answers an AdmissionReview (admission.k8s.io/v1) with allowed after w.delay, or after
// the apiserver gave up on the request.
func (w *slowWebhook) serve(rw http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "expected an AdmissionReview with a request", http.StatusBadRequest)
		return
	}
	select {
	case <-time.After(w.delay):
	case <-r.Context().Done():
		return
	}
	req := review.Request
	w.mu.Lock()
	w.counts[req.Resource.Resource+"/"+req.SubResource+" "+string(req.Operation)]++
	w.mu.Unlock()
	review.Response = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	review.Request = nil
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(&review)
}

// answered returns how many requests the webhook answered, by resource and operation.
func (w *slowWebhook) answered() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.counts))
	for k, v := range w.counts {
		out[k] = v
	}
	return out
}

func (w *slowWebhook) total() int {
	n := 0
	for _, v := range w.answered() {
		n += v
	}
	return n
}

func (w *slowWebhook) stop() { w.server.Close() }

// slowWebhookName is the ValidatingWebhookConfiguration the bench installs in the slow tenant.
const slowWebhookName = "bench-slow"

// install creates, in the tenant behind cs, a ValidatingWebhookConfiguration that sends every
// CREATE of pods/binding and serviceaccounts/token and every UPDATE of pods/status in
// namespace ns to w (timeoutSeconds 5, failurePolicy Fail: the request waits for the answer
// and fails if there is none), then waits until the tenant apiserver calls it (a token request
// answered by w).
func (w *slowWebhook) install(ctx context.Context, cs kubernetes.Interface, ns string) error {
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	url, timeout := w.url(), int32(5)
	rule := func(op admissionregistrationv1.OperationType, resources ...string) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{op},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources}}
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: slowWebhookName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "slow.bench.vcsyncer.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: w.server.CAPEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{rule(admissionregistrationv1.Create, "pods/binding", "serviceaccounts/token"), rule(admissionregistrationv1.Update, "pods/status")},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
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
