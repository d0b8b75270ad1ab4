package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

const (
	testNS   = "vc-syncer-system"
	testName = "vc-syncer-checkpoint"
)

var secretsGVR = corev1.SchemeGroupVersion.WithResource("secrets")

// secretMarker is embedded in every test blob; no error message may contain it.
const secretMarker = "TOPSECRET-tenant-token"

// blob returns n bytes of incompressible data that start with secretMarker.
func blob(seed uint64, n int) []byte {
	b := randomBytes(seed, n)
	copy(b, secretMarker)
	return b
}

// checkNoLeak fails if err's message contains checkpoint content.
func checkNoLeak(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), secretMarker) {
		t.Errorf("error message leaks checkpoint content: %v", err)
	}
}

// newFakeClient returns a fake clientset that behaves like an apiserver for what the store
// relies on: Create assigns a UID and a resourceVersion, and Update fails with Conflict unless
// the object carries the stored resourceVersion (optimistic concurrency), then bumps it.
// The fake's tracker alone does neither.
func newFakeClient(objs ...runtime.Object) *fake.Clientset {
	c := fake.NewClientset(objs...)
	var rv atomic.Int64
	rv.Store(100)
	c.PrependReactor("update", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.UpdateAction).GetObject().(*corev1.Secret)
		cur, err := c.Tracker().Get(secretsGVR, obj.Namespace, obj.Name)
		if err != nil {
			return true, nil, err
		}
		if cur.(*corev1.Secret).ResourceVersion != obj.ResourceVersion {
			return true, nil, apierrors.NewConflict(secretsGVR.GroupResource(), obj.Name, errors.New("the object has been modified"))
		}
		obj.ResourceVersion = strconv.FormatInt(rv.Add(1), 10)
		return false, nil, nil
	})
	c.PrependReactor("create", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject().(*corev1.Secret)
		n := rv.Add(1)
		obj.ResourceVersion = strconv.FormatInt(n, 10)
		obj.UID = types.UID("uid-" + strconv.FormatInt(n, 10))
		return false, nil, nil
	})
	return c
}

