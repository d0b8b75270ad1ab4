package event

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

var (
	tA = &tenant.Cluster{Name: "a", UID: "uid-a"}
	tB = &tenant.Cluster{Name: "b", UID: "uid-b"}
)

func superPod(c *tenant.Cluster, name, superUID, tenantUID string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: resources.SuperNamespace(c, "apps"), UID: types.UID("s-" + superUID)}}
	conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: c.Name, TenantUID: c.UID, Namespace: "apps", Name: name, UID: tenantUID})
	return p
}

func superEvent(c *tenant.Cluster, name, kind, involved, uid string) *corev1.Event {
	ns := resources.SuperNamespace(c, "apps")
	now := metav1.NewTime(time.Unix(1000, 0))
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns, UID: "ev-uid", ResourceVersion: "5", Annotations: map[string]string{"x": "y"}},
		InvolvedObject: corev1.ObjectReference{Kind: kind, APIVersion: "v1", Namespace: ns, Name: involved, UID: types.UID("s-" + uid), FieldPath: "spec.containers{c}"},
		Reason:         "Scheduled", Message: "Successfully assigned " + ns + "/" + involved + " to node-1",
		Source: corev1.EventSource{Component: "default-scheduler"}, FirstTimestamp: now, LastTimestamp: now, Count: 2, Type: corev1.EventTypeNormal,
	}
}

// env returns an Env whose SuperObject serves the given super objects by kind/ns/name.
func env(objs map[string]metav1.Object) *resources.Env {
	return &resources.Env{SuperObject: func(kind resources.Kind, ns, name string) (metav1.Object, bool) {
		o, ok := objs[string(kind)+"/"+ns+"/"+name]
		return o, ok
	}}
}

func TestTenantObject(t *testing.T) {
	pa := superPod(tA, "web", "1", "tenant-uid-1")
	nsA := resources.SuperNamespace(tA, "apps")
	nsB := resources.SuperNamespace(tB, "apps")
	pb := superPod(tB, "web", "2", "tenant-uid-2")
	e := env(map[string]metav1.Object{"Pod/" + nsA + "/web": pa, "Pod/" + nsB + "/web": pb})
	cases := map[string]struct {
		c       *tenant.Cluster
		ev      *corev1.Event
		wantOK  bool
		wantUID string
	}{
		"about a synced Pod": {c: tA, ev: superEvent(tA, "web.1", "Pod", "web", "1"), wantOK: true, wantUID: "tenant-uid-1"},
		"involved UID unset": {c: tA, ev: func() *corev1.Event {
			ev := superEvent(tA, "web.1", "Pod", "web", "")
			ev.InvolvedObject.UID = ""
			return ev
		}(), wantOK: true, wantUID: "tenant-uid-1"},
		"about an older Pod of the name": {c: tA, ev: superEvent(tA, "web.1", "Pod", "web", "0"), wantOK: false},
		"about an unsynced object":       {c: tA, ev: superEvent(tA, "x.1", "Pod", "x", "1"), wantOK: false},
		"kind not synced":                {c: tA, ev: superEvent(tA, "web.1", "Deployment", "web", "1"), wantOK: false},
		"another tenant's object":        {c: tA, ev: superEvent(tB, "web.1", "Pod", "web", "2"), wantOK: false},
		"involved in another namespace": {c: tA, ev: func() *corev1.Event {
			ev := superEvent(tA, "web.1", "Pod", "web", "1")
			ev.InvolvedObject.Namespace = nsB
			return ev
		}(), wantOK: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, ok := TenantObject(e, tc.c, tc.ev)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if ok && (o.UID != tc.wantUID || o.Namespace != "apps" || o.Name != "web") {
				t.Errorf("tenant object %+v", o)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	se := superEvent(tA, "web.17", "Pod", "web", "1")
	got := Desired(se, "apps", conversion.Owner{Namespace: "apps", Name: "web", UID: "tenant-uid"})
	want := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "web.17", Namespace: "apps", Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "apps", Name: "web", UID: "tenant-uid",
			FieldPath: "spec.containers{c}"},
		Reason: "Scheduled", Message: "Successfully assigned apps/web to node-1",
		Source: se.Source, FirstTimestamp: se.FirstTimestamp, LastTimestamp: se.LastTimestamp, Count: 2, Type: corev1.EventTypeNormal,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestEqual(t *testing.T) {
	want := Desired(superEvent(tA, "web.17", "Pod", "web", "1"), "apps", conversion.Owner{Name: "web", UID: "u"})
	restest.RunEqualCases(t, want, (*corev1.Event).DeepCopy, Equal, map[string]restest.EqualCase[*corev1.Event]{
		"same":                     {Mutate: func(*corev1.Event) {}, Equal: true},
		"server fields differ":     {Mutate: func(e *corev1.Event) { e.ResourceVersion, e.UID = "9", "z" }, Equal: true},
		"count":                    {Mutate: func(e *corev1.Event) { e.Count = 3 }, Equal: false},
		"lastTimestamp":            {Mutate: func(e *corev1.Event) { e.LastTimestamp = metav1.NewTime(time.Unix(2000, 0)) }, Equal: false},
		"message":                  {Mutate: func(e *corev1.Event) { e.Message = "m" }, Equal: false},
		"series":                   {Mutate: func(e *corev1.Event) { e.Series = &corev1.EventSeries{Count: 4} }, Equal: false},
		"involvedObject rewritten": {Mutate: func(e *corev1.Event) { e.InvolvedObject.UID = "other" }, Equal: false},
	})
}

func TestMapSuper(t *testing.T) {
	nsA := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: resources.SuperNamespace(tA, "apps")}}
	conversion.Stamp(&nsA.ObjectMeta, conversion.Owner{Tenant: tA.Name, TenantUID: tA.UID, Namespace: "apps", Name: "apps"})
	plain := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}
	cs := fake.NewClientset(nsA, plain)
	e := &resources.Env{SuperInformers: informers.NewSharedInformerFactory(cs, 0)}
	e.SuperInformers.Core().V1().Namespaces().Informer()
	stop := make(chan struct{})
	defer close(stop)
	e.SuperInformers.Start(stop)
	e.SuperInformers.WaitForCacheSync(stop)
	r := Resource
	kubeSystem := superEvent(tA, "x.1", "Pod", "x", "1")
	kubeSystem.Namespace, kubeSystem.InvolvedObject.Namespace = "kube-system", "kube-system"
	cases := map[string]struct {
		ev       *corev1.Event
		clusters []*tenant.Cluster
		want     []resources.Request
	}{
		"tenant namespace": {ev: superEvent(tA, "web.1", "Pod", "web", "1"), clusters: []*tenant.Cluster{tB, tA},
			want: []resources.Request{{Tenant: "a", Kind: resources.KindEvent, Namespace: "apps", Name: "web.1"}}},
		"tenant not synced":           {ev: superEvent(tA, "web.1", "Pod", "web", "1"), clusters: []*tenant.Cluster{tB}},
		"same name, other tenant UID": {ev: superEvent(tA, "web.1", "Pod", "web", "1"), clusters: []*tenant.Cluster{{Name: "a", UID: "new"}}},
		"super cluster's namespace":   {ev: kubeSystem, clusters: []*tenant.Cluster{tA, tB}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, r.MapSuper(e, tc.ev, tc.clusters)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
