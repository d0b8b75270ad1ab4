package event

import (
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/eventcache"
	"github.com/vcsyncer/syncer/pkg/resources/restest"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// A tenant Event copy the tenant cache holds as a stub (beyond limits.maxCachedBytes) is not
// written into: nothing is copied up into an object held out, and NeedsWrite does not queue it.
func TestHeldOutCopyIsNotWritten(t *testing.T) {
	h := restest.New(t, "ev-held", "apps")
	q := resource.MustParse("1")
	h.SetPolicy(&tenancyv1alpha1.TenantPolicySpec{Limits: &tenancyv1alpha1.LimitsPolicy{MaxCachedBytes: &q}})
	se := superEvent(h.C, "web.1", "Pod", "web", "1")
	pod := superPod(h.C, "web", "1", "tenant-uid-1")
	superCS := fake.NewClientset()
	h.Env.SuperEvents = informers.NewSharedInformerFactory(superCS, 0)
	if err := h.Env.SuperEvents.Core().V1().Events().Informer().GetIndexer().Add(se); err != nil {
		t.Fatal(err)
	}
	h.Env.SuperObject = env(map[string]metav1.Object{"Pod/" + pod.Namespace + "/web": pod}).SuperObject
	if _, err := h.Env.SuperInformers.Core().V1().Namespaces().Lister().Get(se.Namespace); err != nil {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: se.Namespace}}
		h.Super(h.Env.SuperInformers.Core().V1().Namespaces().Informer(), ns)
	}
	copyOf := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web.1", UID: "copy-uid", ResourceVersion: "3",
		Labels: map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue}}, Reason: "Old"}
	stub := h.C.Readmit(copyOf)
	if !tenant.IsHeldOut(stub) {
		t.Fatalf("a copy fits in 1 byte: the fixture is wrong (%T)", stub)
	}
	if err := Resource.TenantInformer(h.C).GetIndexer().Add(stub); err != nil {
		t.Fatal(err)
	}
	if Resource.NeedsWrite(h.Env, h.C, se, "apps") {
		t.Error("NeedsWrite queues a write into a copy held out")
	}
	if err := Resource.Upward(h.Ctx(), h.Env, h.C, "apps", "web.1"); err != nil {
		t.Fatal(err)
	}
	for _, a := range h.TenantCS.Actions() {
		if a.GetVerb() == "update" || a.GetVerb() == "create" {
			t.Errorf("a write into a copy held out: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// Trim caps a super Event's message (text a tenant's Pods can choose, such as probe output) at
// maxMessageBytes, on a character boundary, so each cached super Event is bounded.
func TestTrimCapsTheMessage(t *testing.T) {
	e := superEvent(tA, "web.1", "Pod", "web", "1")
	e.Message = strings.Repeat("é", 4000) // 8000 bytes
	out, err := Trim(e)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := eventcache.From(out)
	if !ok {
		t.Fatalf("Trim returned %T", out)
	}
	if len(got.Message) > maxMessageBytes || !utf8.ValidString(got.Message) || !strings.HasPrefix(e.Message, strings.TrimSuffix(got.Message, "…")) {
		t.Errorf("message of %d bytes (valid UTF-8 %v), want at most %d, a prefix of the original", len(got.Message), utf8.ValidString(got.Message), maxMessageBytes)
	}
	short := superEvent(tA, "web.2", "Pod", "web", "1")
	out, _ = Trim(short.DeepCopy())
	if got, _ := eventcache.From(out); got.Message != short.Message {
		t.Errorf("a short message changed: %q", got.Message)
	}
}