// listSecrets returns all Secrets in testNS by name.
func listSecrets(t *testing.T, c *fake.Clientset) map[string]*corev1.Secret {
	t.Helper()
	list, err := c.CoreV1().Secrets(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Secret{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// chunkNames returns the sorted names of the chunk Secrets in m.
func chunkNames(m map[string]*corev1.Secret) []string {
	var out []string
	for n, s := range m {
		if s.Labels[LabelRole] == RoleChunk {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// mustSave and mustLoad fail the test on error.
func mustSave(t *testing.T, s *Secret, data []byte) {
	t.Helper()
	if err := s.Save(context.Background(), data); err != nil {
		checkNoLeak(t, err)
		t.Fatalf("Save: %v", err)
	}
}

func mustLoad(t *testing.T, s *Secret, want []byte) {
	t.Helper()
	got, err := s.Load(context.Background())
	checkNoLeak(t, err)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Load returned %d bytes, want the %d bytes saved (equal prefix: %v)", len(got), len(want), bytes.HasPrefix(want, got))
	}
}

func TestSecretRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient()
	owner := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "vc-syncer", UID: "dep-uid"}
	s := NewSecret(c, testNS, testName, Options{Holder: "pod-a", Owner: owner})
	s.chunkSize = 4096
	if got, want := s.String(), "secret:"+testNS+"/"+testName; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, err := s.Load(ctx); got != nil || err != nil {
		t.Fatalf("Load before any Save = (%d bytes, %v), want (nil, nil)", len(got), err)
	}

	first := blob(1, 20000) // 5 chunks of 4096 bytes
	mustSave(t, s, first)
	mustLoad(t, s, first)
	objs := listSecrets(t, c)
	wantChunks := []string{testName + "-g1-0", testName + "-g1-1", testName + "-g1-2", testName + "-g1-3", testName + "-g1-4"}
	if got := chunkNames(objs); !slices.Equal(got, wantChunks) {
		t.Fatalf("chunks = %v, want %v", got, wantChunks)
	}
	total := 0
	for _, n := range append(wantChunks, testName) {
		o := objs[n]
		if o.Type != corev1.SecretTypeOpaque || o.Labels[LabelManagedBy] != ManagedByValue || o.Labels[LabelID] != testName {
			t.Errorf("%s: type %q, labels %v; want Opaque and the store's labels", n, o.Type, o.Labels)
		}
		if len(o.OwnerReferences) != 1 || o.OwnerReferences[0].UID != owner.UID {
			t.Errorf("%s: ownerReferences %v, want the Deployment", n, o.OwnerReferences)
		}
		if n == testName {
			continue
		}
		if o.Immutable == nil || !*o.Immutable {
			t.Errorf("%s is not immutable", n)
		}
		if len(o.Data[chunkKey]) > 4096 {
			t.Errorf("%s holds %d bytes, more than the chunk size", n, len(o.Data[chunkKey]))
		}
		total += len(o.Data[chunkKey])
	}
	if total <= len(first) {
		t.Errorf("chunks hold %d bytes in total; incompressible data of %d bytes cannot be smaller", total, len(first))
	}
	if h := objs[testName].Annotations[AnnotationHolder]; h != "pod-a" {
		t.Errorf("holder annotation %q, want pod-a", h)
	}
	if bytes.Contains(objs[testName].Data[manifestKey], []byte(secretMarker)) {
		t.Error("the manifest contains checkpoint content")
	}

	// A second save replaces the first and deletes its chunks.
	second := blob(2, 9000)
	mustSave(t, s, second)
	mustLoad(t, s, second)
	want := []string{testName + "-g2-0", testName + "-g2-1", testName + "-g2-2"}
	if got := chunkNames(listSecrets(t, c)); !slices.Equal(got, want) {
		t.Fatalf("after the second save chunks = %v, want only %v", got, want)
	}

	// Empty blobs round-trip too (one chunk of gzip framing).
	mustSave(t, s, []byte{})
	mustLoad(t, s, []byte{})
}

func TestSecretDefaultChunkSize(t *testing.T) {
	c := newFakeClient()
	s := NewSecret(c, testNS, testName, Options{})
	data := blob(3, 3<<20)
	mustSave(t, s, data)
	mustLoad(t, s, data)
	objs := listSecrets(t, c)
	names := chunkNames(objs)
	if len(names) != 4 { // 3 MiB + gzip framing over 900 KiB chunks
		t.Fatalf("chunks = %v, want 4", names)
	}
	for _, n := range names {
		if l := len(objs[n].Data[chunkKey]); l > ChunkBytes {
			t.Errorf("%s holds %d bytes > %d", n, l, ChunkBytes)
		}
	}
}

// TestSecretCrashBeforeManifest kills a Save after its chunks exist and before the manifest
// update: the previous checkpoint still loads, and the next process's first Save skips the
// orphans' generation and deletes them.
func TestSecretCrashBeforeManifest(t *testing.T) {
	c := newFakeClient()
	s := NewSecret(c, testNS, testName, Options{Holder: "pod-a"})
	s.chunkSize = 1024
	old := blob(1, 3000)
	mustSave(t, s, old)
	crash := errors.New("killed")
	s.afterChunks = func() error { return crash }
	if err := s.Save(context.Background(), blob(2, 5000)); !errors.Is(err, crash) {
		t.Fatalf("Save with crash hook = %v, want %v", err, crash)
	}
	if got := chunkNames(listSecrets(t, c)); !slices.Contains(got, testName+"-g2-0") {
		t.Fatalf("the crashed Save's chunks should be left behind, have %v", got)
	}
	mustLoad(t, s, old)

	// Restarted process.
	s2 := NewSecret(c, testNS, testName, Options{Holder: "pod-a"})
	s2.chunkSize = 1024
	mustLoad(t, s2, old)
	next := blob(3, 1500)
	mustSave(t, s2, next)
	mustLoad(t, s2, next)
	if got, want := chunkNames(listSecrets(t, c)), []string{testName + "-g3-0", testName + "-g3-1"}; !slices.Equal(got, want) {
		t.Fatalf("after the next save chunks = %v, want %v (orphans of generation 2 swept)", got, want)
	}
}

func TestSecretCorrupt(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(t *testing.T, c *fake.Clientset){
		"missing chunk": func(t *testing.T, c *fake.Clientset) {
			if err := c.Tracker().Delete(secretsGVR, testNS, testName+"-g1-1"); err != nil {
				t.Fatal(err)
			}
		},
		"flipped chunk byte": func(t *testing.T, c *fake.Clientset) {
			mutate(t, c, testName+"-g1-0", func(s *corev1.Secret) { s.Data[chunkKey][10] ^= 1 })
		},
		"truncated chunk": func(t *testing.T, c *fake.Clientset) {
			mutate(t, c, testName+"-g1-2", func(s *corev1.Secret) { s.Data[chunkKey] = s.Data[chunkKey][:5] })
		},
		"chunk of another generation": func(t *testing.T, c *fake.Clientset) {
			mutate(t, c, testName+"-g1-0", func(s *corev1.Secret) { s.Labels[LabelGeneration] = "7" })
		},
		"chunk recreated with another UID": func(t *testing.T, c *fake.Clientset) {
			mutate(t, c, testName+"-g1-0", func(s *corev1.Secret) { s.UID = "other" })
		},
		"chunk not managed by the store": func(t *testing.T, c *fake.Clientset) {
			mutate(t, c, testName+"-g1-0", func(s *corev1.Secret) { delete(s.Labels, LabelManagedBy) })
		},
		"unreadable manifest": func(t *testing.T, c *fake.Clientset) {
			mutate(t, c, testName, func(s *corev1.Secret) { s.Data[manifestKey] = []byte("{not json") })
		},
		"manifest total checksum": func(t *testing.T, c *fake.Clientset) {
			editManifest(t, c, func(m *manifest) { m.SHA256 = strings.Repeat("0", 64) })
		},
		"manifest size": func(t *testing.T, c *fake.Clientset) {
			editManifest(t, c, func(m *manifest) { m.Size-- })
		},
		"manifest names a foreign Secret": func(t *testing.T, c *fake.Clientset) {
			editManifest(t, c, func(m *manifest) { m.Chunks[0].Name = "kubeconfig" })
		},
		"manifest drops a chunk": func(t *testing.T, c *fake.Clientset) {
			editManifest(t, c, func(m *manifest) { m.Chunks = m.Chunks[:len(m.Chunks)-1] })
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			c := newFakeClient()
			s := NewSecret(c, testNS, testName, Options{})
			s.chunkSize = 1024
			mustSave(t, s, blob(1, 3000)) // 3 chunks
			damage(t, c)
			got, err := s.Load(ctx)
			checkNoLeak(t, err)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load = (%d bytes, %v), want ErrCorrupt", len(got), err)
			}
			// The next Save repairs it.
			want := blob(2, 2000)
			mustSave(t, s, want)
			mustLoad(t, s, want)
		})
	}
}

// mutate changes a stored Secret directly in the fake's tracker (as a bit flip or another
// actor would), bypassing reactors.
func mutate(t *testing.T, c *fake.Clientset, name string, f func(*corev1.Secret)) {
	t.Helper()
	o, err := c.Tracker().Get(secretsGVR, testNS, name)
	if err != nil {
		t.Fatal(err)
	}
	s := o.(*corev1.Secret).DeepCopy()
	f(s)
	if err := c.Tracker().Update(secretsGVR, s, testNS); err != nil {
		t.Fatal(err)
	}
}

func editManifest(t *testing.T, c *fake.Clientset, f func(*manifest)) {
	t.Helper()
	mutate(t, c, testName, func(s *corev1.Secret) {
		m, err := parseManifest(s.Data[manifestKey])
		if err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		s.Data[manifestKey] = b
	})
}

// TestSecretLoadRetriesWhenManifestMovesOn makes a chunk vanish while the manifest changes
// (a concurrent Save committed and swept): Load re-reads instead of reporting corruption.
func TestSecretLoadRetriesWhenManifestMovesOn(t *testing.T) {
	c := newFakeClient()
	s := NewSecret(c, testNS, testName, Options{})
	s.chunkSize = 1024
	data := blob(1, 3000)
	mustSave(t, s, data)
	var hidden atomic.Int32
	c.PrependReactor("get", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.GetAction).GetName() != testName+"-g1-1" || hidden.Add(1) > 1 {
			return false, nil, nil
		}
		// The manifest moves on (tracker access does not take the fake's lock).
		o, err := c.Tracker().Get(secretsGVR, testNS, testName)
		if err != nil {
			return true, nil, err
		}
		m := o.(*corev1.Secret).DeepCopy()
		m.ResourceVersion += "0"
		if err := c.Tracker().Update(secretsGVR, m, testNS); err != nil {
			return true, nil, err
		}
		return true, nil, apierrors.NewNotFound(secretsGVR.GroupResource(), testName+"-g1-1")
	})
	mustLoad(t, s, data)
	if hidden.Load() < 2 {
		t.Fatalf("the chunk was read %d times, want a retry", hidden.Load())
	}
}

