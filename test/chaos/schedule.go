package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"
)

// Kind names one kind of fault.
type Kind string

// The fault kinds. Each has one function in Injectors.
const (
	// SyncerKill SIGKILLs a syncer replica and starts it again after the hold.
	SyncerKill Kind = "syncer-sigkill"
	// SyncerTerm SIGTERMs a syncer replica (graceful: final checkpoint, tenants released) and
	// starts it again after the hold.
	SyncerTerm Kind = "syncer-sigterm"
	// TenantPause SIGSTOPs a tenant's kube-apiserver (it hangs) and SIGCONTs it after the hold.
	TenantPause Kind = "tenant-apiserver-sigstop"
	// SuperCopyDelete deletes a super copy of a tenant object behind the syncer's back.
	SuperCopyDelete Kind = "super-copy-delete"
	// SuperCopyEdit edits a super copy's labels (and a ConfigMap's data) behind the syncer's back.
	SuperCopyEdit Kind = "super-copy-edit"
	// CheckpointDelete deletes one of the syncer's checkpoint Secrets.
	CheckpointDelete Kind = "checkpoint-secret-delete"
	// CheckpointCorrupt SIGKILLs the replica that reads one of the checkpoint Secrets, writes
	// garbage into that Secret's data or truncates it, and starts the replica again after the
	// hold: it must start cold, not crash-loop or lose objects.
	CheckpointCorrupt Kind = "checkpoint-secret-corrupt"
	// ReplicaPause SIGSTOPs a syncer replica for longer than its shard Lease lasts and SIGCONTs
	// it: the others take its tenants meanwhile, and it must not write for them once continued.
	ReplicaPause Kind = "syncer-sigstop-past-lease"
	// PolicyFlip points a Tenant at a TenantPolicy that refuses the load's (ClusterIP)
	// Services for the hold, then back: their super copies go while refused and come back
	// after. One flip in two holds past RefusedCopyBound.
	PolicyFlip Kind = "tenant-policy-flip"
	// SuperEtcdCompact compacts the super cluster's etcd at its current revision and restarts a
	// replica (SIGKILL, started again after the hold), which resumes from positions older than
	// the compaction.
	SuperEtcdCompact Kind = "super-etcd-compaction"
	// TenantRestart kills a tenant's kube-apiserver (SIGKILL) and starts it again (same port,
	// same etcd): the syncer's watches and requests fail until it is ready.
	TenantRestart Kind = "tenant-apiserver-restart"
	// PolicyFlipWhileDown stops every replica (SIGTERM), points a Tenant at the TenantPolicy
	// that refuses the load's Services while they are down for the hold and starts them again
	// (the resume path of the policy marks); the refusal lasts until the Services' super
	// copies are gone, at most ResumeRefusal (past RefusedCopyBound); then the policy is put
	// back the same way, every replica down for the hold.
	PolicyFlipWhileDown Kind = "policy-flip-while-down"
	// TenantDownLong kills a tenant's kube-apiserver and keeps it down for a long hold
	// (LongHoldMin to LongHoldMax) before starting it again: the Tenant must be reported
	// Unreachable meanwhile, and syncing must resume after (faults_tenant.go).
	TenantDownLong Kind = "tenant-apiserver-down-long"
	// KubeconfigRotate rotates a tenant's kubeconfig Secret to a new credential (a token of a
	// new cluster-admin ServiceAccount of the tenant) and revokes the previous one, at once or
	// after the hold (faults_tenant.go).
	KubeconfigRotate Kind = "tenant-kubeconfig-rotate"
	// LossyProxy makes the loopback proxy between the syncer and a tenant apiserver (Proxy)
	// drop (stall), delay or reset its connections for the hold (faults_tenant.go).
	LossyProxy Kind = "lossy-proxy"
	// SuperRestart kills the super cluster's kube-apiserver (SIGKILL) and starts it again (same
	// port, same etcd): every replica's super watches and writes fail until it is ready.
	SuperRestart Kind = "super-apiserver-restart"
	// SuperNamespaceDelete deletes one of a tenant's super namespaces (the syncer-owned
	// namespace holding the copies of one tenant namespace) behind the syncer's back: the
	// syncer must create it and the copies again.
	SuperNamespaceDelete Kind = "super-namespace-delete"
	// TenantRemoveReadd deletes a Tenant (its super namespaces go with it), waits until it is
	// gone, keeps it away for the hold and registers it again with the same kubeconfig: a new
	// Tenant UID, so new super namespaces.
	TenantRemoveReadd Kind = "tenant-remove-readd"
	// SyncerScale scales the (sharded) replicas to 1, then 3, then 2, holding each count for
	// the hold, then back to the count the soak started with: shard hand-overs. Drawn only
	// when the soak runs more than one replica (then they run with --sharding).
	SyncerScale Kind = "syncer-scale"
)

