package syncer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Wiring of pkg/admit, which admits tenant objects under their tenant's limits (counts,
// sizes, quotas, namespace collisions) and records and signals its refusals. The syncer
// calls its Gate from the tenant handlers (Admit, Release, ReleaseHeld), ClusterSynced
// (AdmitInitial), PolicyChanged (Raise, ReadmitHeld), the super Namespace handler
// (SuperNamespaceGone) and process (SkipRefused); the Gate wakes requests through
// pipelines.

// pipelines is the syncer's side of admit.Pipelines.
type pipelines struct{ s *Syncer }

func (p pipelines) Down(req resources.Request) { p.s.enqueue(p.s.down, req, true) }
func (p pipelines) Up(req resources.Request)   { p.s.enqueue(p.s.up, req, true) }

func (p pipelines) UpwardKind(kind resources.Kind) bool { return p.s.upwardKind(kind) }

func (p pipelines) DownwardKinds() []resources.Kind {
	out := make([]resources.Kind, 0, len(p.s.resources))
	for kind := range p.s.resources {
		if hasDownward(kind) {
			out = append(out, kind)
		}
	}
	return out
}

func (p pipelines) TenantInformer(c *tenant.Cluster, kind resources.Kind) (cache.SharedIndexInformer, bool) {
	r, ok := p.s.resources[kind]
	if !ok {
		return nil, false
	}
	return r.TenantInformer(c), true
}

func (p pipelines) SuperObject(kind resources.Kind, namespace, name string) (metav1.Object, bool) {
	return p.s.superObject(kind, namespace, name)
}

func (p pipelines) SyncedOwner(m metav1.Object) (*tenant.Cluster, conversion.Owner, bool) {
	return p.s.syncedOwner(m)
}

func (p pipelines) AfterReadyOnce(key any, f func()) { p.s.afterReadyOnce(key, f) }