// TestSecretConflict covers the fencing rules: a manifest committed by another holder since
// this store last read it, and two writers racing for the same generation.
func TestSecretConflict(t *testing.T) {
	ctx := context.Background()

	t.Run("manifest changed by another holder since Load", func(t *testing.T) {
		c := newFakeClient()
		a := NewSecret(c, testNS, testName, Options{Holder: "pod-a"})
		b := NewSecret(c, testNS, testName, Options{Holder: "pod-b"})
		mustSave(t, a, blob(1, 100))
		mustLoad(t, b, blob(1, 100))
		mustSave(t, a, blob(2, 100))
		err := b.Save(ctx, blob(3, 100))
		checkNoLeak(t, err)
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("stale writer's Save = %v, want ErrConflict", err)
		}
		mustLoad(t, a, blob(2, 100))
		if got := chunkNames(listSecrets(t, c)); len(got) != 1 || !strings.Contains(got[0], "-g2-") {
			t.Errorf("chunks = %v, want generation 2 only", got)
		}
		// The refused writer has now seen the current version and may commit.
		mustSave(t, b, blob(4, 100))
		mustLoad(t, a, blob(4, 100))
	})

	t.Run("own commit with a lost response is not a conflict", func(t *testing.T) {
		c := newFakeClient()
		a1 := NewSecret(c, testNS, testName, Options{Holder: "pod-a"})
		a2 := NewSecret(c, testNS, testName, Options{Holder: "pod-a"})
		mustSave(t, a1, blob(1, 100))
		mustLoad(t, a2, blob(1, 100))
		mustSave(t, a1, blob(2, 100))
		mustSave(t, a2, blob(3, 100))
		mustLoad(t, a1, blob(3, 100))
	})

	// b creates its chunks, then a commits before b's manifest update.
	race := func(t *testing.T, aSavedBefore bool) {
		c := newFakeClient()
		a := NewSecret(c, testNS, testName, Options{Holder: "pod-a"})
		b := NewSecret(c, testNS, testName, Options{Holder: "pod-b"})
		a.chunkSize, b.chunkSize = 1024, 1024
		mustSave(t, b, blob(1, 100))
		if aSavedBefore {
			mustLoad(t, a, blob(1, 100))
			mustSave(t, a, blob(2, 100))
			mustLoad(t, b, blob(2, 100))
		}
		var aErr error
		b.afterChunks = func() error {
			aErr = a.Save(ctx, blob(10, 2500))
			return nil
		}
		bErr := b.Save(ctx, blob(11, 2500))
		checkNoLeak(t, aErr)
		checkNoLeak(t, bErr)
		var winner []byte
		switch {
		case aErr == nil && errors.Is(bErr, ErrConflict):
			winner = blob(10, 2500)
		case bErr == nil && errors.Is(aErr, ErrConflict):
			winner = blob(11, 2500)
		default:
			t.Fatalf("a: %v, b: %v; want exactly one commit and one ErrConflict", aErr, bErr)
		}
		mustLoad(t, a, winner)
		// Only the winner's chunks remain.
		objs := listSecrets(t, c)
		m, err := parseManifest(objs[testName].Data[manifestKey])
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, r := range m.Chunks {
			want = append(want, r.Name)
		}
		slices.Sort(want)
		if got := chunkNames(objs); !slices.Equal(got, want) {
			t.Errorf("chunks = %v, want the committed generation's %v", got, want)
		}
	}
	t.Run("race, the later writer lists and takes a newer generation", func(t *testing.T) { race(t, false) })
	t.Run("race for the same generation", func(t *testing.T) { race(t, true) })

	t.Run("manifest update conflict", func(t *testing.T) {
		c := newFakeClient()
		s := NewSecret(c, testNS, testName, Options{Holder: "pod-a"})
		s.chunkSize = 1024
		mustSave(t, s, blob(1, 100))
		c.PrependReactor("update", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewConflict(secretsGVR.GroupResource(), testName, errors.New("injected"))
		})
		if err := s.Save(ctx, blob(2, 3000)); !errors.Is(err, ErrConflict) {
			t.Fatalf("Save = %v, want ErrConflict", err)
		}
		mustLoad(t, s, blob(1, 100))
		if got := chunkNames(listSecrets(t, c)); len(got) != 1 {
			t.Errorf("chunks = %v, want only generation 1's (the refused Save's deleted)", got)
		}
	})

	t.Run("manifest update fails otherwise", func(t *testing.T) {
		c := newFakeClient()
		s := NewSecret(c, testNS, testName, Options{Holder: "pod-a"})
		mustSave(t, s, blob(1, 100))
		var fail atomic.Bool
		fail.Store(true)
		c.PrependReactor("update", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if fail.Load() {
				return true, nil, apierrors.NewServiceUnavailable("injected")
			}
			return false, nil, nil
		})
		err := s.Save(ctx, blob(2, 100))
		if err == nil || errors.Is(err, ErrConflict) {
			t.Fatalf("Save = %v, want a non-conflict error", err)
		}
		mustLoad(t, s, blob(1, 100))
		fail.Store(false)
		mustSave(t, s, blob(3, 100))
		mustLoad(t, s, blob(3, 100))
		if got := chunkNames(listSecrets(t, c)); len(got) != 1 || !strings.Contains(got[0], "-g3-") {
			t.Errorf("chunks = %v, want generation 3 only (the failed generation 2 skipped and swept)", got)
		}
	})
}

