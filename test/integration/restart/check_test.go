package restart_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

// readyWatch watches one tenant's test Pods and records every Ready condition that goes from
// True to anything else, or comes back with a different lastTransitionTime, while the Pod is
// not being deleted: a restart of the syncer must never do that (the super Pod kept running).
type readyWatch struct {
	tenant string
	mu     sync.Mutex
	// firstReady is, per Pod UID, the Ready condition's lastTransitionTime when it was first
	// seen True, and when (wall clock) that was.
	firstReady map[types.UID]readySeen
	ready      map[types.UID]bool // Ready=True in the last event seen
	violations []string
}

type readySeen struct {
	ltt  metav1.Time
	seen time.Time
	key  string
}

func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func (w *readyWatch) observe(p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !p.DeletionTimestamp.IsZero() {
		delete(w.ready, p.UID) // being deleted: its status may legitimately change
		return
	}
	c := readyCondition(p)
	key := w.tenant + "/" + p.Namespace + "/" + p.Name
	if c != nil && c.Status == corev1.ConditionTrue {
		if first, ok := w.firstReady[p.UID]; !ok {
			w.firstReady[p.UID] = readySeen{ltt: c.LastTransitionTime, seen: time.Now(), key: key}
		} else if !first.ltt.Equal(&c.LastTransitionTime) {
			w.violations = append(w.violations, fmt.Sprintf("%s (uid %s): Ready lastTransitionTime changed from %s to %s (it went False and back)",
				key, p.UID, first.ltt.UTC().Format(time.RFC3339), c.LastTransitionTime.UTC().Format(time.RFC3339)))
			w.firstReady[p.UID] = readySeen{ltt: c.LastTransitionTime, seen: first.seen, key: key}
		}
		w.ready[p.UID] = true
		return
	}
	if w.ready[p.UID] {
		st := "missing"
		if c != nil {
			st = fmt.Sprintf("%s (reason %q, message %q)", c.Status, c.Reason, c.Message)
		}
		w.violations = append(w.violations, fmt.Sprintf("%s (uid %s): Ready went from True to %s at %s, phase %s",
			key, p.UID, st, time.Now().Format("15:04:05.000"), p.Status.Phase))
	}
	w.ready[p.UID] = false
}

// start runs an informer on the tenant's test Pods until ctx ends.
func (w *readyWatch) start(ctx context.Context, cs kubernetes.Interface) {
	w.firstReady, w.ready = map[types.UID]readySeen{}, map[types.UID]bool{}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = labelTest + "=" + valueTest
	}))
	_, _ = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.observe(o.(*corev1.Pod)) },
		UpdateFunc: func(_, o any) { w.observe(o.(*corev1.Pod)) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if p, ok := o.(*corev1.Pod); ok {
				w.mu.Lock()
				delete(w.ready, p.UID)
				w.mu.Unlock()
			}
		},
	})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
}

// readyNow returns the UIDs of the Pods currently Ready.
func (w *readyWatch) readyNow() []types.UID {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []types.UID
	for uid, r := range w.ready {
		if r {
			out = append(out, uid)
		}
	}
	return out
}

func (w *readyWatch) snapshot() (map[types.UID]readySeen, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.firstReady), slices.Clone(w.violations)
}

// tenantRef names one registered tenant.
type tenantRef struct {
	name, uid string
	cs        kubernetes.Interface
}

// obj is what the convergence check compares of one object.
type obj struct {
	meta metav1.ObjectMeta
	// content: the fields the syncer copies (data, spec) rendered as a string.
	content string
	// Pods only.
	phase    corev1.PodPhase
	ready    *corev1.PodCondition
	nodeName string
}

type listFunc func(ctx context.Context, cs kubernetes.Interface, opts metav1.ListOptions) ([]obj, error)

