package syncer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/persistentvolume"
	"github.com/vcsyncer/syncer/pkg/resources/storageclass"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// newStorageFactories returns Env.SuperVolumes and Env.SuperPublic: informer factories for
// super objects the syncer does not own and never writes: every PersistentVolume (trimmed, see
// persistentvolume.TrimSuper) and every StorageClass (trimmed, see storageclass.TrimSuper; claim
// conversion reads the default class and provisioners there, storageclass.SuperClasses), and
// the StorageClasses labelled conversion.LabelPublic=true.
func newStorageFactories(sources *source.Registry, super kubernetes.Interface) (volumes, public informers.SharedInformerFactory) {
	public = source.NewFactory(sources, superPublicPrefix, super, source.FactoryOptions{
		Tweak: func(lo *metav1.ListOptions) {
			lo.LabelSelector = labels.SelectorFromSet(labels.Set{conversion.LabelPublic: conversion.PublicValue}).String()
		},
		Transform: stripManagedFields,
	})
	volumes = source.NewFactory(sources, superVolumesPrefix, super, source.FactoryOptions{Transform: trimVolumes})
	// Registered before the factory starts (startStorage), so its cache is synced with the PVs'.
	volumes.Storage().V1().StorageClasses().Informer()
	return volumes, public
}

// trimVolumes is the transform of Env.SuperVolumes: PersistentVolumes and StorageClasses
// trimmed to what the syncer reads of them.
func trimVolumes(obj any) (any, error) {
	if _, ok := obj.(*storagev1.StorageClass); ok {
		return storageclass.TrimSuper(obj)
	}
	return persistentvolume.TrimSuper(obj)
}

// watchStorage registers the handlers of the storage informers (call once, in New). A super
// PV event is mapped to the tenant claim its claimRef names (through the owned super
// namespace's ownership annotations, never by parsing names) and enqueued upward; a public
// StorageClass event is enqueued upward for every tenant.
func (s *Syncer) watchStorage() error {
	pvs := s.env.SuperVolumes.Core().V1().PersistentVolumes().Informer()
	if _, err := pvs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.enqueueClaimOf(o) },
		UpdateFunc: func(_, n any) { s.enqueueClaimOf(n) },
		DeleteFunc: func(o any) { s.enqueueClaimOf(o) },
	}); err != nil {
		return err
	}
	scs := s.env.SuperPublic.Storage().V1().StorageClasses().Informer()
	_, err := scs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.enqueuePublicClass(o) },
		UpdateFunc: func(_, n any) { s.enqueuePublicClass(n) },
		DeleteFunc: func(o any) { s.enqueuePublicClass(o) },
	})
	return err
}

// startStorage starts the storage informers and waits for their caches.
func (s *Syncer) startStorage(ctx context.Context) error {
	for _, f := range []informers.SharedInformerFactory{s.env.SuperVolumes} { // SuperPublic: startKindsInformers
		f.StartWithContext(ctx)
		for typ, ok := range f.WaitForCacheSyncWithContext(ctx).Synced {
			if !ok {
				return fmt.Errorf("super informer for %v did not sync", typ)
			}
		}
	}
	return nil
}

// enqueueClaimOf enqueues upward the tenant claim whose super copy super PV obj is bound to.
func (s *Syncer) enqueueClaimOf(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok || pv.Spec.ClaimRef == nil || s.registry == nil {
		return
	}
	ns, err := s.env.SuperInformers.Core().V1().Namespaces().Lister().Get(pv.Spec.ClaimRef.Namespace)
	if err != nil {
		return // not a namespace the syncer owns
	}
	_, o, ok := s.syncedOwner(ns)
	if !ok {
		return
	}
	s.enqueue(s.up, resources.Request{Tenant: o.Tenant, Kind: resources.KindPersistentVolumeClaim,
		Namespace: o.Namespace, Name: pv.Spec.ClaimRef.Name}, true)
}

// enqueuePublicClass enqueues super StorageClass obj upward for every synced tenant.
func (s *Syncer) enqueuePublicClass(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	sc, ok := obj.(*storagev1.StorageClass)
	if !ok || s.registry == nil {
		return
	}
	for _, c := range s.syncedClusters() {
		s.enqueue(s.up, resources.Request{Tenant: c.Name, Kind: resources.KindStorageClass, Name: sc.Name}, true)
	}
}

// enqueuePublicFor enqueues upward, for tenant c (ClusterSynced), every public super
// StorageClass whose copy the tenant's cache lacks or holds in another form
// (storageclass.Equal), so that a tenant resumed from a checkpoint reconciles none of them.
func (s *Syncer) enqueuePublicFor(c *tenant.Cluster) {
	have := c.Informers.Storage().V1().StorageClasses().Informer().GetStore()
	for _, obj := range s.env.SuperPublic.Storage().V1().StorageClasses().Informer().GetStore().List() {
		sc, ok := obj.(*storagev1.StorageClass)
		if !ok {
			continue
		}
		if cur, ok, _ := have.GetByKey(sc.Name); ok {
			if t, ok := cur.(*storagev1.StorageClass); ok && storageclass.Equal(storageclass.Desired(sc), t) {
				continue
			}
		}
		s.enqueue(s.up, resources.Request{Tenant: c.Name, Kind: resources.KindStorageClass, Name: sc.Name}, false)
	}
}
