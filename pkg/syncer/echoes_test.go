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

	e.Expect("t-ns", "web-0", "uid-1")
	if e.take("t-ns", "web-1", "uid-1") {
		t.Error("the Add of another super Pod was taken for web-0's echo")
	}
	if !e.take("t-ns", "web-0", "uid-1") {
		t.Error("the Add of the created super Pod was not recognised as its echo")
	}
	if e.take("t-ns", "web-0", "uid-1") {
		t.Error("a second Add of web-0 (a new super Pod under the same name) was taken for the echo")
	}

	e.Expect("t-ns", "web-0", "uid-1")
	if e.take("t-ns", "web-0", "uid-2") {
		t.Error("the Add of a super Pod of another tenant Pod (recreated under the name) was taken for the echo")
	}

	e.Expect("t-ns", "web-0", "uid-1")
	e.Forget("t-ns", "web-0")
	if e.take("t-ns", "web-0", "uid-1") {
		t.Error("the Add of a super Pod whose create failed was taken for the echo")
	}

	e.Expect("t-ns", "web-0", "uid-1")
	now = now.Add(echoExpiry + time.Second)
	if e.take("t-ns", "web-0", "uid-1") {
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
