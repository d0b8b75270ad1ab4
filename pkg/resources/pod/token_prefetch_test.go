package pod

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The tokens requested from the cached (trimmed) tenant Pod are the ones the super Pod gets
// when the full spec asks for the same tokens; a full spec that asks for others is asked for
// anew, and a cached Pod over the policy's limit is not asked for at all.
func TestPrefetchedTokens(t *testing.T) {
	var calls atomic.Int32
	fn := func(_ context.Context, _ string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
		calls.Add(1)
		out := tr.DeepCopy()
		out.Status.Token = "tok-" + string(tr.Spec.BoundObjectRef.UID)
		if len(tr.Spec.Audiences) > 0 {
			out.Status.Token += "-" + tr.Spec.Audiences[0]
		}
		out.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(time.Hour))
		return out, nil
	}
	c := &tenant.Cluster{Name: "t1", Client: tokenClient{fake.NewClientset(), fn}, Informers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	full := tenantPod()
	full.Spec.Volumes[0].Projected.Sources = full.Spec.Volumes[0].Projected.Sources[:1] // no kube-root-ca.crt
	cached := full.DeepCopy()
	conversion.TrimPodSpec(cached)
	if srcs, _ := tokenSources(&cached.Spec); len(srcs) != 1 {
		t.Fatalf("test premise: the trimmed Pod keeps its token source, got %d", len(srcs))
	}

	p := prefetchTokens(context.Background(), c, cached, 8)
	tokens, _, err := podTokens(context.Background(), &resources.Env{}, c, full, p)
	if err != nil || len(tokens) != 1 || tokens[0] != "tok-pod-uid" {
		t.Fatalf("tokens = %v, %v", tokens, err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d TokenRequests for one source; want the prefetched one only", n)
	}

	calls.Store(0)
	other := full.DeepCopy()
	other.Spec.Volumes[0].Projected.Sources[0].ServiceAccountToken.Audience = "vault"
	p = prefetchTokens(context.Background(), c, cached, 8)
	tokens, _, err = podTokens(context.Background(), &resources.Env{}, c, other, p)
	if err != nil || len(tokens) != 1 || tokens[0] != "tok-pod-uid-vault" {
		t.Fatalf("tokens for another audience = %v, %v; want the full spec's", tokens, err)
	}
	<-p.done // the unused prefetch still runs to its end (or its context's)
	if n := calls.Load(); n != 2 {
		t.Errorf("%d TokenRequests; want the prefetched one and one for the full spec", n)
	}

	calls.Store(0)
	if p := prefetchTokens(context.Background(), c, cached, 0); p != nil {
		t.Error("prefetched tokens of a Pod over the policy's limit")
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d TokenRequests for a Pod over the limit", n)
	}
}

// The super Pod cache never holds tenant credentials: TrimSuperPod drops the token and CA
// annotations and keeps the rest.
func TestTrimSuperPodDropsCredentials(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		tokenAnnotation(0): "t0", tokenAnnotation(7): "t7", AnnotationTenantCA: "ca",
		AnnotationTokenRefresh: "2026-01-01T00:00:00Z", "other": "x",
	}}}
	out, _ := TrimSuperPod(p)
	got := out.(*podcache.Pod).Annotations
	if len(got) != 2 || got[AnnotationTokenRefresh] == "" || got["other"] != "x" {
		t.Errorf("cached annotations = %v, want only the refresh time and other", got)
	}
}
