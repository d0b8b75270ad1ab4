package pod

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/admit"
	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The bounds of TokenPrefetcher.
const (
	// prefetchConcurrency is how many Pods of a tenant of weight 1 have TokenRequests in
	// flight ahead of the workers at once (each Pod's up to tokenRequestConcurrency at a
	// time); a heavier tenant, which gets that many times the workers' time, has that many
	// times as many, up to prefetchMaxConcurrency (tenantConcurrency).
	prefetchConcurrency = 2
	// prefetchMaxConcurrency bounds one tenant's Pods in flight whatever its weight.
	prefetchMaxConcurrency = 8
	// prefetchInFlight is how many Pods of all tenants have TokenRequests in flight ahead of
	// the workers at once; a tenant takes at most tenantConcurrency of them. When all are
	// taken (slow tenant apiservers hold theirs up to --tenant-request-timeout), the other
	// Pods wait for a free one, or get their tokens from their reconcile as without a
	// prefetch: no worker waits for another tenant's requests.
	prefetchInFlight = 64
	// prefetchHeld is how many rounds (in flight, or issued and not yet taken) a tenant has:
	// how far ahead of the workers its tokens are requested. A round holds at most the
	// policy's pods.maxServiceAccountTokens tokens of at most maxTokenBytes each.
	prefetchHeld = 16
	// prefetchPending bounds a tenant's new Pods waiting for a round; the Pods beyond get
	// their tokens from their own reconcile.
	prefetchPending = 1024
	// prefetchTTL is how long a round may take and then wait to be taken; then it is dropped
	// and its Pod's reconcile requests fresh tokens. Far inside a token's lifetime (at least
	// 10 minutes, the TokenRequest API's minimum), whose refresh time is counted from the
	// request.
	prefetchTTL = 2 * time.Minute
)

// Results of a prefetched round (label "result" of vcsyncer_pod_token_prefetches_total).
const (
	prefetchTaken  = "taken"  // the Pod's reconcile used it
	prefetchFailed = "failed" // a TokenRequest failed: the reconcile requests its own
	prefetchUnused = "unused" // dropped untaken: too old, its Pod deleted, its tenant stopped
	prefetchFull   = "full"   // not requested: the tenant had prefetchPending Pods waiting
)

// errNoRound closes a round made for a Pod that turned out not to qualify (round).
var errNoRound = errors.New("no prefetch for this Pod")

// TokenPrefetcher requests the service-account tokens of a tenant's new Pods when the tenant
// informer delivers them (Added), before a downward worker takes them; the Pod reconciler then
// finds them issued (Take, resources.PodTokens) instead of holding its worker while the
// tenant apiserver answers, so the workers' fair shares (worker time, pkg/fairqueue) are not
// spent waiting on a tenant's apiserver. Per tenant at most prefetchConcurrency Pods per unit
// of its weight are in flight (tenantConcurrency; prefetchInFlight over all tenants) and
// prefetchHeld rounds are held, in the order
// the Pods arrived; a round untaken after prefetchTTL is dropped. Only Pods whose whole spec
// is cached (not yet bound), that are not being deleted, whose ServiceAccount has its super
// copy, that the tenant policy allows (policyDenial: its Pod rules, the
// pods.maxServiceAccountTokens bound among them, and its claims) and that fit in the tenant's
// budget and its namespace's quota now are prefetched, so a Pod the policy refuses, or that
// arrives over its budget, gets no token, as in its reconcile. A slow or hostile tenant
// apiserver holds only its own tenant's tenantConcurrency goroutines and slots; a Pod of
// another tenant that finds no free slot gets no round, and its reconcile requests its own
// tokens at once (no worker waits for another tenant's requests). The work is done
// outside the workers, so it is not part of the tenant's fair share. Safe for concurrent use.
type TokenPrefetcher struct {
	env *resources.Env
	now func() time.Time
	sem chan struct{} // prefetchInFlight

	mu      sync.Mutex
	tenants map[string]*tenantTokens
	// blocked are the tenants whose next Pod found no free slot of sem: the next freed slot
	// starts them again (and no one else is visited for it).
	blocked map[*tenantTokens]bool
}

