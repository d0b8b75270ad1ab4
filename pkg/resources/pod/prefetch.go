package pod

import (
	"context"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/pkg/podcache"
	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/resources/priorityclass"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// The bounds of TokenPrefetcher, per tenant.
const (
	// prefetchConcurrency is how many of a tenant's Pods have TokenRequests in flight ahead
	// of the workers at once (each Pod's up to tokenRequestConcurrency at a time).
	prefetchConcurrency = 2
	// prefetchHeld is how many rounds (in flight, or issued and not yet taken) a tenant has:
	// how far ahead of the workers its tokens are requested. A round holds at most the
	// policy's pods.maxServiceAccountTokens tokens of at most maxTokenBytes each.
	prefetchHeld = 16
	// prefetchPending bounds a tenant's new Pods waiting for a round; the Pods beyond get
	// their tokens from their own reconcile.
	prefetchPending = 1024
	// prefetchTTL is how long a round may take and then wait to be taken; an older one is
	// dropped and its Pod's reconcile requests fresh tokens. Far inside a token's lifetime
	// (at least 10 minutes, the TokenRequest API's minimum), whose refresh time is counted
	// from the request.
	prefetchTTL = 2 * time.Minute
)

// Results of a prefetched round (label "result" of vcsyncer_pod_token_prefetches_total).
const (
	prefetchTaken  = "taken"  // the Pod's reconcile used it
	prefetchUnused = "unused" // dropped untaken: too old, its Pod deleted, its tenant stopped
	prefetchFull   = "full"   // not requested: the tenant had prefetchPending Pods waiting
)

// TokenPrefetcher requests the service-account tokens of a tenant's new Pods when the tenant
// informer delivers them (Added), before a downward worker takes them; the Pod reconciler then
// finds them issued (Take, resources.PodTokens) instead of holding its worker while the
// tenant apiserver answers, so the workers' fair shares (worker time, pkg/fairqueue) are not
// spent waiting on a tenant's apiserver. Per tenant at most prefetchConcurrency Pods are in
// flight and prefetchHeld rounds are held, in the order the Pods arrived (the order of the
// tenant's sub-queue); a round untaken after prefetchTTL is dropped. Only Pods whose whole
// spec is cached (not yet bound), that are not being deleted, whose ServiceAccount has its
// super copy and that the tenant policy allows (policyDenial: its Pod rules, the
// pods.maxServiceAccountTokens bound among them, and its claims) are prefetched, so a Pod the
// policy refuses gets no token, as in its reconcile. A Pod that waits for room in its
// tenant's budget or quota may have its tokens issued before it waits; they are dropped after
// prefetchTTL and its reconcile requests fresh ones once it has room. A slow or hostile
// tenant apiserver holds only its own tenant's prefetchConcurrency goroutines. Safe for
// concurrent use.
type TokenPrefetcher struct {
	env *resources.Env
	now func() time.Time

	mu      sync.Mutex
	tenants map[string]*tenantTokens
}

// tenantTokens is one tenant's part of a TokenPrefetcher.
type tenantTokens struct {
	c       *tenant.Cluster
	ctx     context.Context // ends when the tenant is forgotten or its Cluster replaced
	cancel  context.CancelFunc
	pending []pendingPod // FIFO
	running int
	rounds  map[types.UID]*tokenPrefetch
}

// pendingPod is a new tenant Pod waiting for its round: its cache key and UID.
type pendingPod struct {
	key string
	uid types.UID
}

// NewTokenPrefetcher returns a TokenPrefetcher reading env's super caches (the
// ServiceAccounts' super copies).
func NewTokenPrefetcher(env *resources.Env) *TokenPrefetcher {
	return &TokenPrefetcher{env: env, now: time.Now, tenants: map[string]*tenantTokens{}}
}

var _ resources.PodTokens = (*TokenPrefetcher)(nil)

// Added is told of tenant Pod obj (as the tenant informer caches it) that tenant c's informer
// delivered as new and the syncer queued downward; it queues the Pod for a round when its
// whole spec is cached and it is not being deleted (the rest is checked when its turn comes).
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
		st = &tenantTokens{c: c, ctx: ctx, cancel: cancel, rounds: map[types.UID]*tokenPrefetch{}}
		p.tenants[c.Name] = st
	}
	if len(st.pending) >= prefetchPending {
		metrics.TokenPrefetch(c.Name, prefetchFull)
		return
	}
	st.pending = append(st.pending, pendingPod{key: key, uid: cp.GetUID()})
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
		if r := st.rounds[m.GetUID()]; r != nil {
			delete(st.rounds, m.GetUID())
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
	for range st.rounds {
		metrics.TokenPrefetch(tenant, prefetchUnused)
	}
	st.rounds, st.pending = map[types.UID]*tokenPrefetch{}, nil
	delete(p.tenants, tenant)
}

