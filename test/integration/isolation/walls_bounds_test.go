package isolation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// boundsWalls returns the attacks on the syncer's memory per tenant.
func (s *suite) boundsWalls() []attackCase {
	return []attackCase{
		{"bounds-configmap-keys-over-size-cap", s.attackWholeObjectSize("keys")},
		{"bounds-configmap-metadata-over-size-cap", s.attackWholeObjectSize("metadata")},
		{"bounds-secret-keys-over-size-cap", s.attackWholeObjectSize("secret-keys")},
		{"bounds-many-large-configmaps-syncer-heap", s.attackSyncerHeap},
		{"bounds-other-kinds-syncer-memory", s.attackMemoryOtherKinds},
		{"bounds-cluster-kinds-syncer-memory", s.attackMemoryClusterKinds},
		{"bounds-forged-event-copies-syncer-memory", s.attackForgedEventCopies},
		{"bounds-many-tiny-objects-suspend-tenant", s.attackManyTinyObjects},
		{"bounds-repointed-api-not-watched", s.attackRepointedAPI},
	}
}

// attackWholeObjectSize: an object whose values are empty but whose keys (or labels and
// annotations) make it bigger than limits.maxObjectBytes (512Ki by default): refused with
// rule objectSize, no super copy. A cap that counts values only lets it through.
func (s *suite) attackWholeObjectSize(variant string) func(t *testing.T) {
	return func(t *testing.T) {
		name := "whole-" + variant
		kind := "ConfigMap"
		if strings.HasPrefix(variant, "secret") {
			kind = "Secret"
		}
		// About 700 KB of keys: 2800 keys of 250 characters (the longest a key may be is 253),
		// all values empty.
		keys := map[string]string{}
		for i := range 2800 {
			k := fmt.Sprintf("k%05d.", i)
			keys[k+strings.Repeat("x", 250-len(k))] = ""
		}
		s.run(t, attack{
			kind: kind, ns: aNS, names: []string{name}, rules: []string{string(policy.RuleObjectSize)},
			create: func(ctx context.Context) error {
				meta := metav1.ObjectMeta{Name: name}
				var err error
				switch variant {
				case "keys":
					_, err = s.a.Client.CoreV1().ConfigMaps(aNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: keys}, metav1.CreateOptions{})
				case "secret-keys":
					data := map[string][]byte{}
					for k := range keys {
						data[k] = nil
					}
					_, err = s.a.Client.CoreV1().Secrets(aNS).Create(ctx, &corev1.Secret{ObjectMeta: meta, Data: data}, metav1.CreateOptions{})
				case "metadata":
					// 250 KB of annotations (the apiserver allows 256 KiB) and about 370 KB of
					// labels (3000 labels of 63-character keys and values), one small value.
					meta.Annotations = map[string]string{"note": strings.Repeat("n", 250*1000)}
					meta.Labels = map[string]string{}
					for i := range 3000 {
						k := fmt.Sprintf("l%05d-", i)
						meta.Labels[k+strings.Repeat("l", 63-len(k))] = strings.Repeat("v", 63)
					}
					_, err = s.a.Client.CoreV1().ConfigMaps(aNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{})
				}
				return err
			},
			escaped: func(ctx context.Context) error {
				var err error
				if kind == "Secret" {
					_, err = s.super.CoreV1().Secrets(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
				} else {
					_, err = s.super.CoreV1().ConfigMaps(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
				}
				if err == nil {
					return fmt.Errorf("%s %s (over 512Ki in keys or metadata) was copied to %s", kind, name, s.aSuperNS)
				}
				return nil
			},
		})
		// The next subtests measure memory: the big object goes.
		ctx := context.Background()
		if kind == "Secret" {
			_ = s.a.Client.CoreV1().Secrets(aNS).Delete(ctx, name, metav1.DeleteOptions{})
		} else {
			_ = s.a.Client.CoreV1().ConfigMaps(aNS).Delete(ctx, name, metav1.DeleteOptions{})
		}
	}
}

// Shape of the heap attack: fillCount ConfigMaps of fillBytes of data each (each under the
// object-size cap and the apiserver's request limit), about 100 MB in all.
const (
	fillCount  = 250
	fillBytes  = 400 * 1000
	fillPrefix = "fill-"
	// heapSlack is what the syncer's live heap may grow by beyond twice the tenant's
	// limits.maxCachedBytes (its tenant cache and the super copies of what it holds): stubs
	// of the objects kept out, queue items, Events, refusal records.
	heapSlack = 24 << 20
)

// heapSettle is how long attackSyncerHeap samples the live heap for a sample within its
// bound.
const heapSettle = 30 * time.Second

// writeHeapProfile writes the process's heap profile (as of the last collection) to path.
func writeHeapProfile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Logf("no heap profile: %v", err)
		return
	}
	f, err := os.Create(path)
	if err != nil {
		t.Logf("no heap profile: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Logf("no heap profile: %v", err)
		return
	}
	t.Logf("heap profile written to %s", path)
}