// tenantTokens is one tenant's part of a TokenPrefetcher.
type tenantTokens struct {
	c       *tenant.Cluster
	ctx     context.Context // ends when the tenant is forgotten or its Cluster replaced
	cancel  context.CancelFunc
	pending []pendingPod       // FIFO
	waiting map[types.UID]bool // the UIDs in pending whose Pods still want a round
	running int
	rounds  map[types.UID]*tokenPrefetch
}

// pendingPod is a new tenant Pod waiting for its round: its cache key and UID.
type pendingPod struct {
	key string
	uid types.UID
}

// NewTokenPrefetcher returns a TokenPrefetcher reading env's super caches (ServiceAccount
// copies, quotas) and budgets.
func NewTokenPrefetcher(env *resources.Env) *TokenPrefetcher {
	return &TokenPrefetcher{env: env, now: time.Now, sem: make(chan struct{}, prefetchInFlight), tenants: map[string]*tenantTokens{},
		blocked: map[*tenantTokens]bool{}}
}

var _ resources.PodTokens = (*TokenPrefetcher)(nil)

// Added is told of tenant Pod obj (as the tenant informer caches it) that tenant c's informer
// delivered as new, before the syncer queues it downward; it queues the Pod for a round when
// its whole spec is cached and it is not being deleted (the rest is checked when its turn
// comes).
func (p *TokenPrefetcher) Added(c *tenant.Cluster, obj any) {
	cp, ok := obj.(*podcache.Pod)
	if !ok || !cp.Full() || cp.GetDeletionTimestamp() != nil {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.tenants[c.Name]
	if st == nil || st.c != c {
		if st != nil {
			p.dropLocked(c.Name, st)
		}
		ctx, cancel := context.WithCancel(context.Background())
		st = &tenantTokens{c: c, ctx: ctx, cancel: cancel, waiting: map[types.UID]bool{}, rounds: map[types.UID]*tokenPrefetch{}}
		p.tenants[c.Name] = st
	}
	if len(st.pending) >= prefetchPending {
		metrics.TokenPrefetch(c.Name, prefetchFull)
		return
	}
	st.pending = append(st.pending, pendingPod{key: key, uid: cp.GetUID()})
	st.waiting[cp.GetUID()] = true
	p.startLocked(st)
}

// Deleted is told of a tenant Pod of tenant deleted in the tenant: its round, if any, is
// dropped.
func (p *TokenPrefetcher) Deleted(tenant string, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.tenants[tenant]; st != nil {
		delete(st.waiting, m.GetUID())
		if r, ok := st.rounds[m.GetUID()]; ok {
			p.removeLocked(st, m.GetUID(), r)
			metrics.TokenPrefetch(tenant, prefetchUnused)
			p.startLocked(st)
		}
	}
}

// Forget drops the rounds and waiting Pods of tenant Cluster c and ends its requests in
// flight (c stopped; those of a newer Cluster of the same tenant stay).
func (p *TokenPrefetcher) Forget(c *tenant.Cluster) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.tenants[c.Name]; st != nil && st.c == c {
		p.dropLocked(c.Name, st)
	}
}

// dropLocked ends st's requests and forgets it.
func (p *TokenPrefetcher) dropLocked(tenant string, st *tenantTokens) {
	st.cancel()
	for uid, r := range st.rounds {
		p.removeLocked(st, uid, r)
		metrics.TokenPrefetch(tenant, prefetchUnused)
	}
	st.rounds, st.pending, st.waiting = map[types.UID]*tokenPrefetch{}, nil, map[types.UID]bool{}
	delete(p.tenants, tenant)
	delete(p.blocked, st)
}