// AllKinds lists every fault kind, in a fixed order (the schedule draws from it by index).
var AllKinds = []Kind{SyncerKill, SyncerTerm, TenantPause, SuperCopyDelete, SuperCopyEdit, CheckpointDelete,
	CheckpointCorrupt, ReplicaPause, PolicyFlip, SuperEtcdCompact, TenantRestart, PolicyFlipWhileDown,
	TenantDownLong, KubeconfigRotate, LossyProxy, SuperRestart, SuperNamespaceDelete, TenantRemoveReadd, SyncerScale}

// OptInKinds are drawn only when asked for by name (ScheduleOptions.Kinds, --kinds): with
// them in the default mix a soak fails for a reason outside vc-syncer. SuperRestart: after a
// dozen or so restarts of the super kube-apiserver a few seconds apart, the super cluster's
// kube-scheduler (pkg/localcluster, alive, no leader election) schedules no new Pod any more,
// so tenant Pods stay Pending with super Pods that carry no condition at all.
var OptInKinds = []Kind{SuperRestart}

// DefaultKinds are the kinds a schedule draws from when none are named: AllKinds but
// OptInKinds, in AllKinds's order.
func DefaultKinds() []Kind {
	return slices.DeleteFunc(slices.Clone(AllKinds), func(k Kind) bool { return slices.Contains(OptInKinds, k) })
}

// Fault is one scheduled fault.
type Fault struct {
	// Seq numbers the faults of a schedule from 1.
	Seq int `json:"seq"`
	// GapMillis is the time to wait after the previous fault ended before this one starts.
	GapMillis int64 `json:"gapMillis"`
	Kind      Kind  `json:"kind"`
	// Target is the replica index (syncer faults) or the tenant index (tenant faults).
	Target int `json:"target"`
	// HoldMillis is how long the fault lasts (replica down, apiserver stopped); 0 for faults
	// that are one write.
	HoldMillis int64 `json:"holdMillis"`
	// Pick chooses the object a fault touches: index Pick mod n in the sorted candidates.
	Pick uint64 `json:"pick"`
}

// Gap is the wait before the fault.
func (f Fault) Gap() time.Duration { return time.Duration(f.GapMillis) * time.Millisecond }

// Hold is how long the fault lasts.
func (f Fault) Hold() time.Duration { return time.Duration(f.HoldMillis) * time.Millisecond }

func (f Fault) String() string {
	return fmt.Sprintf("#%d %s target=%d hold=%s pick=%d (after %s)", f.Seq, f.Kind, f.Target, f.Hold(), f.Pick, f.Gap())
}

// ScheduleOptions shape a schedule.
type ScheduleOptions struct {
	// Duration is the planned length of the fault phase: faults are drawn until the sum of
	// their gaps and holds reaches it.
	Duration time.Duration
	// Tenants and Replicas bound the targets.
	Tenants, Replicas int
	// Kinds are the fault kinds to draw from. Defaults to DefaultKinds. SyncerScale is left out
	// when Replicas is 1 (a single replica runs without --sharding).
	Kinds []Kind
	// MinGap and MaxGap bound the wait before each fault. Default to 1 s and 4 s.
	MinGap, MaxGap time.Duration
	// MaxHold bounds a fault's hold. Defaults to 3 s.
	MaxHold time.Duration
	// LeaseDuration is the replicas' shard Lease duration: a ReplicaPause holds longer, up to
	// LeaseDuration + 1 s + MaxHold. Defaults to 6 s (the harness's --shard-lease-duration).
	LeaseDuration time.Duration
	// LongHoldMin and LongHoldMax bound a TenantDownLong's hold. Default to 20 s and 45 s.
	LongHoldMin, LongHoldMax time.Duration
}

func (o ScheduleOptions) withDefaults() ScheduleOptions {
	if len(o.Kinds) == 0 {
		o.Kinds = DefaultKinds()
	}
	if o.MinGap <= 0 {
		o.MinGap = time.Second
	}
	if o.MaxGap < o.MinGap {
		o.MaxGap = max(o.MinGap, 4*time.Second)
	}
	if o.MaxHold <= 0 {
		o.MaxHold = 3 * time.Second
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = LeaseDuration
	}
	if o.LongHoldMin <= 0 {
		o.LongHoldMin = 20 * time.Second
	}
	if o.LongHoldMax < o.LongHoldMin {
		o.LongHoldMax = max(o.LongHoldMin, 45*time.Second)
	}
	o.Tenants, o.Replicas = max(1, o.Tenants), max(1, o.Replicas)
	if o.Replicas == 1 && slices.Contains(o.Kinds, SyncerScale) {
		o.Kinds = slices.DeleteFunc(slices.Clone(o.Kinds), func(k Kind) bool { return k == SyncerScale })
	}
	return o
}

// longDownOdds: a drawn TenantDownLong is kept one time in longDownOdds (else the kind is
// drawn again), so that its long holds do not take most of a soak.
const longDownOdds = 4

