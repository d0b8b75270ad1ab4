package syncer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/event"
	"github.com/vcsyncer/syncer/pkg/resources/ingress"
	"github.com/vcsyncer/syncer/pkg/resources/networkpolicy"
	"github.com/vcsyncer/syncer/pkg/resources/poddisruptionbudget"
)

// Which kinds a syncer runs: opt-in kinds, default kinds that can be turned off,
// and the super caches of objects the syncer does not own (public PriorityClasses, Events).

// OptInResources returns the kinds synced only when named in Options.OptInKinds.
func OptInResources() []resources.Resource {
	return []resources.Resource{ingress.Resource, networkpolicy.Resource, poddisruptionbudget.Resource}
}

// OptionalResources returns the kinds synced by default that Options.DisabledKinds may turn
// off: Event (it caches every super-cluster Event, about 1 KB each, a few per Pod, and writes
// copies into the tenants through its own rate-limited pipeline, events.go).
func OptionalResources() []resources.Resource {
	return []resources.Resource{event.Resource}
}

// ErrUnknownOptInKind is returned (wrapped) for an opt-in kind that OptInResources lacks.
var ErrUnknownOptInKind = errors.New("unknown opt-in kind")

// ErrUnknownDisabledKind is returned (wrapped) for a kind to turn off that OptionalResources
// lacks.
var ErrUnknownDisabledKind = errors.New("kind cannot be turned off")

// SelectOptIn returns the opt-in Resources named by kinds, or ErrUnknownOptInKind (wrapped,
// naming the kind and the known ones) for a name that is not an opt-in kind. A name of
// OptionalResources (Event, an opt-in kind before it was synced by default) is accepted and
// selects nothing: the kind is synced anyway unless turned off.
func SelectOptIn(kinds []resources.Kind) ([]resources.Resource, error) {
	known := map[resources.Kind]resources.Resource{}
	var names []string
	for _, r := range OptInResources() {
		known[r.Kind()] = r
		names = append(names, string(r.Kind()))
	}
	optional := map[resources.Kind]bool{}
	for _, r := range OptionalResources() {
		optional[r.Kind()] = true
		names = append(names, string(r.Kind()))
	}
	var out []resources.Resource
	for _, k := range kinds {
		if optional[k] {
			continue
		}
		r, ok := known[k]
		if !ok {
			return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownOptInKind, k, strings.Join(names, ", "))
		}
		out = append(out, r)
	}
	return out, nil
}

// SelectOptional returns the Resources of OptionalResources not named in disabled, or
// ErrUnknownDisabledKind (wrapped, naming the kind and those that can be turned off) for a
// name that is not one of them, or an error for a kind both in disabled and in optIn.
func SelectOptional(disabled, optIn []resources.Kind) ([]resources.Resource, error) {
	off := map[resources.Kind]bool{}
	var names []string
	for _, r := range OptionalResources() {
		names = append(names, string(r.Kind()))
	}
	for _, k := range disabled {
		if !slices.Contains(names, string(k)) {
			return nil, fmt.Errorf("%w: %q (these can: %s)", ErrUnknownDisabledKind, k, strings.Join(names, ", "))
		}
		if slices.Contains(optIn, k) {
			return nil, fmt.Errorf("kind %q both opted in and turned off", k)
		}
		off[k] = true
	}
	var out []resources.Resource
	for _, r := range OptionalResources() {
		if !off[r.Kind()] {
			out = append(out, r)
		}
	}
	return out, nil
}

// newKindsEnv adds to env the super caches of unowned objects (Env.SuperPublic: objects labelled
// conversion.LabelPublic; Env.SuperEvents: every Event, trimmed) and returns the Resources
// synced besides DefaultResources: OptionalResources not in o.DisabledKinds and the opt-in
// ones named by o.OptInKinds (an error for an unknown one).
func newKindsEnv(env *resources.Env, o Options) ([]resources.Resource, error) {
	if env.SuperPublic == nil { // shared with the public StorageClasses (newStorageFactories)
		env.SuperPublic = informers.NewSharedInformerFactoryWithOptions(o.Super, 0,
			informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
				lo.LabelSelector = conversion.LabelPublic + "=" + conversion.PublicValue
			}),
			informers.WithTransform(stripManagedFields))
	}
	env.SuperEvents = informers.NewSharedInformerFactoryWithOptions(o.Super, 0, informers.WithTransform(event.Trim))
	optional, err := SelectOptional(o.DisabledKinds, o.OptInKinds)
	if err != nil {
		return nil, fmt.Errorf("syncer: %w", err)
	}
	optIn, err := SelectOptIn(o.OptInKinds)
	if err != nil {
		return nil, fmt.Errorf("syncer: %w", err)
	}
	return append(optional, optIn...), nil
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