// kinds lists, per kind, a function listing all objects of that kind (all namespaces).
var kinds = []struct {
	name string
	list listFunc
}{
	{"ConfigMap", func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]obj, error) {
		l, err := cs.CoreV1().ConfigMaps("").List(ctx, o)
		if err != nil {
			return nil, err
		}
		var out []obj
		for _, x := range l.Items {
			out = append(out, obj{meta: x.ObjectMeta, content: fmt.Sprint(x.Data, x.BinaryData)})
		}
		return out, nil
	}},
	{"Secret", func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]obj, error) {
		l, err := cs.CoreV1().Secrets("").List(ctx, o)
		if err != nil {
			return nil, err
		}
		var out []obj
		for _, x := range l.Items {
			data := map[string]string{}
			for k, v := range x.Data {
				data[k] = string(v)
			}
			out = append(out, obj{meta: x.ObjectMeta, content: fmt.Sprint(x.Type, data)})
		}
		return out, nil
	}},
	{"Service", func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]obj, error) {
		l, err := cs.CoreV1().Services("").List(ctx, o)
		if err != nil {
			return nil, err
		}
		var out []obj
		for _, x := range l.Items {
			var ports []string
			for _, p := range x.Spec.Ports {
				ports = append(ports, fmt.Sprintf("%s/%d/%s/%s", p.Name, p.Port, p.Protocol, p.TargetPort.String()))
			}
			out = append(out, obj{meta: x.ObjectMeta, content: fmt.Sprint(x.Spec.Type, " ", x.Spec.Selector, " ", ports)})
		}
		return out, nil
	}},
	{"Pod", func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]obj, error) {
		l, err := cs.CoreV1().Pods("").List(ctx, o)
		if err != nil {
			return nil, err
		}
		var out []obj
		for _, x := range l.Items {
			var images []string
			for _, c := range x.Spec.Containers {
				images = append(images, c.Name+"="+c.Image)
			}
			out = append(out, obj{meta: x.ObjectMeta, content: fmt.Sprint(images), phase: x.Status.Phase, ready: readyCondition(&x), nodeName: x.Spec.NodeName})
		}
		return out, nil
	}},
}

