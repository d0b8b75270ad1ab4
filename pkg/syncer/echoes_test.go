package syncer

import (
	"fmt"
	"testing"
	"time"
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

// TestPodEchoDelivery: the time from a create's answer to its Add is measured on the clock;
// an Add that came before the answer measures 0.
func TestPodEchoDelivery(t *testing.T) {
	now := time.Unix(1000, 0)
	e := newPodEchoes()
	e.now = func() time.Time { return now }
	e.Expect("t-ns", "web-0", "uid-1")
	now = now.Add(5 * time.Millisecond) // the create's call
	e.Answered("t-ns", "web-0")
	now = now.Add(30 * time.Millisecond)
	if echo, d := e.take("t-ns", "web-0", "uid-1"); !echo || d != 30*time.Millisecond {
		t.Errorf("take = %v, %v; want true, 30ms (since the answer, not since Expect)", echo, d)
	}

	e.Expect("t-ns", "web-1", "uid-2")
	now = now.Add(5 * time.Millisecond)
	if echo, d := e.take("t-ns", "web-1", "uid-2"); !echo || d != 0 {
		t.Errorf("take of an Add before the answer = %v, %v; want true, 0", echo, d)
	}
	e.Answered("t-ns", "web-1") // the answer after the Add: nothing left to stamp
	if n := len(e.pending); n != 0 {
		t.Errorf("%d announcements held after both Adds, want 0", n)
	}
}
