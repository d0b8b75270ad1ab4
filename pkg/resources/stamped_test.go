package resources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

func TestStamped(t *testing.T) {
	owned := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: "ns"}}
	conversion.Stamp(&owned.ObjectMeta, conversion.Owner{Tenant: "t", TenantUID: "u", Namespace: "apps", Name: "owned", UID: "x"})
	// What the super endpoints controller writes for a synced Service with a selector: the
	// Service's labels, no ownership annotations.
	copied := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "copied", Namespace: "ns",
		Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue, conversion.LabelTenantUID: "u"}}}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = idx.Add(owned)
	_ = idx.Add(copied)
	g := Stamped[*corev1.Endpoints](corelisters.NewEndpointsLister(idx).Endpoints("ns"), corev1.Resource("endpoints"))
	cases := map[string]struct {
		name      string
		wantFound bool
	}{
		"owned":                    {name: "owned", wantFound: true},
		"labels copied, unstamped": {name: "copied", wantFound: false},
		"absent":                   {name: "absent", wantFound: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := g.Get(tc.name)
			if tc.wantFound {
				if err != nil || o.Name != tc.name {
					t.Errorf("Get = %v, %v", o, err)
				}
				return
			}
			if !apierrors.IsNotFound(err) {
				t.Errorf("Get error = %v, want NotFound", err)
			}
		})
	}
}