// Schedule returns the faults seed gives for o: everything is drawn from math/rand/v2 seeded
// with seed alone, so the same seed and options give the same schedule.
func Schedule(seed uint64, o ScheduleOptions) []Fault {
	o = o.withDefaults()
	if len(o.Kinds) == 0 {
		return nil // only SyncerScale asked for, with one replica
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []Fault
	var total time.Duration
	for total < o.Duration {
		f := Fault{Seq: len(out) + 1, Kind: o.Kinds[rng.IntN(len(o.Kinds))]}
		for f.Kind == TenantDownLong && len(o.Kinds) > 1 && rng.IntN(longDownOdds) != 0 {
			// Drawn at a quarter of the others' weight: its hold is ten times theirs.
			f.Kind = o.Kinds[rng.IntN(len(o.Kinds))]
		}
		f.GapMillis = (o.MinGap + time.Duration(rng.Int64N(int64(o.MaxGap-o.MinGap)+1))).Milliseconds()
		hold := time.Duration(rng.Int64N(int64(o.MaxHold))) + 100*time.Millisecond
		switch f.Kind {
		case SyncerKill, SyncerTerm, CheckpointCorrupt, SuperEtcdCompact:
			f.Target = rng.IntN(o.Replicas)
			f.HoldMillis = hold.Milliseconds()
		case ReplicaPause:
			f.Target = rng.IntN(o.Replicas)
			f.HoldMillis = (o.LeaseDuration + time.Second + hold).Milliseconds()
		case TenantPause:
			f.Target = rng.IntN(o.Tenants)
			f.HoldMillis = hold.Milliseconds()
		case PolicyFlip:
			// Long enough for the syncer to act on the refusal before it is lifted.
			f.Target = rng.IntN(o.Tenants)
			f.HoldMillis = (2*time.Second + hold).Milliseconds()
		case PolicyFlipWhileDown:
			// The hold is how long the replicas stay down, each of the two times.
			f.Target = rng.IntN(o.Tenants)
			f.HoldMillis = hold.Milliseconds()
		case TenantDownLong:
			f.Target = rng.IntN(o.Tenants)
			f.HoldMillis = (o.LongHoldMin + time.Duration(rng.Int64N(int64(o.LongHoldMax-o.LongHoldMin)+1))).Milliseconds()
		case KubeconfigRotate:
			// The grace before the old credential is revoked (when not revoked at once).
			f.Target = rng.IntN(o.Tenants)
			f.HoldMillis = hold.Milliseconds()
		case LossyProxy:
			f.Target = rng.IntN(o.Tenants)
			f.HoldMillis = (5*time.Second + 2*hold).Milliseconds()
		case TenantRemoveReadd:
			// The Tenant stays away a few seconds.
			f.Target = rng.IntN(o.Tenants)
			f.HoldMillis = (2*time.Second + hold).Milliseconds()
		case SyncerScale:
			// Target: the replica kept when scaled to 1; each count holds a few seconds.
			f.Target = rng.IntN(o.Replicas)
			f.HoldMillis = (2*time.Second + hold).Milliseconds()
		default:
			f.Target = rng.IntN(o.Tenants)
		}
		f.Pick = rng.Uint64()
		if f.Kind == PolicyFlip && f.Pick%2 == 1 {
			// One flip in two (PolicyFlip does not use Pick) outlasts RefusedCopyBound, so
			// that refused-copy-removed can find a copy left from before the refusal.
			f.HoldMillis += (RefusedCopyBound + 5*time.Second).Milliseconds()
		}
		total += f.Gap() + f.Hold()
		out = append(out, f)
	}
	return out
}

// CountByKind returns how many faults of each kind faults holds.
func CountByKind(faults []Fault) map[Kind]int {
	out := map[Kind]int{}
	for _, f := range faults {
		out[f.Kind]++
	}
	return out
}

// ParseKinds parses a list of kind names (none: nil, so a schedule draws from DefaultKinds).
func ParseKinds(s []string) ([]Kind, error) {
	var out []Kind
	for _, k := range s {
		if !slices.Contains(AllKinds, Kind(k)) {
			return nil, fmt.Errorf("unknown fault kind %q (known: %v)", k, AllKinds)
		}
		out = append(out, Kind(k))
	}
	return out, nil
}

// Record is one line of the fault log: the fault and what its injection did.
type Record struct {
	Fault
	// Seed is the seed of the schedule the fault came from.
	Seed uint64 `json:"seed"`
	// Start is when the fault began (RFC 3339, UTC, milliseconds).
	Start string `json:"start,omitempty"`
	// Detail says what the injection did ("SIGKILL shard-1 (pid 123), started again as pid 456").
	Detail string `json:"detail,omitempty"`
	// Error is the injection's error, when it could not inject (no candidate object).
	Error string `json:"error,omitempty"`
}

// WriteLog writes records, one JSON object a line, to path.
func WriteLog(path string, records []Record) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// ReadLog reads a fault log written by WriteLog (or by a soak) and returns its seed and faults,
// in order.
func ReadLog(path string) (uint64, []Fault, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	var seed uint64
	var out []Fault
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return 0, nil, fmt.Errorf("%s line %d: %w", path, len(out)+1, err)
		}
		if !slices.Contains(AllKinds, r.Kind) {
			return 0, nil, fmt.Errorf("%s line %d: unknown fault kind %q", path, len(out)+1, r.Kind)
		}
		seed = r.Seed
		out = append(out, r.Fault)
	}
	return seed, out, sc.Err()
}
