package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

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
