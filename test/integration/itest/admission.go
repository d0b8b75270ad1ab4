package itest

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AdmissionHandler returns a webhook handler (for StartWebhookServer) that decodes an
// AdmissionReview (admission.k8s.io/v1), passes its request to decide and answers with the
// response decide returns, its UID set to the request's. decide returns nil to send no answer
// (when the apiserver gave up first: ctx, the HTTP request's context, is done). A body that is
// not an AdmissionReview with a request gets 400 Bad Request.
func AdmissionHandler(decide func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(rw, "expected an AdmissionReview with a request", http.StatusBadRequest)
			return
		}
		resp := decide(r.Context(), review.Request)
		if resp == nil {
			return
		}
		resp.UID = review.Request.UID
		review.Response, review.Request = resp, nil
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(&review)
	}
}

// AdmissionCounts counts admission requests by "<resource>/<subresource> <operation>" (for
// a Pod's status update: "pods/status UPDATE"). The zero value is ready; safe for concurrent use.
type AdmissionCounts struct {
	mu     sync.Mutex
	counts map[string]int
}

// Add counts req.
func (c *AdmissionCounts) Add(req *admissionv1.AdmissionRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[req.Resource.Resource+"/"+req.SubResource+" "+string(req.Operation)]++
}

// Snapshot returns a copy of the counts.
func (c *AdmissionCounts) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	maps.Copy(out, c.counts)
	return out
}

// Total returns the number of requests counted.
func (c *AdmissionCounts) Total() int {
	n := 0
	for _, v := range c.Snapshot() {
		n += v
	}
	return n
}

// WebhookRule matches operation op on the given resources (with subresources as
// "pods/status") of the core API group, v1.
func WebhookRule(op admissionregistrationv1.OperationType, resources ...string) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{op},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources}}
}

// Configuration returns a ValidatingWebhookConfiguration named name with one webhook,
// webhookName, that sends the requests rules match in namespace ns to w (by URL and CABundle),
// waiting at most timeoutSeconds for the answer, and fails them without one (failurePolicy
// Fail, sideEffects None, AdmissionReview v1).
func (w *WebhookServer) Configuration(name, webhookName, ns string, timeoutSeconds int32, rules ...admissionregistrationv1.RuleWithOperations) *admissionregistrationv1.ValidatingWebhookConfiguration {
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	url := w.URL
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    webhookName,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: w.CAPEM},
			Rules:                   rules,
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeoutSeconds,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}