// Take implements resources.PodTokens. A Pod whose round was not made yet no longer wants one
// (its reconcile requests the tokens itself). A round that failed, or was made for a Pod that
// did not qualify, is not handed over (ok false).
func (p *TokenPrefetcher) Take(ctx context.Context, tenant, namespace, name string, uid types.UID) ([]string, time.Time, bool, error) {
	p.mu.Lock()
	st := p.tenants[tenant]
	var r *tokenPrefetch
	if st != nil {
		delete(st.waiting, uid)
		if r = st.rounds[uid]; r != nil && r.key == namespace+"/"+name {
			p.removeLocked(st, uid, r)
			p.startLocked(st)
		} else {
			r = nil
		}
	}
	p.mu.Unlock()
	if r == nil {
		return nil, time.Time{}, false, nil
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		p.count(tenant, st, prefetchUnused)
		return nil, time.Time{}, true, ctx.Err()
	}
	switch {
	case r.err != nil: // counted by run (failed), or no round was made for the Pod
		return nil, time.Time{}, false, nil
	case p.now().Sub(r.at) > prefetchTTL:
		p.count(tenant, st, prefetchUnused)
		return nil, time.Time{}, false, nil
	}
	p.count(tenant, st, prefetchTaken)
	return r.tokens, r.next, true, nil
}

// count counts a round of st with result unless its tenant was forgotten meanwhile (whose
// metrics are gone).
func (p *TokenPrefetcher) count(tenant string, st *tenantTokens, result string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tenants[tenant] == st {
		metrics.TokenPrefetch(tenant, result)
	}
}

// startLocked drops st's rounds older than prefetchTTL, then starts rounds for its waiting
// Pods while it has room (tenantConcurrency, prefetchHeld). A round is in st.rounds from
// its start, so a Take that comes while it is made waits for it.
func (p *TokenPrefetcher) startLocked(st *tenantTokens) {
	now := p.now()
	for uid, r := range st.rounds {
		select {
		case <-r.done:
		default:
			continue // in flight: its run ends it
		}
		if now.Sub(r.at) > prefetchTTL {
			p.removeLocked(st, uid, r)
			metrics.TokenPrefetch(st.c.Name, prefetchUnused)
		}
	}
	for st.running < tenantConcurrency(st.c) && len(st.pending) > 0 && len(st.rounds) < prefetchHeld {
		next := st.pending[0]
		if st.waiting[next.uid] {
			select {
			case p.sem <- struct{}{}: // released by run
			default:
				p.blocked[st] = true // started again when a slot frees (run)
				return
			}
		}
		st.pending[0] = pendingPod{}
		st.pending = st.pending[1:]
		if len(st.pending) == 0 {
			st.pending = nil // let the drained backing array go
		}
		if !st.waiting[next.uid] {
			continue // taken by its reconcile, or deleted, before its turn
		}
		delete(st.waiting, next.uid)
		r := &tokenPrefetch{done: make(chan struct{}), at: now, key: next.key}
		st.rounds[next.uid] = r
		st.running++
		go p.run(st, next, r)
	}
}

// tenantConcurrency is how many of tenant c's Pods may have TokenRequests in flight ahead of
// the workers: prefetchConcurrency times its weight (its share of the workers, set by the
// provider, not the tenant), at most prefetchMaxConcurrency.
func tenantConcurrency(c *tenant.Cluster) int { return concurrencyFor(c.Weight()) }

// concurrencyFor is tenantConcurrency for a tenant of weight w (below 1: 1).
func concurrencyFor(w int32) int {
	return min(prefetchConcurrency*max(int(w), 1), prefetchMaxConcurrency)
}

