package remediation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// DefaultInterval is the default time between two scans, as in the VirtualCluster paper.
const DefaultInterval = 60 * time.Second

// Skip reasons (label values of vcsyncer_remediation_skips_total).
const (
	SkipTenantNotSynced    = "tenant_not_synced"
	SkipTenantDisconnected = "tenant_disconnected"
	SkipCacheNotSynced     = "cache_not_synced"
)

// Tenants gives the scanner the running tenant Clusters; *tenant.Registry implements it.
type Tenants interface {
	// Names returns the running tenants' names.
	Names() []string
	// Get returns the running Cluster of the named tenant.
	Get(name string) (*tenant.Cluster, bool)
}

// Queue takes the requests of confirmed mismatches; *syncer.Syncer implements it.
type Queue interface {
	// Requeue adds req at low priority to the downward pipeline, or to the upward pipeline
	// when upward is true.
	Requeue(req resources.Request, upward bool)
}

// Options configures a Scanner.
type Options struct {
	// Interval is the time between two scans; 0 or less turns scanning off (Start just waits).
	// Defaults (in `vc-syncer run`) to DefaultInterval.
	Interval time.Duration
	// Env holds the super caches (shared with the syncer's reconcilers). Required.
	Env *resources.Env
	// Resources are the synced kinds; those implementing resources.Checker are scanned.
	Resources []resources.Resource
	// Tenants lists the tenant Clusters. Required.
	Tenants Tenants
	// Queue receives confirmed mismatches. Required.
	Queue Queue
	// TenantReady reports whether a Cluster's caches can be trusted, and if not, the skip
	// reason. Defaults to DefaultTenantReady.
	TenantReady func(c *tenant.Cluster) (ready bool, reason string)
}

// DefaultTenantReady trusts a Cluster that is Synced (its informers have listed), Connected
// (its last probe succeeded, so the watches are likely current) and not stopped.
func DefaultTenantReady(c *tenant.Cluster) (bool, string) {
	st := c.State()
	switch {
	case st.Stopped || !st.Synced:
		return false, SkipTenantNotSynced
	case !st.Connected:
		return false, SkipTenantDisconnected
	}
	return true, ""
}

// Scanner runs the periodic remediation scan. Scan is not safe for concurrent use; Start calls
// it from one goroutine.
type Scanner struct {
	o Options
	// mu guards states against Checkpoint, which runs on the checkpointer's goroutine.
	mu     sync.Mutex
	states map[string]*tenantState // by tenant name
	// reported holds the tenants the scanner has written metric series for, so that a removed
	// tenant's series are deleted even if a scan raced with its removal.
	reported map[string]bool
	// scans counts the scans run (guarded by mu).
	scans uint64
}

var _ manager.Runnable = (*Scanner)(nil)

// New returns a Scanner; it returns an error when a required option is missing.
func New(o Options) (*Scanner, error) {
	if o.Env == nil || o.Tenants == nil || o.Queue == nil {
		return nil, errors.New("remediation: Options.Env, Tenants and Queue are required")
	}
	if o.TenantReady == nil {
		o.TenantReady = DefaultTenantReady
	}
	return &Scanner{o: o, states: map[string]*tenantState{}, reported: map[string]bool{}}, nil
}

// Start scans every Options.Interval until ctx is done (the first scan one interval after the
// start, when the initial lists have been enqueued). It implements manager.Runnable and always
// returns nil.
func (s *Scanner) Start(ctx context.Context) error {
	if s.o.Interval <= 0 {
		<-ctx.Done()
		return nil
	}
	log := ctrl.LoggerFrom(ctx).WithName("remediation")
	log.Info("Starting remediation scans", "interval", s.o.Interval.String())
	t := time.NewTicker(s.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		r := s.Scan()
		log.V(1).Info("Remediation scan done", "duration", r.Duration.String(), "checked", r.Checked,
			"candidates", r.Candidates, "mismatches", r.Mismatches, "requeued", r.Requeued, "fixed", r.Fixed, "skipped", r.Skipped)
	}
}

