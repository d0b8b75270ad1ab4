package source

import (
	"bytes"
	"encoding/gob"
	"testing"
)

// An empty kind's State loses its (empty, non-nil) Objects in a gob round trip, as in a real
// checkpoint (HasObjects keeps the fact); it must still resume by watch from its Position.
func TestEmptyKindResumesByWatchAfterGobRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := []State{{ID: "tenant/t1/Secret", Position: "42", Objects: [][]byte{}, HasObjects: true}}
	if err := gob.NewEncoder(&buf).Encode(in); err != nil {
		t.Fatal(err)
	}
	var out []State
	if err := gob.NewDecoder(&buf).Decode(&out); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry()
	r.Restore(out)
	s := r.Source("tenant/t1/Secret")
	p := s.takePending()
	if p == nil || p.Position != "42" || len(p.Objects) != 0 {
		t.Fatalf("takePending() = %+v, want the state at position 42 with no objects", p)
	}
	if s.Mode() != ModeWatch {
		t.Fatalf("mode %q, want %q", s.Mode(), ModeWatch)
	}
	if s.takePending() != nil || s.Mode() != ModeRelistDiff {
		t.Fatalf("a second List must go to the apiserver (mode %q)", s.Mode())
	}
}
