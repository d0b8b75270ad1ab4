package kinds

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/configmap"
	"github.com/vcsyncer/syncer/pkg/resources/endpoints"
	"github.com/vcsyncer/syncer/pkg/resources/endpointslice"
	"github.com/vcsyncer/syncer/pkg/resources/event"
	"github.com/vcsyncer/syncer/pkg/resources/ingress"
	"github.com/vcsyncer/syncer/pkg/resources/namespace"
	"github.com/vcsyncer/syncer/pkg/resources/networkpolicy"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolume"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolumeclaim"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/pkg/resources/poddisruptionbudget"
	"github.com/vcsyncer/syncer/pkg/resources/priorityclass"
	"github.com/vcsyncer/syncer/pkg/resources/runtimeclass"
	"github.com/vcsyncer/syncer/pkg/resources/secret"
	"github.com/vcsyncer/syncer/pkg/resources/service"
	"github.com/vcsyncer/syncer/pkg/resources/serviceaccount"
	"github.com/vcsyncer/syncer/pkg/resources/storageclass"
)

// Default returns the kinds a syncer always syncs.
func Default() []resources.Resource {
	return []resources.Resource{
		namespace.Resource, pod.Resource, configmap.Resource, secret.Resource,
		serviceaccount.Resource, service.Resource,
		persistentvolumeclaim.Resource, persistentvolume.Resource, storageclass.Resource,
		endpoints.Resource, endpointslice.Resource, priorityclass.Resource, runtimeclass.Resource,
	}
}

// OptIn returns the kinds synced only when named in the syncer's Options.OptInKinds
// (--opt-in-kinds).
func OptIn() []resources.Resource {
	return []resources.Resource{ingress.Resource, networkpolicy.Resource, poddisruptionbudget.Resource}
}

// Optional returns the kinds synced by default that the syncer's Options.DisabledKinds
// (--disabled-kinds) may turn off: Event (it caches every super-cluster Event, about 1 KB
// each, a few per Pod, and writes copies into the tenants through its own rate-limited
// pipeline, event.Pipeline).
func Optional() []resources.Resource {
	return []resources.Resource{event.Resource}
}

// ErrUnknownOptInKind is returned (wrapped) for an opt-in kind that OptIn lacks.
var ErrUnknownOptInKind = errors.New("unknown opt-in kind")

// ErrUnknownDisabledKind is returned (wrapped) for a kind to turn off that Optional lacks.
var ErrUnknownDisabledKind = errors.New("kind cannot be turned off")

// SelectOptIn returns the opt-in Resources named by kinds, or ErrUnknownOptInKind (wrapped,
// naming the kind and the known ones) for a name that is not an opt-in kind. A name of
// Optional (Event, an opt-in kind before it was synced by default) is accepted and selects
// nothing: the kind is synced anyway unless turned off.
func SelectOptIn(kinds []resources.Kind) ([]resources.Resource, error) {
	known := map[resources.Kind]resources.Resource{}
	var names []string
	for _, r := range OptIn() {
		known[r.Kind()] = r
		names = append(names, string(r.Kind()))
	}
	optional := map[resources.Kind]bool{}
	for _, r := range Optional() {
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

// SelectOptional returns the Resources of Optional not named in disabled, or
// ErrUnknownDisabledKind (wrapped, naming the kind and those that can be turned off) for a
// name that is not one of them, or an error for a kind both in disabled and in optIn.
func SelectOptional(disabled, optIn []resources.Kind) ([]resources.Resource, error) {
	off := map[resources.Kind]bool{}
	var names []string
	for _, r := range Optional() {
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
	for _, r := range Optional() {
		if !off[r.Kind()] {
			out = append(out, r)
		}
	}
	return out, nil
}

// Select returns the Resources a syncer syncs besides Default: those of Optional not in
// disabled and the opt-in ones named by optIn (SelectOptional, SelectOptIn: an error for an
// unknown kind).
func Select(optIn, disabled []resources.Kind) ([]resources.Resource, error) {
	optional, err := SelectOptional(disabled, optIn)
	if err != nil {
		return nil, err
	}
	in, err := SelectOptIn(optIn)
	if err != nil {
		return nil, err
	}
	return append(optional, in...), nil
}

// Switchable reports whether kind is one a syncer may or may not sync, depending on its
// options: an opt-in kind or one that can be turned off.
func Switchable(kind resources.Kind) bool {
	for _, r := range append(OptIn(), Optional()...) {
		if r.Kind() == kind {
			return true
		}
	}
	return false
}