// Result summarises one scan.
type Result struct {
	// Checked counts tenant and owned super objects compared.
	Checked int
	// Candidates counts mismatches seen (confirmed or not).
	Candidates int
	// Mismatches counts newly confirmed mismatches.
	Mismatches int
	// Requeued counts requests re-enqueued (confirmed mismatches, new or lasting).
	Requeued int
	// Fixed counts re-enqueued mismatches no longer found.
	Fixed int
	// Remembered counts the objects among Checked whose InSync verdict was remembered from an
	// earlier scan, unchanged since (resources.StableChecker), and not checked again.
	Remembered int
	// Skipped counts skipped tenants plus skipped (tenant, kind) pairs.
	Skipped int
	// Duration is the scan's wall-clock time.
	Duration time.Duration
}

// Scan runs one scan over every tenant and every kind that implements resources.Checker, and
// re-enqueues the confirmed mismatches through Options.Queue. It reads only informer stores.
func (s *Scanner) Scan() Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scans++
	start := time.Now()
	var res Result
	var ready []*tenantState
	names := s.o.Tenants.Names()
	live := make(map[string]bool, len(names))
	for _, name := range names {
		c, ok := s.o.Tenants.Get(name)
		if !ok {
			continue
		}
		live[name] = true
		s.reported[name] = true
		if ok, reason := s.o.TenantReady(c); !ok {
			metrics.RemediationSkip(name, reason)
			delete(s.states, name) // confirmation must span two trusted scans
			res.Skipped++
			continue
		}
		st := s.states[name]
		if st != nil && st.cluster == nil {
			st.cluster = c // restored from a checkpoint: adopt the first Cluster after the restart
		}
		if st == nil || st.cluster != c {
			// A new Cluster (first scan, or a rotated kubeconfig) has new caches.
			st = &tenantState{cluster: c, records: map[resources.Kind]map[key]record{}}
			s.states[name] = st
		}
		st.nsMemo = map[string]string{}
		ready = append(ready, st)
	}
	for name := range s.states {
		if !live[name] {
			delete(s.states, name)
		}
	}
	for name := range s.reported {
		if !live[name] {
			metrics.ForgetRemediationTenant(name)
			delete(s.reported, name)
		}
	}
	for _, r := range s.o.Resources {
		ch, ok := r.(resources.Checker)
		if !ok {
			continue
		}
		superInf := r.SuperInformer(s.o.Env)
		superSynced := superInf.HasSynced()
		var owned map[string][]ownedObject
		if superSynced {
			owned = bucketByTenant(superInf.GetStore().List())
		}
		for _, st := range ready {
			tenantInf := r.TenantInformer(st.cluster)
			if !superSynced || !tenantInf.HasSynced() {
				metrics.RemediationSkip(st.cluster.Name, SkipCacheNotSynced)
				delete(st.records, r.Kind())
				res.Skipped++
				continue
			}
			in := kindInput{
				env: s.o.Env, c: st.cluster, kind: r.Kind(), check: ch,
				tenant: tenantInf.GetStore(), super: superInf.GetStore(), owned: owned[st.cluster.UID], nsMemo: st.nsMemo,
				scan: s.scans,
			}
			if _, ok := ch.(resources.StableChecker); ok {
				in.verdicts = st.verdictsOf(r.Kind())
			}
			found, checked, remembered := compareKind(in)
			res.Checked += checked
			res.Remembered += remembered
			res.Candidates += len(found)
			s.settle(st, r.Kind(), found, &res)
		}
	}
	res.Duration = time.Since(start)
	metrics.RemediationScan(res.Duration)
	return res
}

// key names a tenant object within one kind.
type key struct{ namespace, name string }

// record is what the scanner remembers of one mismatch between scans.
type record struct {
	reason resources.Mismatch
	fp     fingerprint
	// confirmed is true once the mismatch was counted and re-enqueued.
	confirmed bool
}

type tenantState struct {
	cluster *tenant.Cluster
	records map[resources.Kind]map[key]record
	nsMemo  map[string]string // tenant namespace → super namespace, for one scan
	// verdicts holds, for kinds with stable verdicts, the pairs last found InSync.
	verdicts map[resources.Kind]map[key]inSyncVerdict
}

