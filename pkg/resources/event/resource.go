package event

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/eventcache"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource copies super Events up into tenants. Pacing, priorities and drops are the Queue's
// (the syncer's Event pipeline); Resource itself decides what a copy looks like and writes it.
var Resource = Copier{resources.Funcs{
	Name: resources.KindEvent,
	// Tenant: the tenant's Events labelled as the syncer's.
	Tenant: func(c *tenant.Cluster) cache.SharedIndexInformer {
		return c.Informers.InformerFor(&corev1.Event{}, func(cs kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
			return coreinformers.NewFilteredEventInformer(cs, metav1.NamespaceAll, resync,
				cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
				func(lo *metav1.ListOptions) { lo.LabelSelector = tenant.EventCopySelector })
		})
	},
	// Super: every super Event (Env.SuperEvents).
	Super: func(env *resources.Env) cache.SharedIndexInformer {
		return env.SuperEvents.Core().V1().Events().Informer()
	},
}}

// Copier is Resource's type: the kind's informers (resources.Funcs) and its upward copy.
type Copier struct{ resources.Funcs }

var (
	_ resources.Resource    = Resource
	_ resources.SuperMapper = Resource
	_ resources.Upwarder    = Resource
)

// UpwardOnTenantChange implements resources.Upwarder: the tenant's copies are only written by
// the syncer.
func (Copier) UpwardOnTenantChange() bool { return false }

// MapSuper implements resources.SuperMapper: an Event in a tenant's super namespace maps to
// the same name in the tenant namespace. Whether its involved object was synced is checked by
// Upward.
func (Copier) MapSuper(env *resources.Env, obj metav1.Object, clusters []*tenant.Cluster) []resources.Request {
	e, ok := eventcache.From(obj)
	if !ok || e.InvolvedObject.Namespace != e.Namespace {
		return nil
	}
	ns, err := env.SuperInformers.Core().V1().Namespaces().Lister().Get(e.Namespace)
	if err != nil {
		return nil
	}
	o, ok := conversion.OwnerOf(ns)
	if !ok {
		return nil
	}
	for _, c := range clusters {
		if c.Name == o.Tenant && c.UID == o.TenantUID {
			return []resources.Request{{Tenant: c.Name, Kind: resources.KindEvent, Namespace: o.Namespace, Name: e.Name}}
		}
	}
	return nil
}

