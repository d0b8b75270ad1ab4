package trackingqueue

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// TestInjectedBugsAreCaught proves the two tests above can fail: each deliberately injected bug
// must be reported by the rapid property test (run through a recording rapid.TB) and, where
// the bug is about concurrency or delays, by the crash-consistency test within a bounded
// number of seeds.
func TestInjectedBugsAreCaught(t *testing.T) {
	// Keep rapid from writing fail files into testdata and from shrinking for 30 s.
	setFlag(t, "rapid.nofailfile", "true")
	setFlag(t, "rapid.shrinktime", "2s")
	setFlag(t, "rapid.checks", "300")
	setFlag(t, "rapid.steps", "80") // as TestTrackingInvariant

	// The property test sees the early decrement only through its check inside Done (at the
	// interleaving point where another goroutine's Snapshot could run); after Done returns the
	// state is the same as without the bug.
	cases := map[string]struct {
		bug            bug
		wantRapid      bool // the property test must catch it
		wantConcurrent bool // the crash-consistency test must catch it
	}{
		"don't track delayed":                    {bug: bugUntrackedDelay, wantRapid: true, wantConcurrent: true},
		"decrement processing before Typed.Done": {bug: bugEarlyDecrement, wantRapid: true, wantConcurrent: true},
		"clear window at Earliest":               {bug: bugMinOnlyWindow, wantRapid: true},
		"drop orphans at shutdown":               {bug: bugDropOrphans, wantRapid: true, wantConcurrent: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := &recordingTB{name: "TestInjectedBugsAreCaught/" + strings.ReplaceAll(name, " ", "_")}
			rapid.Check(rec, func(rt *rapid.T) { runMachine(rt, tc.bug) })
			caught := rec.Failed() && strings.Contains(rec.output(), "I1 violated")
			t.Logf("property test: caught=%v", caught)
			if tc.wantRapid && !caught {
				t.Errorf("the property test did not catch the bug; its output:\n%s", rec.output())
			}
			if !tc.wantConcurrent {
				return
			}
			const maxSeeds = 200
			for seed := range uint64(maxSeeds) {
				if res := crashRun(seed, tc.bug); len(res.violations) > 0 {
					t.Logf("crash-consistency test: caught at seed %d (%d violations), first: %.300s", seed, len(res.violations), res.violations[0])
					return
				}
			}
			t.Errorf("the crash-consistency test did not catch the bug in %d seeds", maxSeeds)
		})
	}
}

// TestCheckersWithoutBugs guards the mutation test: with no bug injected, the same property
// run through the recording TB must pass (so "caught" above means the bug, not the harness).
func TestCheckersWithoutBugs(t *testing.T) {
	setFlag(t, "rapid.nofailfile", "true")
	setFlag(t, "rapid.steps", "80")
	rec := &recordingTB{name: "TestCheckersWithoutBugs"}
	rapid.Check(rec, func(rt *rapid.T) { runMachine(rt, 0) })
	if rec.Failed() {
		t.Fatalf("the property test failed without an injected bug:\n%s", rec.output())
	}
}

// setFlag sets a rapid command-line flag for the duration of t.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("flag %s not registered", name)
	}
	old := f.Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set(name, old) })
}

// recordingTB is a rapid.TB that records failures instead of failing the test.
type recordingTB struct {
	name string

	mu     sync.Mutex
	failed bool
	out    strings.Builder
}

var _ rapid.TB = (*recordingTB)(nil)

func (r *recordingTB) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(&r.out, format+"\n", args...)
}

func (r *recordingTB) fail() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
}

func (r *recordingTB) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

func (r *recordingTB) Helper()                          {}
func (r *recordingTB) Name() string                     { return r.name }
func (r *recordingTB) Logf(format string, args ...any)  { r.logf(format, args...) }
func (r *recordingTB) Log(args ...any)                  { r.logf("%s", fmt.Sprint(args...)) }
func (r *recordingTB) Skipf(format string, args ...any) { r.logf("skip: "+format, args...) }
func (r *recordingTB) Skip(args ...any)                 { r.logf("skip: %s", fmt.Sprint(args...)) }
func (r *recordingTB) SkipNow()                         {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.logf(format, args...)
	r.fail()
}
func (r *recordingTB) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.logf(format, args...)
	r.fail()
}
func (r *recordingTB) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recordingTB) FailNow()          { r.fail() }
func (r *recordingTB) Fail()             { r.fail() }
func (r *recordingTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}