// run makes round r for waiting Pod w of st: its TokenRequests when the Pod still qualifies
// (qualify), else errNoRound; then it starts the next. A panic on a tenant's odd Pod fails the
// round, not the syncer.
func (p *TokenPrefetcher) run(st *tenantTokens, w pendingPod, r *tokenPrefetch) {
	defer func() {
		if v := recover(); v != nil {
			utilruntime.HandleError(fmt.Errorf("token prefetch for tenant %s Pod %s: panic: %v", st.c.Name, w.key, v))
			r.err = fmt.Errorf("token prefetch panicked: %v", v)
		}
		close(r.done)
		p.mu.Lock()
		defer p.mu.Unlock()
		<-p.sem
		st.running--
		held := st.rounds[w.uid] == r
		if r.err != nil && held {
			p.removeLocked(st, w.uid, r) // nothing to hand over; a Take already waiting sees r.err
		}
		if r.err != nil && !errors.Is(r.err, errNoRound) && p.tenants[st.c.Name] == st {
			metrics.TokenPrefetch(st.c.Name, prefetchFailed)
		}
		if r.err == nil && held {
			p.expireLocked(st, w.uid, r)
		}
		// The freed slot goes to this tenant's next Pod, else to a tenant that found none free.
		p.startLocked(st)
		blocked := p.blocked
		p.blocked = map[*tenantTokens]bool{}
		for other := range blocked {
			p.startLocked(other) // blocked again when the slots are gone
		}
	}()
	pod, srcs := p.qualify(st, w)
	if pod == nil {
		r.err = errNoRound
		return
	}
	ctx, cancel := context.WithTimeout(st.ctx, prefetchTTL)
	defer cancel()
	r.srcs = srcs
	r.tokens, r.next, r.err = requestTokens(ctx, st.c, pod, srcs)
}

// expireLocked arranges for issued round r of Pod uid to be dropped once it is older than
// prefetchTTL, if it is still held then (its timer stops when it leaves st.rounds before).
func (p *TokenPrefetcher) expireLocked(st *tenantTokens, uid types.UID, r *tokenPrefetch) {
	r.timer = time.AfterFunc(prefetchTTL-p.now().Sub(r.at)+time.Second, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if st.rounds[uid] == r {
			p.removeLocked(st, uid, r)
			if p.tenants[st.c.Name] == st {
				metrics.TokenPrefetch(st.c.Name, prefetchUnused)
				p.startLocked(st)
			}
		}
	})
}

// removeLocked takes round r of Pod uid out of st and stops its expiry timer, so neither holds
// its tokens any longer.
func (p *TokenPrefetcher) removeLocked(st *tenantTokens, uid types.UID, r *tokenPrefetch) {
	delete(st.rounds, uid)
	if r.timer != nil {
		r.timer.Stop()
	}
}

// qualify returns waiting Pod w of st as cached (read only) and its token sources when its
// tokens are to be requested now; nil when the Pod is no longer cached whole with w's UID, is
// being deleted, needs no tokens, is refused by its tenant's policy (policyDenial; a
// RuntimeClass the policy does not allow or a PriorityClass that is not public is left to
// the reconcile, which asks the apiservers or reports the Pod), does not fit in its tenant's
// budget or its namespace's quota now, or its ServiceAccount has no super copy yet (its
// reconcile waits for it).
func (p *TokenPrefetcher) qualify(st *tenantTokens, w pendingPod) (*corev1.Pod, []tokenSource) {
	obj, _, _ := st.c.Informers.Core().V1().Pods().Informer().GetIndexer().GetByKey(w.key)
	cp, ok := obj.(*podcache.Pod)
	if !ok || !cp.Full() || cp.UID != w.uid || cp.DeletionTimestamp != nil {
		return nil, nil
	}
	full, err := cp.Pod()
	if err != nil {
		return nil, nil
	}
	srcs, _ := tokenSources(&full.Spec)
	if len(srcs) == 0 {
		return nil, nil
	}
	if runtimeClassRefused(st.c, &full.Spec) || !priorityClassUsable(p.env, full.Spec.PriorityClassName) {
		return nil, nil
	}
	if policyDenial(p.env, st.c, full.Namespace, &full.Spec, false) != nil {
		return nil, nil
	}
	superNS := resources.SuperNamespace(st.c, full.Namespace)
	if !resources.BudgetFits(p.env, st.c, resources.KindPod, full, superNS, policy.PodCharge(full, defaultCharge(st.c))) {
		return nil, nil
	}
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: full.Name, Namespace: superNS}}
	if admit.CheckQuota(p.env, st.c, resources.KindPod, full.Namespace, probe) != nil {
		return nil, nil
	}
	if !serviceAccountCopied(p.env, superNS, full.Spec.ServiceAccountName) {
		return nil, nil
	}
	return full, srcs
}