// verdictsOf returns the remembered InSync verdicts of kind (an empty map the first time).
func (st *tenantState) verdictsOf(kind resources.Kind) map[key]inSyncVerdict {
	if st.verdicts == nil {
		st.verdicts = map[resources.Kind]map[key]inSyncVerdict{}
	}
	m := st.verdicts[kind]
	if m == nil {
		m = map[key]inSyncVerdict{}
		st.verdicts[kind] = m
	}
	return m
}

// settle compares this scan's findings for one tenant and kind with the previous scan's:
// a finding with the same reason and fingerprint as before is confirmed (counted once,
// re-enqueued every scan); a confirmed mismatch no longer found is counted as fixed.
func (s *Scanner) settle(st *tenantState, kind resources.Kind, found []finding, res *Result) {
	prev := st.records[kind]
	next := make(map[key]record, len(found))
	tenantName, kindName := st.cluster.Name, string(kind)
	for _, f := range found {
		rec := record{reason: f.reason, fp: f.fp}
		if p, ok := prev[f.key]; ok && p.reason == f.reason {
			rec.confirmed = p.confirmed
			if p.fp == f.fp {
				if !p.confirmed {
					metrics.RemediationMismatch(tenantName, kindName, string(f.reason))
					res.Mismatches++
				}
				rec.confirmed = true
				s.o.Queue.Requeue(resources.Request{Tenant: tenantName, Kind: kind, Namespace: f.key.namespace, Name: f.key.name}, f.reason.Upward())
				res.Requeued++
			}
		}
		next[f.key] = rec
	}
	for k, p := range prev {
		if !p.confirmed {
			continue
		}
		if n, ok := next[k]; !ok || n.reason != p.reason {
			metrics.RemediationFix(tenantName, kindName, string(p.reason))
			res.Fixed++
		}
	}
	if len(next) == 0 {
		delete(st.records, kind)
		return
	}
	st.records[kind] = next
}

// checkpointRecord is one remembered mismatch in a checkpoint.
type checkpointRecord struct {
	Kind                        resources.Kind
	Namespace, Name             string
	Reason                      resources.Mismatch
	TenantRV, SuperRV, SuperUID string
	Confirmed                   bool
}

// Name implements checkpoint.Checkpointable.
func (s *Scanner) Name() string { return "remediation" }

// Checkpoint implements checkpoint.Checkpointable: the mismatches the last scan saw per tenant,
// so that a restarted syncer confirms (or counts as fixed) a mismatch on its first scan instead
// of starting the two-scan confirmation over. A confirmation still needs both objects at the
// same resourceVersions as before the restart. The records are sorted, so the same findings
// give the same bytes (the checkpointer then keeps the stored checkpoint).
func (s *Scanner) Checkpoint(context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]checkpointRecord{}
	for name, st := range s.states {
		for kind, recs := range st.records {
			for k, r := range recs {
				out[name] = append(out[name], checkpointRecord{Kind: kind, Namespace: k.namespace, Name: k.name,
					Reason: r.reason, TenantRV: r.fp.tenantRV, SuperRV: r.fp.superRV, SuperUID: r.fp.superUID, Confirmed: r.confirmed})
			}
		}
	}
	for _, recs := range out { // the same findings give the same bytes
		slices.SortFunc(recs, func(a, b checkpointRecord) int {
			return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
	}
	return json.Marshal(out)
}

// Restore implements checkpoint.Checkpointable; call it before Start.
func (s *Scanner) Restore(_ context.Context, data []byte) error {
	var in map[string][]checkpointRecord
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, recs := range in {
		st := &tenantState{records: map[resources.Kind]map[key]record{}}
		for _, r := range recs {
			if st.records[r.Kind] == nil {
				st.records[r.Kind] = map[key]record{}
			}
			st.records[r.Kind][key{r.Namespace, r.Name}] = record{reason: r.Reason,
				fp: fingerprint{tenantRV: r.TenantRV, superRV: r.SuperRV, superUID: r.SuperUID}, confirmed: r.Confirmed}
		}
		s.states[name] = st
	}
	return nil
}
