package app

import (
	"errors"
	"net/http"
	"testing"
)

func TestReadyCheck(t *testing.T) {
	notSynced := errors.New("super caches not synced")
	cases := map[string]struct {
		leader  bool
		syncErr error
		wantErr error
	}{
		"standby is ready without synced caches": {leader: false, syncErr: notSynced},
		"leader not ready until synced":          {leader: true, syncErr: notSynced, wantErr: notSynced},
		"leader ready once synced":               {leader: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			check := readyCheck(func() bool { return tc.leader }, func(*http.Request) error { return tc.syncErr })
			if err := check(nil); !errors.Is(err, tc.wantErr) {
				t.Errorf("readyCheck = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestElected(t *testing.T) {
	ch := make(chan struct{})
	isLeader := elected(ch)
	if isLeader() {
		t.Error("leader before Elected closed")
	}
	close(ch)
	if !isLeader() {
		t.Error("not leader after Elected closed")
	}
}
