package chaos

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
)

// procState returns the state letter of /proc/<pid>/stat ("R", "S", "T", "Z"...).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sleeper(t *testing.T) *Replica {
	t.Helper()
	bin, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	r := &Replica{ID: "shard-0", bin: bin, args: []string{"300"}, Log: filepath.Join(t.TempDir(), "log")}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Signal(syscall.SIGKILL) })
	return r
}

func TestSyncerSignalRestartsTheReplica(t *testing.T) {
	for _, kind := range []Kind{SyncerKill, SyncerTerm} {
		t.Run(string(kind), func(t *testing.T) {
			r := sleeper(t)
			before := r.PID()
			detail, err := Injectors[kind](t.Context(), &Target{Replicas: []*Replica{r}}, Fault{Kind: kind, HoldMillis: 50})
			if err != nil {
				t.Fatal(err)
			}
			if after := r.PID(); after == 0 || after == before {
				t.Fatalf("after %s the replica runs as pid %d (before: %d); %s", kind, after, before, detail)
			}
			if procState(t, before) != "" && procState(t, before) != "Z" {
				t.Errorf("the signalled pid %d still runs", before)
			}
			if c := r.Crashes(); len(c) != 0 {
				t.Errorf("a fault's stop counted as a crash: %v", c)
			}
		})
	}
}

func TestReplicaCrashIsReported(t *testing.T) {
	r := sleeper(t)
	_ = syscall.Kill(r.PID(), syscall.SIGKILL) // not through the harness
	waitFor(t, "the crash to be seen", func() bool { return r.PID() == 0 })
	if c := r.Crashes(); len(c) != 1 {
		t.Fatalf("crashes %v, want one", c)
	}
}

func TestTenantPauseStopsAndContinues(t *testing.T) {
	r := sleeper(t)
	pid := r.PID()
	done := make(chan error, 1)
	go func() {
		_, err := Injectors[TenantPause](context.Background(), &Target{TenantUIDs: []string{"u"}, TenantAPIServerPID: func(int) int { return pid }},
			Fault{Kind: TenantPause, HoldMillis: 2000})
		done <- err
	}()
	waitFor(t, "the process to be stopped", func() bool { return procState(t, pid) == "T" })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := procState(t, pid); s == "T" {
		t.Fatalf("pid %d still stopped after the fault", pid)
	}
}

const tenantUID = "11111111-1111-1111-1111-111111111111"

func superCM(name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "sns", UID: types.UID("uid-" + name),
		Labels: map[string]string{LabelLoad: ValueLoad}}, Data: map[string]string{"gen": "1"}}
	conversion.Stamp(&cm.ObjectMeta, conversion.Owner{Tenant: "tenant-1", TenantUID: tenantUID, Namespace: "chaos-a", Name: name, UID: "t-" + name})
	return cm
}

func TestSuperCopyFaultsPickBySortedIndex(t *testing.T) {
	objs := []runtime.Object{superCM("b"), superCM("a"), superCM("c")}
	for _, tc := range []struct {
		kind Kind
		pick uint64
		want string // the ConfigMap touched
	}{
		{SuperCopyDelete, 0, "a"}, {SuperCopyDelete, 4, "b"}, {SuperCopyEdit, 2, "c"},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.kind, tc.pick), func(t *testing.T) {
			cs := fake.NewClientset(objs...)
			tg := &Target{Super: cs, TenantUIDs: []string{tenantUID}}
			if _, err := Injectors[tc.kind](t.Context(), tg, Fault{Seq: 5, Kind: tc.kind, Pick: tc.pick}); err != nil {
				t.Fatal(err)
			}
			cm, err := cs.CoreV1().ConfigMaps("sns").Get(t.Context(), tc.want, metav1.GetOptions{})
			switch tc.kind {
			case SuperCopyDelete:
				if err == nil {
					t.Fatalf("super ConfigMap %s not deleted", tc.want)
				}
			case SuperCopyEdit:
				if err != nil || cm.Labels[LabelGen] != "tampered-5" || cm.Data["gen"] != "tampered-5" {
					t.Fatalf("super ConfigMap %s not edited: %+v, %v", tc.want, cm, err)
				}
			}
		})
	}
	if _, err := Injectors[SuperCopyDelete](t.Context(), &Target{Super: fake.NewClientset(), TenantUIDs: []string{tenantUID}}, Fault{}); err == nil {
		t.Fatal("deleting a super copy when there is none did not fail")
	}
}

