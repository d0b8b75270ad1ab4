package syncer

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/event"
	"github.com/vcsyncer/syncer/pkg/resources/kinds"
)

// The super caches of objects the syncer does not own (public PriorityClasses, Events), and
// the kinds it runs (pkg/resources/kinds).

// newKindsEnv adds to env the super caches of unowned objects (Env.SuperPublic: objects labelled
// conversion.LabelPublic; Env.SuperEvents: every Event, trimmed) and returns the Resources
// synced besides kinds.Default: kinds.Optional not in o.DisabledKinds and the opt-in ones
// named by o.OptInKinds (kinds.Select: an error for an unknown one).
func newKindsEnv(env *resources.Env, o Options) ([]resources.Resource, error) {
	if env.SuperPublic == nil { // shared with the public StorageClasses (newStorageFactories)
		env.SuperPublic = informers.NewSharedInformerFactoryWithOptions(o.Super, 0,
			informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
				lo.LabelSelector = conversion.LabelPublic + "=" + conversion.PublicValue
			}),
			informers.WithTransform(stripManagedFields))
	}
	env.SuperEvents = informers.NewSharedInformerFactoryWithOptions(o.Super, 0, informers.WithTransform(event.Trim))
	rs, err := kinds.Select(o.OptInKinds, o.DisabledKinds)
	if err != nil {
		return nil, fmt.Errorf("syncer: %w", err)
	}
	return rs, nil
}

// startKindsInformers starts Env.SuperPublic and Env.SuperEvents and waits for their caches.
func (s *Syncer) startKindsInformers(ctx context.Context) error {
	for _, f := range []informers.SharedInformerFactory{s.env.SuperPublic, s.env.SuperEvents} {
		f.StartWithContext(ctx)
		for typ, ok := range f.WaitForCacheSyncWithContext(ctx).Synced {
			if !ok {
				return fmt.Errorf("super informer for %v did not sync", typ)
			}
		}
	}
	return nil
}

func (s *Syncer) shutdownKindsInformers() {
	s.env.SuperPublic.Shutdown()
	s.env.SuperEvents.Shutdown()
}

// superObject implements resources.Env.SuperObject from the synced kinds' super caches.
func (s *Syncer) superObject(kind resources.Kind, namespace, name string) (metav1.Object, bool) {
	r, ok := s.resources[kind]
	if !ok {
		return nil, false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, exists, err := r.SuperInformer(s.env).GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	m, ok := obj.(metav1.Object)
	return m, ok
}
