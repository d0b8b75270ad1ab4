// Package kinds is the set of kinds a syncer can run: the kinds it always syncs (Default),
// those synced only when opted in (OptIn: Ingress, NetworkPolicy, PodDisruptionBudget) and
// those synced by default that can be turned off (Optional: Event), and the selection of them
// from the syncer's options (--opt-in-kinds, --disabled-kinds).
//
// # Inputs and outputs
//
// In: the kinds named by the options. Out: the resources.Resource values to run, or an error
// (ErrUnknownOptInKind, ErrUnknownDisabledKind, wrapped) naming the kind and the known ones,
// which `vc-syncer` reports when it validates its flags and pkg/syncer when it is built.
//
// # Lock rules
//
// None: it holds no state; every function returns a new slice.
//
// Adding a kind (docs/architecture.md, "Adding a kind") puts it in one of the three lists.
//
// It sits on floor 6 of the package map in docs/architecture.md, beside the kinds it lists,
// and may import packages on floors 0–6 only (today: pkg/resources, pkg/resources/configmap,
// pkg/resources/endpoints, pkg/resources/endpointslice, pkg/resources/event,
// pkg/resources/ingress, pkg/resources/namespace, pkg/resources/networkpolicy,
// pkg/resources/persistentvolume, pkg/resources/persistentvolumeclaim, pkg/resources/pod,
// pkg/resources/poddisruptionbudget, pkg/resources/priorityclass, pkg/resources/runtimeclass,
// pkg/resources/secret, pkg/resources/service, pkg/resources/serviceaccount,
// pkg/resources/storageclass); test/layering checks it.
package kinds
