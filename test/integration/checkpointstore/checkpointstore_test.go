package checkpointstore_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

const ns = "vc-syncer-system"

// blob returns n incompressible bytes from seed.
func blob(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, ^seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// chunks returns the chunk Secrets of the store named id, sorted by name.
func chunks(t *testing.T, c kubernetes.Interface, id string) []corev1.Secret {
	t.Helper()
	list, err := c.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{
		store.LabelManagedBy: store.ManagedByValue, store.LabelID: id, store.LabelRole: store.RoleChunk,
	}).String()})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Secret) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

func names(items []corev1.Secret) []string {
	var out []string
	for _, s := range items {
		out = append(out, s.Name)
	}
	return out
}

// manifest returns the manifest Secret of the store named id.
func manifest(t *testing.T, c kubernetes.Interface, id string) *corev1.Secret {
	t.Helper()
	m, err := c.CoreV1().Secrets(ns).Get(context.Background(), id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustLoad(t *testing.T, s store.Store, want []byte) {
	t.Helper()
	got, err := s.Load(context.Background())
	if err != nil {
		t.Fatalf("Load from %s: %v", s, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Load from %s returned %d bytes, want the %d bytes saved", s, len(got), len(want))
	}
}

func TestSecretStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real control plane")
	}
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: -1}, 0)
	super := env.Super.Client
	ctx := context.Background()
	itest.MustCreateNS(t, super, ns)

	t.Run("a 3 MiB incompressible blob round-trips through chunks under 1 MiB", func(t *testing.T) {
		owner, err := super.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ref := &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
		// A Secret that looks like a chunk but is not managed by the store must survive.
		foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "big-g0-0", Labels: map[string]string{
			store.LabelID: "big", store.LabelRole: store.RoleChunk, store.LabelGeneration: "0"}}}
		if _, err := super.CoreV1().Secrets(ns).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s, err := store.Parse("secret:"+ns+"/big", super, store.Options{Holder: "pod-a", Owner: ref})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Load(ctx); got != nil || err != nil {
			t.Fatalf("Load before any Save = (%d bytes, %v), want (nil, nil)", len(got), err)
		}
		data := blob(1, 3<<20)
		if err := s.Save(ctx, data); err != nil {
			t.Fatal(err)
		}
		// A fresh store (a restarted process) reads it back.
		mustLoad(t, store.NewSecret(super, ns, "big", store.Options{}), data)

		items := chunks(t, super, "big")
		if len(items) < 4 {
			t.Fatalf("chunks %v: want at least 4 for 3 MiB", names(items))
		}
		all := append(items, *manifest(t, super, "big"))
		for _, c := range all {
			dataBytes := 0
			for _, v := range c.Data {
				dataBytes += len(v)
			}
			if dataBytes >= 1<<20 || c.Size() >= 1<<20 {
				t.Errorf("Secret %s holds %d data bytes, %d bytes encoded; want < 1 MiB", c.Name, dataBytes, c.Size())
			}
			if c.Type != corev1.SecretTypeOpaque || c.Labels[store.LabelManagedBy] != store.ManagedByValue {
				t.Errorf("Secret %s: type %q labels %v", c.Name, c.Type, c.Labels)
			}
			if len(c.OwnerReferences) != 1 || c.OwnerReferences[0].UID != owner.UID {
				t.Errorf("Secret %s: ownerReferences %v, want the ConfigMap", c.Name, c.OwnerReferences)
			}
		}
		if h := manifest(t, super, "big").Annotations[store.AnnotationHolder]; h != "pod-a" {
			t.Errorf("holder %q, want pod-a", h)
		}

		t.Run("a later save deletes the old chunks", func(t *testing.T) {
			next := blob(2, 1<<20)
			if err := s.Save(ctx, next); err != nil {
				t.Fatal(err)
			}
			mustLoad(t, s, next)
			now := chunks(t, super, "big")
			for _, old := range items {
				if _, err := super.CoreV1().Secrets(ns).Get(ctx, old.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("old chunk %s: %v, want NotFound", old.Name, err)
				}
				if slices.Contains(names(now), old.Name) {
					t.Errorf("old chunk %s still listed", old.Name)
				}
			}
			if len(now) != 2 {
				t.Errorf("chunks %v, want 2 for 1 MiB", names(now))
			}
			if _, err := super.CoreV1().Secrets(ns).Get(ctx, foreign.Name, metav1.GetOptions{}); err != nil {
				t.Errorf("the unmanaged lookalike Secret: %v", err)
			}
		})
	})

	t.Run("two writers race: one commit per generation, the loser gets ErrConflict", func(t *testing.T) {
		a := store.NewSecret(super, ns, "race", store.Options{Holder: "pod-a"})
		b := store.NewSecret(super, ns, "race", store.Options{Holder: "pod-b"})
		lastGen := 0
		wins := map[string]int{}
		for round := range 6 {
			if round > 0 {
				// Both writers have seen the current checkpoint (as a leader that just
				// loaded it would); the apiserver's precondition alone decides.
				for _, s := range []*store.Secret{a, b} {
					if _, err := s.Load(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			blobs := [2][]byte{blob(uint64(100+2*round), 1500<<10), blob(uint64(101+2*round), 1500<<10)}
			var errs [2]error
			var start, done sync.WaitGroup
			start.Add(1)
			for i, s := range []*store.Secret{a, b} {
				done.Add(1)
				go func() {
					defer done.Done()
					start.Wait()
					errs[i] = s.Save(ctx, blobs[i])
				}()
			}
			start.Done()
			done.Wait()
			var winner int
			switch {
			case errs[0] == nil && errors.Is(errs[1], store.ErrConflict):
				winner = 0
			case errs[1] == nil && errors.Is(errs[0], store.ErrConflict):
				winner = 1
			default:
				t.Fatalf("round %d: pod-a: %v, pod-b: %v; want exactly one commit and one ErrConflict", round, errs[0], errs[1])
			}
			holder := []string{"pod-a", "pod-b"}[winner]
			wins[holder]++
			mustLoad(t, store.NewSecret(super, ns, "race", store.Options{}), blobs[winner])
			m := manifest(t, super, "race")
			if h := m.Annotations[store.AnnotationHolder]; h != holder {
				t.Errorf("round %d: manifest holder %q, want the winner %q", round, h, holder)
			}
			gen, err := strconv.Atoi(m.Labels[store.LabelGeneration])
			if err != nil || gen <= lastGen {
				t.Fatalf("round %d: generation %q after %d; want a new, larger one", round, m.Labels[store.LabelGeneration], lastGen)
			}
			lastGen = gen
			// The loser cleaned up: only the committed generation's chunks exist.
			for _, c := range chunks(t, super, "race") {
				if c.Labels[store.LabelGeneration] != strconv.Itoa(gen) {
					t.Errorf("round %d: chunk %s of generation %s left besides committed generation %d", round, c.Name, c.Labels[store.LabelGeneration], gen)
				}
			}
		}
		t.Logf("wins: %v, last generation %d", wins, lastGen)
	})

	t.Run("the manifest precondition fences a writer whose chunks are written", func(t *testing.T) {
		b0 := store.NewSecret(super, ns, "fence", store.Options{Holder: "pod-b"})
		if err := b0.Save(ctx, blob(10, 100)); err != nil {
			t.Fatal(err)
		}
		a := store.NewSecret(super, ns, "fence", store.Options{Holder: "pod-a"})
		winner := blob(11, 1500<<10)
		var aErr error
		var mode atomic.Int32
		mode.Store(3)
		// pod-b's manifest PUT is sent only after pod-a committed: the apiserver refuses it.
		b := store.NewSecret(clientWithFaults(t, env.Super.RESTConfig, "/namespaces/"+ns+"/secrets/fence", &mode, func() {
			aErr = a.Save(ctx, winner)
		}), ns, "fence", store.Options{Holder: "pod-b"})
		mustLoad(t, b, blob(10, 100))
		err := b.Save(ctx, blob(12, 1500<<10))
		if aErr != nil {
			t.Fatalf("pod-a's Save: %v", aErr)
		}
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("pod-b's Save = %v, want ErrConflict", err)
		}
		mustLoad(t, store.NewSecret(super, ns, "fence", store.Options{}), winner)
		gen := manifest(t, super, "fence").Labels[store.LabelGeneration]
		for _, c := range chunks(t, super, "fence") {
			if c.Labels[store.LabelGeneration] != gen {
				t.Errorf("chunk %s of generation %s left besides committed generation %s", c.Name, c.Labels[store.LabelGeneration], gen)
			}
		}
	})

	t.Run("Load during Saves returns a whole blob, never a mix or ErrCorrupt", func(t *testing.T) {
		w := store.NewSecret(super, ns, "busy", store.Options{Holder: "pod-a"})
		r := store.NewSecret(super, ns, "busy", store.Options{Holder: "reader"})
		saved := [][]byte{blob(20, 1<<20)}
		if err := w.Save(ctx, saved[0]); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		done := make(chan struct{})
		loads := 0
		var loadErr error
		go func() {
			defer close(done)
			for {
				got, err := r.Load(ctx)
				mu.Lock()
				n := len(saved)
				ok := slices.ContainsFunc(saved, func(b []byte) bool { return bytes.Equal(b, got) })
				mu.Unlock()
				if err != nil {
					loadErr = err
					return
				}
				if !ok {
					loadErr = errors.New("Load returned a blob that was never saved")
					return
				}
				loads++
				if n > 6 {
					return
				}
			}
		}()
		for i := range 6 {
			b := blob(uint64(21+i), 1<<20)
			mu.Lock()
			saved = append(saved, b) // before Save: a Load may see it as soon as it commits
			mu.Unlock()
			if err := w.Save(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
		<-done
		if loadErr != nil {
			t.Fatalf("after %d good loads: %v", loads, loadErr)
		}
		t.Logf("%d concurrent loads", loads)
	})

	t.Run("a save whose manifest update failed leaves the previous blob", func(t *testing.T) {
		prev := blob(3, 1200<<10)
		if err := store.NewSecret(super, ns, "failing", store.Options{Holder: "pod-a"}).Save(ctx, prev); err != nil {
			t.Fatal(err)
		}
		var mode atomic.Int32 // 1: refuse the manifest PUT; 2: forward it and lose the response
		s := store.NewSecret(clientWithFaults(t, env.Super.RESTConfig, "/namespaces/"+ns+"/secrets/failing", &mode, nil), ns, "failing", store.Options{Holder: "pod-a"})
		mustLoad(t, s, prev)
		before := names(chunks(t, super, "failing"))

		mode.Store(1)
		err := s.Save(ctx, blob(4, 2<<20))
		if err == nil || errors.Is(err, store.ErrConflict) {
			t.Fatalf("Save with a failing manifest update = %v, want a non-conflict error", err)
		}
		mustLoad(t, store.NewSecret(super, ns, "failing", store.Options{}), prev)
		if orphans := len(chunks(t, super, "failing")) - len(before); orphans <= 0 {
			t.Fatalf("the failed Save left no chunks behind; the test does not exercise orphans")
		}

		// The manifest write reaches the apiserver but its response is lost: the new blob is
		// committed, and the same holder's next save is not refused.
		mode.Store(2)
		lost := blob(5, 1<<20)
		if err := s.Save(ctx, lost); err == nil {
			t.Fatal("Save with a lost response succeeded")
		}
		mustLoad(t, store.NewSecret(super, ns, "failing", store.Options{}), lost)

		mode.Store(0)
		final := blob(6, 500<<10)
		if err := s.Save(ctx, final); err != nil {
			t.Fatalf("Save after the lost response: %v", err)
		}
		mustLoad(t, store.NewSecret(super, ns, "failing", store.Options{}), final)
		gen := manifest(t, super, "failing").Labels[store.LabelGeneration]
		for _, c := range chunks(t, super, "failing") {
			if c.Labels[store.LabelGeneration] != gen {
				t.Errorf("chunk %s of generation %s not swept (committed: %s)", c.Name, c.Labels[store.LabelGeneration], gen)
			}
		}
	})
}

// clientWithFaults returns a clientset for cfg whose PUTs to path (suffix match) fail as
// *mode says: 1 = refused before reaching the apiserver, 2 = sent, then the response is lost,
// 3 = sent after before() returned.
func clientWithFaults(t *testing.T, cfg *rest.Config, path string, mode *atomic.Int32, before func()) kubernetes.Interface {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodPut || !strings.HasSuffix(req.URL.Path, path) {
				return rt.RoundTrip(req)
			}
			switch mode.Load() {
			case 1:
				return nil, errors.New("injected: connection refused")
			case 2:
				resp, err := rt.RoundTrip(req)
				if err == nil {
					resp.Body.Close()
				}
				return nil, errors.New("injected: connection reset after the request was sent")
			case 3:
				before()
			}
			return rt.RoundTrip(req)
		})
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
