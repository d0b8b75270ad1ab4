package chaos

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestScheduleSameSeedSameFaults(t *testing.T) {
	o := ScheduleOptions{Duration: 5 * time.Minute, Tenants: 4, Replicas: 3}
	a, b := Schedule(42, o), Schedule(42, o)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("the same seed gave two schedules (-first +second):\n%s", diff)
	}
	if c := Schedule(43, o); cmp.Equal(a, c) {
		t.Fatal("seeds 42 and 43 gave the same schedule")
	}
}

func TestScheduleShape(t *testing.T) {
	o := ScheduleOptions{Duration: 20 * time.Minute, Tenants: 4, Replicas: 3}
	faults := Schedule(1, o)
	var total time.Duration
	longFlips := 0
	for i, f := range faults {
		if f.Seq != i+1 {
			t.Errorf("fault %d has seq %d", i, f.Seq)
		}
		if f.Gap() < time.Second || f.Gap() > 4*time.Second {
			t.Errorf("%s: gap out of [1s, 4s]", f)
		}
		switch f.Kind {
		case SyncerKill, SyncerTerm, CheckpointCorrupt, SuperEtcdCompact:
			if f.Target >= 3 || f.Hold() <= 0 {
				t.Errorf("%s: replica target ≥ 3 or no hold", f)
			}
		case ReplicaPause:
			if f.Target >= 3 || f.Hold() <= LeaseDuration {
				t.Errorf("%s: replica target ≥ 3 or not stopped past the %s Lease", f, LeaseDuration)
			}
		case TenantPause:
			if f.Target >= 4 || f.Hold() <= 0 {
				t.Errorf("%s: tenant target ≥ 4 or no hold", f)
			}
		case PolicyFlip:
			if f.Target >= 4 || f.Hold() < 2*time.Second {
				t.Errorf("%s: tenant target ≥ 4 or refused for less than 2 s", f)
			}
			if f.Hold() > RefusedCopyBound {
				longFlips++
			}
		case PolicyFlipWhileDown:
			if f.Target >= 4 || f.Hold() <= 0 {
				t.Errorf("%s: tenant target ≥ 4 or no hold", f)
			}
		case TenantDownLong:
			if f.Target >= 4 || f.Hold() < 20*time.Second || f.Hold() > 45*time.Second {
				t.Errorf("%s: tenant target ≥ 4 or down for less than 20 s or more than 45 s", f)
			}
		case KubeconfigRotate:
			if f.Target >= 4 || f.Hold() <= 0 {
				t.Errorf("%s: tenant target ≥ 4 or no grace", f)
			}
		case LossyProxy:
			if f.Target >= 4 || f.Hold() < 5*time.Second {
				t.Errorf("%s: tenant target ≥ 4 or lossy for less than 5 s", f)
			}
		case TenantRemoveReadd:
			if f.Target >= 4 || f.Hold() < 2*time.Second {
				t.Errorf("%s: tenant target ≥ 4 or away for less than 2 s", f)
			}
		case SyncerScale:
			if f.Target >= 3 || f.Hold() < 2*time.Second {
				t.Errorf("%s: replica target ≥ 3 or a count held less than 2 s", f)
			}
		default:
			if f.Hold() != 0 {
				t.Errorf("%s: a one-write fault with a hold", f)
			}
		}
		total += f.Gap() + f.Hold()
	}
	if total < o.Duration || total > o.Duration+49*time.Second { // the last may be a TenantDownLong
		t.Errorf("the schedule lasts %s, want %s (+ one fault)", total, o.Duration)
	}
	counts := CountByKind(faults)
	if longFlips == 0 || longFlips == counts[PolicyFlip] {
		t.Errorf("%d of %d %s faults hold past RefusedCopyBound (%s), want some but not all", longFlips, counts[PolicyFlip], PolicyFlip, RefusedCopyBound)
	}
	for _, k := range DefaultKinds() {
		want := 5 // 18 default kinds share about 220 faults
		if k == TenantDownLong {
			want = 1 // drawn at a quarter of the others' weight (longDownOdds)
		}
		if counts[k] < want {
			t.Errorf("%d faults of kind %s in 20 minutes, want ≥ %d (%v)", counts[k], k, want, counts)
		}
	}
	for _, k := range OptInKinds {
		if counts[k] != 0 {
			t.Errorf("%d faults of the opt-in kind %s drawn without asking for it", counts[k], k)
		}
	}
	if len(faults) < 200 {
		t.Errorf("%d faults in 20 minutes, want ≥ 200 (issue 37's target)", len(faults))
	}
}

func TestScheduleKinds(t *testing.T) {
	faults := Schedule(7, ScheduleOptions{Duration: time.Minute, Tenants: 2, Replicas: 1, Kinds: []Kind{TenantPause}})
	for _, f := range faults {
		if f.Kind != TenantPause {
			t.Fatalf("%s drawn, only %s asked for", f, TenantPause)
		}
	}
	// One replica runs without --sharding: it cannot be scaled.
	for _, f := range Schedule(7, ScheduleOptions{Duration: 10 * time.Minute, Tenants: 2, Replicas: 1}) {
		if f.Kind == SyncerScale {
			t.Fatalf("%s drawn for one replica", f)
		}
	}
	if f := Schedule(7, ScheduleOptions{Duration: time.Minute, Replicas: 1, Kinds: []Kind{SyncerScale}}); len(f) != 0 {
		t.Fatalf("only %s asked for, with one replica: %v, want no fault", SyncerScale, f)
	}
	if n := CountByKind(Schedule(7, ScheduleOptions{Duration: 10 * time.Minute, Tenants: 2, Replicas: 2}))[SyncerScale]; n == 0 {
		t.Fatalf("no %s drawn for two replicas", SyncerScale)
	}
	if _, err := ParseKinds([]string{"syncer-sigkill", "nope"}); err == nil {
		t.Fatal("ParseKinds accepted an unknown kind")
	}
}

func TestLogRoundTrip(t *testing.T) {
	faults := Schedule(9, ScheduleOptions{Duration: 2 * time.Minute, Tenants: 2, Replicas: 2})
	var recs []Record
	for _, f := range faults {
		recs = append(recs, Record{Fault: f, Seed: 9, Detail: "did " + string(f.Kind)})
	}
	path := filepath.Join(t.TempDir(), "faults.jsonl")
	if err := WriteLog(path, recs); err != nil {
		t.Fatal(err)
	}
	seed, got, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if seed != 9 {
		t.Errorf("seed %d, want 9", seed)
	}
	if diff := cmp.Diff(faults, got); diff != "" {
		t.Errorf("replayed faults differ (-written +read):\n%s", diff)
	}
}
