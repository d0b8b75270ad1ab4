package pod

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
)

func TestTokenRefreshesDue(t *testing.T) {
	env := &resources.Env{SuperInformers: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}
	store := env.SuperInformers.Core().V1().Pods().Informer().GetStore()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	add := func(name string, ann map[string]string, owned, deleting bool) {
		m := metav1.ObjectMeta{Namespace: "t1-abc-shop", Name: name, Annotations: ann}
		if owned {
			conversion.Stamp(&m, conversion.Owner{Tenant: "t1", TenantUID: "u1", Namespace: "shop", Name: name, UID: "uid-" + name})
		}
		if deleting {
			ts := metav1.NewTime(now)
			m.DeletionTimestamp = &ts
		}
		_ = store.Add(&corev1.Pod{ObjectMeta: m})
	}
	add("due", map[string]string{AnnotationTokenSecret: "s", AnnotationTokenRefresh: "2026-01-01T11:59:00Z"}, true, false)
	add("unwritten", map[string]string{AnnotationTokenSecret: "s"}, true, false)
	add("later", map[string]string{AnnotationTokenSecret: "s", AnnotationTokenRefresh: "2026-01-01T12:30:00Z"}, true, false)
	add("no-token", nil, true, false)
	add("deleting", map[string]string{AnnotationTokenSecret: "s"}, true, true)
	add("foreign", map[string]string{AnnotationTokenSecret: "s"}, false, false)

	got := map[string]resources.Request{}
	for _, r := range TokenRefreshesDue(env, now) {
		got[r.Name] = r
	}
	if len(got) != 2 || got["due"].Tenant != "t1" || got["due"].Namespace != "shop" || got["due"].Kind != resources.KindPod || got["unwritten"].Name != "unwritten" {
		t.Errorf("due = %+v, want the Pods due and unwritten of tenant t1 in namespace shop", got)
	}
}