// TestSecretLeavesForeignSecretsAlone checks that a Secret at the manifest's name without the
// store's labels is neither read nor overwritten, and other Secrets are never deleted.
func TestSecretLeavesForeignSecretsAlone(t *testing.T) {
	ctx := context.Background()
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: testName, Namespace: testNS, ResourceVersion: "5"},
		Data:       map[string][]byte{"password": []byte("hunter2")},
	}
	lookalike := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "other-g1-0", Namespace: testNS, Labels: map[string]string{LabelRole: RoleChunk, LabelID: "other", LabelGeneration: "1"},
	}}
	c := newFakeClient(foreign, lookalike)
	s := NewSecret(c, testNS, testName, Options{})
	if _, err := s.Load(ctx); err == nil || errors.Is(err, ErrCorrupt) {
		t.Errorf("Load of a foreign Secret = %v, want a non-corruption error", err)
	}
	if err := s.Save(ctx, blob(1, 100)); err == nil {
		t.Error("Save over a foreign Secret succeeded")
	}
	objs := listSecrets(t, c)
	if len(objs) != 2 || string(objs[testName].Data["password"]) != "hunter2" || objs["other-g1-0"] == nil {
		t.Errorf("foreign Secrets changed: %v", objs)
	}
	for _, a := range c.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" {
			t.Errorf("unexpected %s %s", v, a.GetResource().Resource)
		}
	}
}