// Take implements resources.PodTokens.
func (p *TokenPrefetcher) Take(ctx context.Context, tenant string, uid types.UID) ([]string, time.Time, bool, error) {
	p.mu.Lock()
	st := p.tenants[tenant]
	var r *tokenPrefetch
	if st != nil {
		if r = st.rounds[uid]; r != nil {
			delete(st.rounds, uid)
			p.startLocked(st)
		}
	}
	p.mu.Unlock()
	if r == nil {
		return nil, time.Time{}, false, nil
	}
	if p.now().Sub(r.at) > prefetchTTL {
		metrics.TokenPrefetch(tenant, prefetchUnused)
		return nil, time.Time{}, false, nil
	}
	select {
	case <-r.done:
		metrics.TokenPrefetch(tenant, prefetchTaken)
		return r.tokens, r.next, true, r.err
	case <-ctx.Done():
		metrics.TokenPrefetch(tenant, prefetchUnused)
		return nil, time.Time{}, true, ctx.Err()
	}
}

// startLocked starts rounds for st's waiting Pods while it has room (prefetchConcurrency,
// prefetchHeld), after dropping its rounds older than prefetchTTL when it has none.
func (p *TokenPrefetcher) startLocked(st *tenantTokens) {
	if len(st.rounds) >= prefetchHeld {
		now := p.now()
		for uid, r := range st.rounds {
			if now.Sub(r.at) > prefetchTTL {
				delete(st.rounds, uid)
				metrics.TokenPrefetch(st.c.Name, prefetchUnused)
			}
		}
	}
	for st.running < prefetchConcurrency && len(st.pending) > 0 && len(st.rounds)+st.running < prefetchHeld {
		next := st.pending[0]
		st.pending[0] = pendingPod{}
		st.pending = st.pending[1:]
		if len(st.pending) == 0 {
			st.pending = nil // let the drained backing array go
		}
		st.running++
		go p.run(st, next)
	}
}

// run requests the tokens of waiting Pod w of st, if it still qualifies, as a round Take can
// find, then starts the next.
func (p *TokenPrefetcher) run(st *tenantTokens, w pendingPod) {
	if r := p.round(st, w); r != nil {
		p.mu.Lock()
		if p.tenants[st.c.Name] == st {
			st.rounds[w.uid] = r
		}
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(st.ctx, prefetchTTL)
		r.tokens, r.next, r.err = requestTokens(ctx, st.c, r.pod, r.srcs)
		cancel()
		r.pod = nil
		close(r.done)
	}
	p.mu.Lock()
	st.running--
	p.startLocked(st)
	p.mu.Unlock()
}

// round returns a round, not started, for waiting Pod w of st: nil when the Pod is no longer
// cached whole with w's UID, is being deleted, needs no tokens, has more token sources than
// its policy allows, or its ServiceAccount has no super copy yet (its reconcile waits for it).
func (p *TokenPrefetcher) round(st *tenantTokens, w pendingPod) *tokenPrefetch {
	obj, _, _ := st.c.Informers.Core().V1().Pods().Informer().GetIndexer().GetByKey(w.key)
	cp, ok := obj.(*podcache.Pod)
	if !ok || !cp.Full() || cp.UID != w.uid || cp.DeletionTimestamp != nil {
		return nil
	}
	full, err := cp.Pod() // read only: requestTokens reads its name, UID and ServiceAccount
	if err != nil {
		return nil
	}
	srcs, _ := tokenSources(&full.Spec)
	if len(srcs) == 0 {
		return nil
	}
	// What the policy refuses gets no token, as in its reconcile; a RuntimeClass the policy
	// does not allow, or a PriorityClass that is not public, is left to the reconcile (it asks
	// the apiservers, or reports the Pod).
	if rc := full.Spec.RuntimeClassName; rc != nil && *rc != "" && !policy.RuntimeClassAllowed(st.c.Policy().Pods(), *rc) {
		return nil
	}
	if pc := full.Spec.PriorityClassName; pc != "" && !slices.Contains(systemPriorityClasses, pc) && !priorityclass.IsPublic(p.env, pc) {
		return nil
	}
	if policyDenial(p.env, st.c, full.Namespace, &full.Spec, false) != nil {
		return nil
	}
	if !serviceAccountCopied(p.env, resources.SuperNamespace(st.c, full.Namespace), full.Spec.ServiceAccountName) {
		return nil
	}
	return &tokenPrefetch{srcs: srcs, done: make(chan struct{}), at: p.now(), pod: full}
}