// liveHeap returns the process's live heap after a full collection. The syncer runs in this
// process (itest.StartSyncer), so its caches are in it.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// attackSyncerHeap: tenant A creates about 100 MB of ConfigMaps, each under the object-size
// cap. The syncer's live heap must grow by at most twice A's limits.maxCachedBytes plus
// heapSlack (the objects beyond the budget are kept out of its caches), A gets the refusal
// signal (rule cachedBytes) on the objects kept out, B's new Pod still syncs to Running
// meanwhile, and when A deletes objects the ones kept out are synced.
func (s *suite) attackSyncerHeap(t *testing.T) {
	ctx := context.Background()
	budget := policy.Builtin().Limits.MaxCachedBytes.Value()
	bound := uint64(2*budget + heapSlack)
	var names []string
	for i := range fillCount {
		names = append(names, fmt.Sprintf("%s%03d", fillPrefix, i))
	}
	payload := strings.Repeat("y", fillBytes)
	// The super ConfigMaps are listed by metadata only: 100 MB lists every poll would load
	// the super apiserver and this process more than the attack does.
	mc, err := metadata.NewForConfig(s.env.Super.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	superCopies := func(ctx context.Context) (map[string]bool, error) {
		return superNamesWithPrefix(ctx, mc, "configmaps", s.aSuperNS, fillPrefix)
	}
	defer func() {
		// Clean up for the subtests after this one.
		for _, n := range names {
			_ = s.a.Client.CoreV1().ConfigMaps(aNS).Delete(ctx, n, metav1.DeleteOptions{})
		}
		itest.Eventually(t, 2*time.Minute, "A's fill ConfigMaps gone from the super cluster", func(ctx context.Context) error {
			got, err := superCopies(ctx)
			if err != nil {
				return err
			}
			if len(got) > 0 {
				return itest.Errorf("%d left", len(got))
			}
			return nil
		})
	}()

	h0 := liveHeap()
	c0 := denials(s.a.Name, []string{"ConfigMap"}, []string{"cachedBytes"})
	var heapAfter uint64
	s.run(t, attack{
		kind: "ConfigMap", ns: aNS, names: names, anyOf: true, rules: []string{"cachedBytes"},
		create: func(ctx context.Context) error {
			for _, n := range names {
				if _, err := s.a.Client.CoreV1().ConfigMaps(aNS).Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: n}, Data: map[string]string{"blob": payload},
				}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					return err
				}
			}
			return nil
		},
		escaped: func(ctx context.Context) error {
			got, err := superCopies(ctx)
			if err != nil {
				return nil
			}
			if held := int64(len(got)) * fillBytes; held > budget {
				return fmt.Errorf("%d ConfigMaps of %d bytes (%d MB) were copied to %s, more than limits.maxCachedBytes (%d MB)",
					len(got), fillBytes, held>>20, s.aSuperNS, budget>>20)
			}
			return nil
		},
	})

	// Every fill ConfigMap is either synced or refused: the syncer has seen them all.
	itest.Eventually(t, 3*time.Minute, "every fill ConfigMap synced or refused", func(ctx context.Context) error {
		got, err := superCopies(ctx)
		if err != nil {
			return err
		}
		refused := denials(s.a.Name, []string{"ConfigMap"}, []string{"cachedBytes"}) - c0
		if len(got)+int(refused) < fillCount {
			return itest.Errorf("%d synced + %v refused < %d", len(got), refused, fillCount)
		}
		return nil
	})

	// Tenant B is unaffected: a new Pod of B syncs to Running.
	s.bPodRuns(t, "web-during-fill")

	// What the syncer keeps: the live heap once nothing is in flight. A sample taken while a
	// list or a burst of watch events is being decoded (a loaded machine delays them) holds
	// more for a moment, so the heap is sampled for up to heapSettle and the lowest sample is
	// judged; the first sample over the bound leaves a heap profile beside the syncer log.
	var samples []string
	var profiled bool
	heapAfter = liveHeap()
	for start := time.Now(); ; {
		samples = append(samples, fmt.Sprintf("%d", (int64(heapAfter)-int64(h0))>>20))
		if int64(heapAfter)-int64(h0) <= int64(bound) || time.Since(start) > heapSettle {
			break
		}
		if !profiled {
			profiled = true
			writeHeapProfile(t, filepath.Join(os.TempDir(), "vc-syncer-test-logs", "TestIsolation-heap-over-bound.prof"))
		}
		time.Sleep(2 * time.Second)
		heapAfter = min(heapAfter, liveHeap())
	}
	growth := int64(heapAfter) - int64(h0)
	t.Logf("syncer live heap: %d MB before, %d MB after %d MB of ConfigMaps (growth %d MB; samples of the growth, MB: %s; bound %d MB = 2 × limits.maxCachedBytes %d MB + %d MB)",
		h0>>20, heapAfter>>20, (fillCount*fillBytes)>>20, growth>>20, strings.Join(samples, " "), bound>>20, budget>>20, heapSlack>>20)
	if path := os.Getenv("VC_HEAP_PROFILE"); path != "" {
		writeHeapProfile(t, path)
	}
	if growth > int64(bound) {
		t.Errorf("the syncer's live heap grew by %d MB for tenant A's %d MB of ConfigMaps and stayed so for %s, more than %d MB (2 × limits.maxCachedBytes + %d MB): one tenant can exhaust the syncer's memory",
			growth>>20, (fillCount*fillBytes)>>20, heapSettle, bound>>20, heapSlack>>20)
	}

	// The provider sees it: A's Tenant has WithinMemoryBound=False.
	itest.Eventually(t, maxWait, "tenant A's Tenant has WithinMemoryBound=False", func(ctx context.Context) error {
		var tn tenancyv1alpha1.Tenant
		if err := s.c.Get(ctx, client.ObjectKey{Name: s.a.Name}, &tn); err != nil {
			return err
		}
		c := meta.FindStatusCondition(tn.Status.Conditions, tenancyv1alpha1.ConditionWithinMemoryBound)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "MemoryBoundReached" {
			return itest.Errorf("condition %+v", c)
		}
		return nil
	})

	// Room again: A deletes the synced ones; the ones kept out are synced.
	synced, err := superCopies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(synced) == fillCount {
		return // nothing was kept out (the failure is reported above)
	}
	deleteAndWaitReadmitted(t, "ConfigMaps", synced, fillCount, func(ctx context.Context, n string) error {
		return s.a.Client.CoreV1().ConfigMaps(aNS).Delete(ctx, n, metav1.DeleteOptions{})
	}, superCopies)
}