func TestCheckpointDelete(t *testing.T) {
	secret := func(name string) runtime.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: KubeconfigNamespace}}
	}
	cs := fake.NewClientset(secret("vc-syncer-checkpoint-shard-shard-0"), secret("vc-syncer-checkpoint-shard-shard-1"), secret("tenant-1-kubeconfig"))
	tg := &Target{Super: cs, CheckpointNamespace: KubeconfigNamespace, CheckpointPrefix: "vc-syncer-checkpoint"}
	if _, err := Injectors[CheckpointDelete](t.Context(), tg, Fault{Kind: CheckpointDelete, Pick: 3}); err != nil {
		t.Fatal(err)
	}
	l, _ := cs.CoreV1().Secrets(KubeconfigNamespace).List(t.Context(), metav1.ListOptions{})
	var names []string
	for _, s := range l.Items {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "tenant-1-kubeconfig,vc-syncer-checkpoint-shard-shard-0" {
		t.Fatalf("Secrets left: %s, want shard-1's checkpoint deleted (pick 3 of 2)", got)
	}
}

func TestCorruptData(t *testing.T) {
	in := map[string][]byte{"manifest": []byte(`{"generation":3,"sha256":"abcdef"}`), "empty": nil}
	orig := string(in["manifest"])
	garbage := corruptData(in, corruptGarbage, 7)
	if string(garbage["manifest"]) == orig || len(garbage["manifest"]) != len(orig) || len(garbage["empty"]) == 0 {
		t.Errorf("garbage: %q (%d bytes), empty %q; want other bytes of the same length, and some for an empty value", garbage["manifest"], len(garbage["manifest"]), garbage["empty"])
	}
	if again := corruptData(in, corruptGarbage, 7); string(again["manifest"]) != string(garbage["manifest"]) {
		t.Error("the same seed gave other garbage")
	}
	if tr := corruptData(in, corruptTruncate, 7); string(tr["manifest"]) != orig[:len(orig)/2] {
		t.Errorf("truncated to %q, want %q", tr["manifest"], orig[:len(orig)/2])
	}
	if string(in["manifest"]) != orig {
		t.Error("corruptData changed its input")
	}
}

func TestCheckpointCorruptRestartsTheReader(t *testing.T) {
	r0, r1 := sleeper(t), sleeper(t)
	r1.ID = "shard-1"
	secret := func(name string) runtime.Object {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: KubeconfigNamespace, UID: types.UID("uid-" + name)},
			Data: map[string][]byte{"chunk": []byte("0123456789")}}
		if strings.Contains(name, "-g") { // a chunk, as the Secret store writes it
			s.Immutable = new(true)
		}
		return s
	}
	names := []string{"vc-syncer-checkpoint-shard-shard-0", "vc-syncer-checkpoint-shard-shard-1", "vc-syncer-checkpoint-shard-shard-1-g4-0", "vc-syncer-checkpoint-tenant-00aa"}
	for _, tc := range []struct {
		pick       uint64
		wantKilled *Replica // the reader of names[pick]
		target     int
	}{
		{pick: 2, wantKilled: r1}, {pick: 1 | 1<<32, wantKilled: r1}, {pick: 0, wantKilled: r0}, {pick: 3, target: 1, wantKilled: r1},
	} {
		t.Run(names[tc.pick%4], func(t *testing.T) {
			var objs []runtime.Object
			for _, n := range names {
				objs = append(objs, secret(n))
			}
			cs := fake.NewClientset(objs...)
			before := map[*Replica]int{r0: r0.PID(), r1: r1.PID()}
			tg := &Target{Super: cs, Replicas: []*Replica{r0, r1}, CheckpointNamespace: KubeconfigNamespace, CheckpointPrefix: "vc-syncer-checkpoint"}
			detail, err := Injectors[CheckpointCorrupt](t.Context(), tg, Fault{Kind: CheckpointCorrupt, Pick: tc.pick, Target: tc.target, HoldMillis: 10})
			if err != nil {
				t.Fatal(err)
			}
			for r, pid := range before {
				if restarted := r.PID() != pid; restarted != (r == tc.wantKilled) {
					t.Errorf("%s restarted %t (pid %d → %d); %s", r.ID, restarted, pid, r.PID(), detail)
				}
			}
			s, _ := cs.CoreV1().Secrets(KubeconfigNamespace).Get(t.Context(), names[tc.pick%4], metav1.GetOptions{})
			if got := string(s.Data["chunk"]); got == "0123456789" {
				t.Errorf("Secret %s not corrupted", s.Name)
			} else if tc.pick>>32 == 1 && got != "01234" {
				t.Errorf("Secret %s: %q, want it truncated to 01234", s.Name, got)
			}
		})
	}
}