func TestNewSecretInvalid(t *testing.T) {
	for _, tc := range []struct{ ns, name string }{
		{"", "x"}, {"Bad_NS", "x"}, {"ns", ""}, {"ns", "UPPER"}, {"ns", strings.Repeat("a", 64)}, {"ns", "a/b"},
	} {
		s := NewSecret(newFakeClient(), tc.ns, tc.name, Options{})
		if err := s.Save(context.Background(), []byte("x")); err == nil {
			t.Errorf("Save with namespace %q name %q succeeded", tc.ns, tc.name)
		}
		if _, err := s.Load(context.Background()); err == nil {
			t.Errorf("Load with namespace %q name %q succeeded", tc.ns, tc.name)
		}
	}
}

func TestParse(t *testing.T) {
	dir := t.TempDir()
	client := newFakeClient()
	cases := map[string]struct {
		spec       string
		client     bool
		wantString string // "" = nil store
		wantErr    string
	}{
		"none":                   {spec: "none"},
		"file":                   {spec: "file:" + dir + "/x.ckpt", wantString: "file:" + dir + "/x.ckpt"},
		"file cleaned":           {spec: "file:" + dir + "//y.ckpt", wantString: "file:" + dir + "/y.ckpt"},
		"secret":                 {spec: "secret:vc-syncer-system/ckpt", client: true, wantString: "secret:vc-syncer-system/ckpt"},
		"empty":                  {spec: "", wantErr: "invalid checkpoint store"},
		"no kind":                {spec: "/var/lib/x.ckpt", wantErr: "want file:PATH"},
		"unknown kind":           {spec: "configmap:ns/name", wantErr: "unknown kind \"configmap\""},
		"file without path":      {spec: "file:", wantErr: "needs a path"},
		"file is a directory":    {spec: "file:" + dir, wantErr: "is a directory"},
		"secret without name":    {spec: "secret:ns", client: true, wantErr: "want secret:NAMESPACE/NAME"},
		"secret empty name":      {spec: "secret:ns/", client: true, wantErr: "invalid Secret name"},
		"secret bad namespace":   {spec: "secret:NS/x", client: true, wantErr: "invalid namespace"},
		"secret extra slash":     {spec: "secret:ns/a/b", client: true, wantErr: "invalid Secret name"},
		"secret without client":  {spec: "secret:ns/x", wantErr: "needs a super-cluster client"},
		"None is case-sensitive": {spec: "None", wantErr: "invalid checkpoint store"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var st Store
			var err error
			if tc.client {
				st, err = Parse(tc.spec, client, Options{})
			} else {
				st, err = Parse(tc.spec, nil, Options{})
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) = (%v, %v), want error containing %q", tc.spec, st, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.spec, err)
			}
			if tc.wantString == "" {
				if st != nil {
					t.Fatalf("Parse(%q) = %v, want nil", tc.spec, st)
				}
				return
			}
			if st == nil || st.String() != tc.wantString {
				t.Fatalf("Parse(%q) = %v, want %s", tc.spec, st, tc.wantString)
			}
		})
	}
}