// checkTenant compares the tenant's test objects with the super cluster and returns every
// difference: a missing or stale super copy, a super object whose tenant object is gone (or
// has another UID), two super objects for one tenant object, a super object in the wrong
// place, a tenant Pod not Running and Ready, anything still being deleted.
func checkTenant(ctx context.Context, super kubernetes.Interface, tn tenantRef) []string {
	var problems []string
	add := func(format string, args ...any) {
		problems = append(problems, tn.name+": "+fmt.Sprintf(format, args...))
	}
	owned := metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + tn.uid}

	// Namespaces.
	tnsList, err := tn.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	tenantNS := map[string]corev1.Namespace{}
	for _, ns := range tnsList.Items {
		if !strings.HasPrefix(ns.Name, nsPrefix) {
			continue
		}
		tenantNS[ns.Name] = ns
		if !ns.DeletionTimestamp.IsZero() {
			add("tenant Namespace %s still terminating (%v)", ns.Name, ns.Status.Conditions)
		}
	}
	snsList, err := super.CoreV1().Namespaces().List(ctx, owned)
	if err != nil {
		return []string{err.Error()}
	}
	seenNS := map[string]string{}
	for _, sns := range snsList.Items {
		o, ok := conversion.OwnerOf(&sns)
		if !ok || !strings.HasPrefix(o.Namespace, nsPrefix) {
			continue
		}
		if prev, dup := seenNS[o.Namespace]; dup {
			add("duplicate super Namespaces %s and %s for tenant Namespace %s", prev, sns.Name, o.Namespace)
		}
		seenNS[o.Namespace] = sns.Name
		tns, ok := tenantNS[o.Namespace]
		switch {
		case !ok:
			add("super Namespace %s left for deleted tenant Namespace %s (deleting: %t)", sns.Name, o.Namespace, !sns.DeletionTimestamp.IsZero())
		case string(tns.UID) != o.UID:
			add("super Namespace %s belongs to tenant Namespace %s uid %s, the tenant's has uid %s", sns.Name, o.Namespace, o.UID, tns.UID)
		case sns.Name != conversion.SuperNamespace(tn.name, tn.uid, o.Namespace):
			add("super Namespace %s for tenant Namespace %s, want %s", sns.Name, o.Namespace, conversion.SuperNamespace(tn.name, tn.uid, o.Namespace))
		case !sns.DeletionTimestamp.IsZero():
			add("super Namespace %s terminating while tenant Namespace %s exists", sns.Name, o.Namespace)
		}
	}
	for name := range tenantNS {
		if _, ok := seenNS[name]; !ok {
			add("tenant Namespace %s has no super Namespace", name)
		}
	}

	// Namespaced kinds.
	for _, k := range kinds {
		tobjs, err := k.list(ctx, tn.cs, metav1.ListOptions{LabelSelector: labelTest + "=" + valueTest})
		if err != nil {
			return []string{err.Error()}
		}
		sobjs, err := k.list(ctx, super, metav1.ListOptions{LabelSelector: owned.LabelSelector + "," + labelTest + "=" + valueTest})
		if err != nil {
			return []string{err.Error()}
		}
		tmap := map[string]obj{}
		for _, t := range tobjs {
			if !strings.HasPrefix(t.meta.Namespace, nsPrefix) {
				continue
			}
			key := t.meta.Namespace + "/" + t.meta.Name
			tmap[key] = t
			if !t.meta.DeletionTimestamp.IsZero() {
				add("tenant %s %s still terminating", k.name, key)
			}
			if k.name == "Pod" && t.meta.DeletionTimestamp.IsZero() {
				if t.phase != corev1.PodRunning || t.ready == nil || t.ready.Status != corev1.ConditionTrue || t.nodeName == "" {
					add("tenant Pod %s: phase %q, node %q, Ready %+v", key, t.phase, t.nodeName, t.ready)
				}
			}
		}
		seen := map[string]string{}
		for _, s := range sobjs {
			o, ok := conversion.OwnerOf(&s.meta)
			if !ok || !strings.HasPrefix(o.Namespace, nsPrefix) {
				continue
			}
			key := o.Namespace + "/" + o.Name
			where := s.meta.Namespace + "/" + s.meta.Name
			if prev, dup := seen[key]; dup {
				add("duplicate super %ss %s and %s for tenant %s", k.name, prev, where, key)
			}
			seen[key] = where
			t, ok := tmap[key]
			if !ok {
				add("super %s %s left for deleted tenant %s %s (deleting: %t)", k.name, where, k.name, key, !s.meta.DeletionTimestamp.IsZero())
				continue
			}
			if string(t.meta.UID) != o.UID {
				add("super %s %s belongs to tenant uid %s, the tenant's %s has uid %s", k.name, where, o.UID, key, t.meta.UID)
				continue
			}
			if want := conversion.SuperNamespace(tn.name, tn.uid, o.Namespace) + "/" + o.Name; where != want {
				add("super %s for tenant %s is at %s, want %s", k.name, key, where, want)
			}
			if !s.meta.DeletionTimestamp.IsZero() {
				add("super %s %s terminating while tenant %s exists", k.name, where, key)
			}
			for lk, lv := range t.meta.Labels {
				if s.meta.Labels[lk] != lv {
					add("super %s %s label %s=%q, tenant has %q", k.name, where, lk, s.meta.Labels[lk], lv)
				}
			}
			if s.meta.Annotations[annNote] != t.meta.Annotations[annNote] {
				add("super %s %s annotation %s=%q, tenant has %q", k.name, where, annNote, s.meta.Annotations[annNote], t.meta.Annotations[annNote])
			}
			if s.content != t.content {
				add("super %s %s content %s, tenant has %s", k.name, where, s.content, t.content)
			}
			if k.name == "Pod" && s.phase != corev1.PodRunning {
				add("super Pod %s phase %q", where, s.phase)
			}
		}
		for key, t := range tmap {
			if _, ok := seen[key]; !ok && t.meta.DeletionTimestamp.IsZero() {
				add("tenant %s %s (uid %s) has no super copy", k.name, key, t.meta.UID)
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// podReady returns, per UID, the Ready condition and the key (namespace/name) of the
// tenant's test Pods.
func podReady(ctx context.Context, cs kubernetes.Interface) (map[types.UID]*corev1.PodCondition, map[types.UID]string, error) {
	l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: labelTest + "=" + valueTest})
	if err != nil {
		return nil, nil, err
	}
	out, names := map[types.UID]*corev1.PodCondition{}, map[types.UID]string{}
	for i := range l.Items {
		out[l.Items[i].UID] = readyCondition(&l.Items[i])
		names[l.Items[i].UID] = l.Items[i].Namespace + "/" + l.Items[i].Name
	}
	return out, names, nil
}
