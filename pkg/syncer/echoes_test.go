package syncer

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

// TestPodEchoes: an announced create's Add is recognised once, for the same tenant Pod only and
// within echoExpiry; a failed create's announcement is withdrawn; announcements whose Add never
// came are swept, so the set stays bounded.
func TestPodEchoes(t *testing.T) {
	now := time.Unix(1000, 0)
	e := newPodEchoes()
	e.now = func() time.Time { return now }

	take := func(ns, name, uid string) bool {
		echo, _ := e.take(ns, name, uid)
		return echo
	}

	e.Expect("t-ns", "web-0", "uid-1")
	if take("t-ns", "web-1", "uid-1") {
		t.Error("the Add of another super Pod was taken for web-0's echo")
	}
	if !take("t-ns", "web-0", "uid-1") {
		t.Error("the Add of the created super Pod was not recognised as its echo")
	}
	if take("t-ns", "web-0", "uid-1") {
		t.Error("a second Add of web-0 (a new super Pod under the same name) was taken for the echo")
	}

	e.Expect("t-ns", "web-0", "uid-1")
	if take("t-ns", "web-0", "uid-2") {
		t.Error("the Add of a super Pod of another tenant Pod (recreated under the name) was taken for the echo")
	}

	e.Expect("t-ns", "web-0", "uid-1")
	e.Forget("t-ns", "web-0")
	if take("t-ns", "web-0", "uid-1") {
		t.Error("the Add of a super Pod whose create failed was taken for the echo")
	}

	e.Expect("t-ns", "web-0", "uid-1")
	now = now.Add(echoExpiry + time.Second)
	if take("t-ns", "web-0", "uid-1") {
		t.Error("an Add after echoExpiry was taken for the echo")
	}

	// Announcements whose Add never reaches take are swept once they expire.
	for i := range 3000 {
		e.Expect("t-ns", fmt.Sprint("lost-", i), "uid")
	}
	now = now.Add(echoExpiry + time.Second)
	for i := range 3000 {
		e.Expect("t-ns", fmt.Sprint("new-", i), "uid")
	}
	if n := len(e.pending); n > 3000+1024 {
		t.Errorf("%d announcements held after 3000 expired and 3000 new ones, want at most %d", n, 3000+1024)
	}
}

// TestPodEchoDelivery: the time from a create's answer to its Add is split at the moment the
// super informer received the Pod (its transform ran), on the clock; an Add that came before
// the answer measures 0, and one whose arrival was not seen is all watch.
func TestPodEchoDelivery(t *testing.T) {
	now := time.Unix(1000, 0)
	e := newPodEchoes()
	e.now = func() time.Time { return now }
	transform := e.arrivals(func(obj any) (any, error) { return obj, nil })
	pod := func(name, uid string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "t-ns", Name: name}}
		conversion.Stamp(&p.ObjectMeta, conversion.Owner{Tenant: "t", TenantUID: "t-uid", Namespace: "ns", Name: name, UID: uid})
		return p
	}
	e.Expect("t-ns", "web-0", "uid-1")
	now = now.Add(5 * time.Millisecond) // the create's call
	e.Answered("t-ns", "web-0")
	now = now.Add(10 * time.Millisecond)
	if _, err := transform(pod("web-0", "uid-0")); err != nil { // an older super Pod of the name
		t.Fatal(err)
	}
	now = now.Add(20 * time.Millisecond)
	if _, err := transform(pod("web-0", "uid-1")); err != nil {
		t.Fatal(err)
	}
	now = now.Add(20 * time.Millisecond)
	if _, err := transform(pod("web-0", "uid-1")); err != nil { // an Update: the first arrival counts
		t.Fatal(err)
	}
	if echo, d := e.take("t-ns", "web-0", "uid-1"); !echo || d.watch != 30*time.Millisecond || d.informer != 20*time.Millisecond {
		t.Errorf("take = %v, %+v; want true, watch 30ms (from the answer, not from Expect, nor from an older Pod's event), informer 20ms", echo, d)
	}

	e.Expect("t-ns", "web-1", "uid-2")
	now = now.Add(5 * time.Millisecond)
	if echo, d := e.take("t-ns", "web-1", "uid-2"); !echo || d != (echoDelivery{}) {
		t.Errorf("take of an Add before the answer = %v, %+v; want true, 0", echo, d)
	}
	e.Answered("t-ns", "web-1") // the answer after the Add: nothing left to stamp

	e.Expect("t-ns", "web-2", "uid-3")
	e.Answered("t-ns", "web-2")
	now = now.Add(40 * time.Millisecond)
	if echo, d := e.take("t-ns", "web-2", "uid-3"); !echo || d.watch != 40*time.Millisecond || d.informer != 0 {
		t.Errorf("take without a seen arrival = %v, %+v; want true, watch 40ms", echo, d)
	}
	if _, err := transform(pod("other", "uid-9")); err != nil { // not announced: nothing recorded
		t.Fatal(err)
	}
	if n := len(e.pending); n != 0 {
		t.Errorf("%d announcements held after every Add, want 0", n)
	}
}
