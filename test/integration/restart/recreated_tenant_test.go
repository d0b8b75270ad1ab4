package restart_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// TestTenantRecreatedWhileDownStartsCold (review finding R1): a Tenant deleted and re-created
// under the same name, for the same control plane, while the syncer is down gets a new UID and
// so new super namespaces ("<name>-<hash(uid)>-<ns>"). The checkpointed tenant Sources are
// keyed by tenant name and checked only against the control plane's identity, so the new
// Tenant inherits the old Tenant's ack maps: every object looks already handled and nothing is
// synced into the new super namespaces.
func TestTenantRecreatedWhileDownStartsCold(t *testing.T) {
	o := startOneTenant(t, nil, "1s")
	env, tc, p, c := o.env, o.tc, o.p, o.c
	ctx := t.Context()
	oldUID := itest.TenantUID(t, c, tc.Name)
	itest.MustCreateNS(t, tc.Client, "app")
	const n = 5
	for i := range n {
		itest.Created(t)(tc.Client.CoreV1().ConfigMaps("app").Create(ctx, configMap(i, "v1"), metav1.CreateOptions{}))
	}
	oldNS := conversion.SuperNamespace(tc.Name, oldUID, "app")
	itest.Eventually(t, 2*time.Minute, "ConfigMaps synced", func(ctx context.Context) error {
		cms, err := env.Super.Client.CoreV1().ConfigMaps(oldNS).List(ctx, metav1.ListOptions{LabelSelector: "resume-test"})
		if err != nil || len(cms.Items) != n {
			return fmt.Errorf("%d super ConfigMaps (%w)", len(cms.Items), err)
		}
		return nil
	})
	itest.WaitCheckpoint(t, o.port, time.Now(), time.Minute) // a periodic checkpoint with everything acked
	p.Stop(t)                                                // and the final one

	// While the syncer is down: the Tenant is removed (its finalizer cleared by hand, as an
	// operator does for a stuck finalizer) and re-created with the same name and kubeconfig.
	tn := &tenancyv1alpha1.Tenant{}
	if err := c.Get(ctx, client.ObjectKey{Name: tc.Name}, tn); err != nil {
		t.Fatal(err)
	}
	tn.Finalizers = nil
	if err := c.Update(ctx, tn); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, tn); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	itest.Eventually(t, time.Minute, "old Tenant gone", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Name: tc.Name}, &tenancyv1alpha1.Tenant{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%w)", err)
		}
		return nil
	})
	if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
		t.Fatal(err)
	}
	newUID := itest.TenantUID(t, c, tc.Name)
	if newUID == oldUID {
		t.Fatal("re-created Tenant kept its UID")
	}
	newNS := conversion.SuperNamespace(tc.Name, newUID, "app")

	p.Start(t)
	itest.WaitRunning(t, c, tc.Name)
	itest.Eventually(t, 90*time.Second, "ConfigMaps synced into the re-created Tenant's super namespace", func(ctx context.Context) error {
		if err := p.Exited(); err != nil {
			t.Fatal(err)
		}
		cms, err := env.Super.Client.CoreV1().ConfigMaps(newNS).List(ctx, metav1.ListOptions{LabelSelector: "resume-test"})
		if err != nil || len(cms.Items) != n {
			return fmt.Errorf("%d of %d ConfigMaps in super namespace %s (%w)", len(cms.Items), n, newNS, err)
		}
		return nil
	})
	if os.Getenv("REVIEW_DUMP_LOG") != "" {
		data, _ := os.ReadFile(p.LogPath)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, "heckpoint") || strings.Contains(l, "esum") || strings.Contains(l, "cold") {
				t.Log(l)
			}
		}
	}
}
