package pod

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/vcsyncer/syncer/pkg/tenant"
)

// tokenFunc answers a TokenRequest for ServiceAccount sa.
type tokenFunc func(ctx context.Context, sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)

// tokenClient is a tenant clientset whose CreateToken calls fn without the fake clientset's
// lock (the fake runs its reactors one at a time, so a blocking reactor would serialize them).
type tokenClient struct {
	kubernetes.Interface
	fn tokenFunc
}

func (c tokenClient) CoreV1() typedcorev1.CoreV1Interface {
	return tokenCore{c.Interface.CoreV1(), c.fn}
}

type tokenCore struct {
	typedcorev1.CoreV1Interface
	fn tokenFunc
}

func (c tokenCore) ServiceAccounts(ns string) typedcorev1.ServiceAccountInterface {
	return tokenSAs{c.CoreV1Interface.ServiceAccounts(ns), c.fn}
}

type tokenSAs struct {
	typedcorev1.ServiceAccountInterface
	fn tokenFunc
}

func (s tokenSAs) CreateToken(ctx context.Context, sa string, tr *authenticationv1.TokenRequest, _ metav1.CreateOptions) (*authenticationv1.TokenRequest, error) {
	return s.fn(ctx, sa, tr)
}

// TestRequestTokensConcurrently checks that a Pod's TokenRequests run concurrently, at most
// tokenRequestConcurrency at a time, and give the same tokens and refresh time as one
// after another would: each key its own source's token, the earliest refresh time.
func TestRequestTokensConcurrently(t *testing.T) {
	const n = 8
	var (
		mu            sync.Mutex
		inFlight, max int
		started       = make(chan struct{}, n)
		release       = make(chan struct{})
	)
	now := time.Now()
	fn := func(ctx context.Context, sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
		mu.Lock()
		inFlight++
		if inFlight > max {
			max = inFlight
		}
		mu.Unlock()
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		out := tr.DeepCopy()
		out.Status.Token = "token-for-" + tr.Spec.Audiences[0]
		out.Status.ExpirationTimestamp = metav1.NewTime(now.Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))
		return out, nil
	}
	var srcs []corev1.VolumeProjection
	for i := 0; i < n; i++ {
		// Source 5 has the shortest lifetime, so it sets the refresh time.
		secs := int64(3600 + 600*i)
		if i == 5 {
			secs = 1200
		}
		srcs = append(srcs, corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Path: fmt.Sprintf("t%d", i), Audience: fmt.Sprintf("aud-%d", i), ExpirationSeconds: &secs}})
	}
	full := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "web-uid"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "a", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: srcs[:3]}}},
			{Name: "b", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: srcs[3:]}}},
		}},
	}
	c := &tenant.Cluster{Name: "t1", Client: tokenClient{fake.NewClientset(), fn}, Informers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}

	type result struct {
		data []string
		next time.Time
		err  error
	}
	done := make(chan result, 1)
	go func() {
		srcs, _ := tokenSources(&full.Spec)
		data, next, err := requestTokens(context.Background(), c, full, srcs)
		done <- result{data, next, err}
	}()
	// The first round: tokenRequestConcurrency requests are in flight together.
	for i := 0; i < tokenRequestConcurrency; i++ {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d TokenRequests started while the first one blocks; want %d in flight together", i, tokenRequestConcurrency)
		}
	}
	close(release)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if max != tokenRequestConcurrency {
		t.Errorf("%d TokenRequests in flight at most; want %d", max, tokenRequestConcurrency)
	}
	if len(r.data) != n {
		t.Errorf("%d tokens, want %d", len(r.data), n)
	}
	for i := 0; i < n && i < len(r.data); i++ {
		if want := fmt.Sprintf("token-for-aud-%d", i); r.data[i] != want {
			t.Errorf("token %d = %q, want %q (its own source's)", i, r.data[i], want)
		}
	}
	if wantNext := refreshAt(now, now.Add(1200*time.Second)); r.next.Sub(wantNext).Abs() > time.Minute {
		t.Errorf("refresh at %v, want about %v (the shortest-lived token's)", r.next, wantNext)
	}
}