// deleteAndWaitReadmitted deletes the tenant objects in synced (del) and waits until one of the
// total objects that were kept out has a super copy (superCopies lists the super copies' names):
// deleting objects held in the syncer's caches makes room, and objects held out are read again
// and synced. what names the objects in messages.
func deleteAndWaitReadmitted(t *testing.T, what string, synced map[string]bool, total int,
	del func(ctx context.Context, name string) error, superCopies func(ctx context.Context) (map[string]bool, error)) {
	t.Helper()
	for n := range synced {
		if err := del(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	itest.Eventually(t, 2*time.Minute, what+" kept out are synced once others are deleted", func(ctx context.Context) error {
		got, err := superCopies(ctx)
		if err != nil {
			return err
		}
		for n := range got {
			if !synced[n] {
				return nil
			}
		}
		return itest.Errorf("none of the %d %s kept out has a super copy", total-len(synced), what)
	})
}

// bPodRuns creates Pod name in tenant B (an attack on tenant A must leave B's sync alone) and
// waits until its super copy is Running; the Pod is deleted when the test ends.
func (s *suite) bPodRuns(t *testing.T, name string) {
	t.Helper()
	ctx := t.Context()
	p := basePod(name)
	if _, err := s.b.Client.CoreV1().Pods(bNS).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.b.Client.CoreV1().Pods(bNS).Delete(context.Background(), p.Name, metav1.DeleteOptions{}) })
	itest.Eventually(t, 2*time.Minute, "B's new Pod running in the super cluster", func(ctx context.Context) error {
		sp, err := s.super.CoreV1().Pods(s.bSuperNS).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sp.Status.Phase != corev1.PodRunning {
			return itest.Errorf("phase %s", sp.Status.Phase)
		}
		return nil
	})
}

// superNamesWithPrefix lists, by metadata only, the names of the super objects of core resource
// in super namespace ns that start with prefix.
func superNamesWithPrefix(ctx context.Context, mc metadata.Interface, resource, ns, prefix string) (map[string]bool, error) {
	l, err := mc.Resource(corev1.SchemeGroupVersion.WithResource(resource)).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, o := range l.Items {
		if strings.HasPrefix(o.Name, prefix) {
			out[o.Name] = true
		}
	}
	return out, nil
}