// Upward implements resources.Resource: it creates or updates the tenant copy of the super
// Event name in the super namespace of tenant namespace ns, from the caches (nothing is written
// when the Event is gone, is not about an object synced for c, or the copy already shows it).
// It returns the write's error (the syncer's Event pipeline retries it a few times); a copy
// deleted in the tenant while it is updated is not re-created.
func (r Copier) Upward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	superNS := resources.SuperNamespace(c, ns)
	se, err := eventcache.Get(env.SuperEvents.Core().V1().Events().Informer().GetIndexer(), superNS, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	involved, ok := TenantObject(env, c, se)
	if !ok {
		return nil
	}
	want := Desired(se, ns, involved)
	have, err := eventcache.GetCopy(r.TenantInformer(c).GetIndexer(), ns, name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err == nil && (have.Digest == eventcache.ShownDigest(want) || tenant.IsHeldOut(have)) {
		return nil // shows it already, or held out of the caches: nothing is copied into it
	}
	events := c.Client.CoreV1().Events(ns)
	if err != nil { // not found in the cache of our copies
		// AlreadyExists: our cache is behind (a retry updates the copy it then holds), or the
		// tenant has an Event of that name that is not ours (retried a few times, then dropped).
		_, err = events.Create(ctx, want, metav1.CreateOptions{FieldManager: reconcile.FieldManager})
		if err != nil {
			return fmt.Errorf("failed to create Event %s/%s in tenant %s: %w", ns, name, c.Name, err)
		}
		return nil
	}
	// The cache keeps a record of the copy (eventcache.Copy), not the copy: the update writes
	// the whole desired copy at the cached resourceVersion (a Conflict is retried).
	u := want
	u.UID, u.ResourceVersion = have.UID, have.ResourceVersion
	if _, err := events.Update(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to update Event %s/%s in tenant %s: %w", ns, name, c.Name, err)
	}
	return nil
}

// NeedsWrite reports whether super Event se, mapped to tenant c's namespace ns, may need a
// write into the tenant, from the caches only: false when its involved object is a cached super
// object that is not one c synced, or when the tenant copy already shows what se shows. An
// involved object that is not cached (yet: the super Pod's informer may see the Pod after the
// scheduler's Event about it) is left to Upward.
func (r Copier) NeedsWrite(env *resources.Env, c *tenant.Cluster, se *corev1.Event, ns string) bool {
	ref := se.InvolvedObject
	if ref.Namespace != se.Namespace || env.SuperObject == nil {
		return false
	}
	if _, cached := env.SuperObject(resources.Kind(ref.Kind), ref.Namespace, ref.Name); !cached {
		return true
	}
	involved, ok := TenantObject(env, c, se)
	if !ok {
		return false
	}
	have, err := eventcache.GetCopy(r.TenantInformer(c).GetIndexer(), ns, se.Name)
	if err == nil && tenant.IsHeldOut(have) {
		return false
	}
	return err != nil || have.Digest != eventcache.ShownDigest(Desired(se, ns, involved))
}

// TenantObject returns the tenant object that super Event se is about: ok only when se is in a
// super namespace of tenant c and its involvedObject is a super object the syncer synced for c
// (cached, owned by c, same UID when the Event names one).
func TenantObject(env *resources.Env, c *tenant.Cluster, se *corev1.Event) (conversion.Owner, bool) {
	ref := se.InvolvedObject
	if ref.Namespace != se.Namespace || env.SuperObject == nil {
		return conversion.Owner{}, false
	}
	obj, ok := env.SuperObject(resources.Kind(ref.Kind), ref.Namespace, ref.Name)
	if !ok {
		return conversion.Owner{}, false
	}
	o, owned := conversion.OwnerOf(obj)
	if !owned || o.TenantUID != c.UID || (ref.UID != "" && ref.UID != obj.GetUID()) {
		return conversion.Owner{}, false
	}
	return o, true
}

// Desired returns the tenant copy of super Event se in tenant namespace ns, about tenant object
// involved.
func Desired(se *corev1.Event, ns string, involved conversion.Owner) *corev1.Event {
	ref := se.InvolvedObject
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name: se.Name, Namespace: ns,
			Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue},
		},
		InvolvedObject: corev1.ObjectReference{
			Kind: ref.Kind, APIVersion: ref.APIVersion, FieldPath: ref.FieldPath,
			Namespace: ns, Name: involved.Name, UID: types.UID(involved.UID),
		},
		Reason:              se.Reason,
		Message:             strings.ReplaceAll(se.Message, se.Namespace+"/", ns+"/"),
		Source:              se.Source,
		FirstTimestamp:      se.FirstTimestamp,
		LastTimestamp:       se.LastTimestamp,
		Count:               se.Count,
		Type:                se.Type,
		EventTime:           se.EventTime,
		Series:              se.Series.DeepCopy(),
		Action:              se.Action,
		ReportingController: se.ReportingController,
		ReportingInstance:   se.ReportingInstance,
	}
}

// Equal reports whether tenant copy have shows what want shows (the same
// eventcache.ShownDigest: the cache keeps only that digest of each copy).
func Equal(want, have *corev1.Event) bool {
	return eventcache.ShownDigest(want) == eventcache.ShownDigest(have)
}

// maxMessageBytes is the longest super Event message the syncer caches and copies (bytes):
// the events.k8s.io API's limit on an Event's note. The kubelet puts text a tenant's Pods
// choose (probe output) into Event messages, and the syncer caches every super Event.
const maxMessageBytes = 1024

// Trim is the super Event informer's transform: it drops managedFields, annotations and
// related, which the syncer never reads, cuts the message to maxMessageBytes (on a character
// boundary, ending in "…"), and caches the Event in its compact form (eventcache.New). Other
// objects are returned unchanged.
func Trim(obj any) (any, error) {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	e.ManagedFields = nil
	e.Annotations = nil
	e.Related = nil
	if len(e.Message) > maxMessageBytes {
		const ellipsis = "…"
		cut := maxMessageBytes - len(ellipsis)
		for cut > 0 && !utf8.RuneStart(e.Message[cut]) {
			cut--
		}
		e.Message = e.Message[:cut] + ellipsis
	}
	return eventcache.New(e)
}