func TestReplicaPauseStopsAndContinues(t *testing.T) {
	r := sleeper(t)
	pid := r.PID()
	done := make(chan error, 1)
	go func() {
		_, err := Injectors[ReplicaPause](context.Background(), &Target{Replicas: []*Replica{r}}, Fault{Kind: ReplicaPause, HoldMillis: 2000})
		done <- err
	}()
	waitFor(t, "the replica to be stopped", func() bool { return procState(t, pid) == "T" })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := procState(t, pid); s == "T" || r.PID() != pid {
		t.Fatalf("replica pid %d in state %s after the fault (now pid %d), want the same process running", pid, s, r.PID())
	}
}

func TestPolicyFlipRefusesAndRestores(t *testing.T) {
	tn := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "tenant-1"}, Spec: tenancyv1alpha1.TenantSpec{PolicyName: "own"}}
	cl := crfake.NewClientBuilder().WithScheme(app.Scheme()).WithObjects(tn).Build()
	tg := &Target{Tenancy: cl, TenantNames: []string{"tenant-1"}, TenantUIDs: []string{tenantUID}, Refusals: &Refusals{}}
	policyName := func() string {
		got := &tenancyv1alpha1.Tenant{}
		if err := cl.Get(t.Context(), client.ObjectKey{Name: "tenant-1"}, got); err != nil {
			t.Fatal(err)
		}
		return got.Spec.PolicyName
	}
	done := make(chan error, 1)
	go func() {
		_, err := Injectors[PolicyFlip](context.Background(), tg, Fault{Kind: PolicyFlip, HoldMillis: 1500})
		done <- err
	}()
	waitFor(t, "the refusal to begin", func() bool { _, ok := tg.Refusals.Ongoing()[RefusalKey(tenantUID, "Service")]; return ok })
	if got := policyName(); got != RefusingPolicy {
		t.Errorf("during the refusal the Tenant names policy %q, want %s", got, RefusingPolicy)
	}
	p := &tenancyv1alpha1.TenantPolicy{}
	if err := cl.Get(t.Context(), client.ObjectKey{Name: RefusingPolicy}, p); err != nil || slices.Contains(p.Spec.Services.AllowedTypes, corev1.ServiceTypeClusterIP) {
		t.Errorf("TenantPolicy %s allows ClusterIP Services or is missing: %+v %v", RefusingPolicy, p.Spec.Services, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := policyName(); got != "own" {
		t.Errorf("after the fault the Tenant names policy %q, want own again", got)
	}
	if n := len(tg.Refusals.Ongoing()); n != 0 {
		t.Errorf("%d refusals left after the fault", n)
	}
}

func TestSuperEtcdCompactAtCurrentRevision(t *testing.T) {
	var compacted string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/v3/kv/range":
			fmt.Fprint(w, `{"header":{"cluster_id":"1","member_id":"2","revision":"4711","raft_term":"2"}}`)
		case "/v3/kv/compaction":
			compacted = string(b)
			fmt.Fprint(w, `{"header":{"revision":"4711"}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	r := sleeper(t)
	before := r.PID()
	detail, err := Injectors[SuperEtcdCompact](t.Context(), &Target{SuperEtcdURL: srv.URL, Replicas: []*Replica{r}}, Fault{Kind: SuperEtcdCompact, HoldMillis: 10})
	if err != nil {
		t.Fatal(err)
	}
	if compacted != `{"revision":"4711"}` {
		t.Errorf("compaction request %q, want revision 4711 (the current one)", compacted)
	}
	if r.PID() == before || r.PID() == 0 {
		t.Errorf("the replica was not restarted (pid %d, before %d): %s", r.PID(), before, detail)
	}
}

func TestTenantRestartRestartsTheTarget(t *testing.T) {
	var restarted []int
	tg := &Target{TenantUIDs: []string{"a", "b"}, RestartTenantAPIServer: func(_ context.Context, i int) error {
		restarted = append(restarted, i)
		return nil
	}}
	if _, err := Injectors[TenantRestart](t.Context(), tg, Fault{Kind: TenantRestart, Target: 3}); err != nil {
		t.Fatal(err)
	}
	if len(restarted) != 1 || restarted[0] != 1 {
		t.Fatalf("restarted tenants %v, want [1] (target 3 of 2)", restarted)
	}
	if _, err := Injectors[TenantRestart](t.Context(), &Target{TenantUIDs: []string{"a"}}, Fault{Kind: TenantRestart}); err == nil {
		t.Fatal("a restart without a launcher did not fail")
	}
}
