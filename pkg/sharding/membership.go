package sharding

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// LabelRing is put on every shard Lease; its value names the ring (the syncer deployment), so
// two syncer deployments in one namespace keep separate rings.
const LabelRing = "tenancy.vcsyncer.io/shard-ring"

// LeaseName returns the name of the Lease of shard id.
func LeaseName(id string) string { return "vc-syncer-shard-" + id }

// Defaults of Options.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewInterval = 3 * time.Second
	DefaultRing          = "vc-syncer"
)

var idPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// ValidateID returns an error unless id can name a shard: a DNS-1123 subdomain of at most 200
// characters (so that LeaseName(id) is a valid object name).
func ValidateID(id string) error {
	if len(id) == 0 || len(id) > 200 || !idPattern.MatchString(id) {
		return fmt.Errorf("invalid shard id %q: want lower-case letters, digits, '-' and '.', at most 200 characters, starting and ending with a letter or digit", id)
	}
	return nil
}

// SanitizeID turns a host name (or any string) into a valid shard id: lower case, every other
// character replaced by '-', trimmed to 200 characters.
func SanitizeID(s string) string {
	s = strings.ToLower(s)
	b := []byte(s)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			b[i] = '-'
		}
	}
	out := strings.Trim(string(b), "-.")
	if len(out) > 200 {
		out = strings.Trim(out[:200], "-.")
	}
	if out == "" {
		out = "shard"
	}
	return out
}

// Options configures a Membership.
type Options struct {
	// Client is the super cluster's clientset. Required.
	Client kubernetes.Interface
	// Namespace holds the shard Leases (the syncer's namespace). Required.
	Namespace string
	// ID names this shard (ValidateID). Required.
	ID string
	// Ring names the ring (LabelRing); defaults to DefaultRing.
	Ring string
	// LeaseDuration is how long another shard waits after this shard's last renewal before it
	// takes this shard's tenants (Lease spec.leaseDurationSeconds). Defaults to 15 s.
	LeaseDuration time.Duration
	// RenewInterval is how often the Lease is renewed. Defaults to 3 s; must be at most a third
	// of LeaseDuration. This shard stops syncing (Valid is false) once its last successful
	// renewal is older than LeaseDuration − RenewInterval, so it has stopped before any other
	// shard may start.
	RenewInterval time.Duration
	// VirtualNodes per shard on the ring; defaults to DefaultVirtualNodes.
	VirtualNodes int
	// OnChange, if set, is called (from one goroutine, never concurrently) after the ring
	// changed or this shard's validity changed.
	OnChange func()
	// ExclusiveLease, if set, names a Lease in Namespace (the leader-election Lease of
	// replicas running without sharding) that must be free — absent, released or expired —
	// before this shard claims anything, so that switching a deployment from leader election
	// to sharding never has the old leader and the new shards sync at once.
	ExclusiveLease string
	// Now is the clock (tests); defaults to time.Now.
	Now func() time.Time
}

// Membership keeps this shard's Lease renewed and the ring of live shards up to date.
type Membership struct {
	o      Options
	leases coordinationlisters.LeaseNamespaceLister // set by Run under mu (lister)

	mu        sync.RWMutex
	ring      *Ring
	valid     bool // as of the last recompute (for OnChange); Owner computes it afresh
	lastRenew time.Time
	// observed is, per Lease name, its last renewTime and when this process first saw that
	// value: another shard counts as live until LeaseDuration after that moment, by this
	// process's clock only (client-go leader election's observedTime), so clock skew between
	// replicas does not shorten the wait.
	observed map[string]observation
	// settled is set one RenewInterval after the first renewal: replicas started together
	// (a rollout, a restart of all) have then created their Leases, so this shard's first
	// ring has them and it does not take every tenant only to hand most of them on.
	settled    bool
	firstRenew time.Time
}

type observation struct {
	renew string
	at    time.Time
}

// New returns a Membership; call Run to join the ring. It returns an error for missing or
// invalid options.
func New(o Options) (*Membership, error) {
	if o.Client == nil || o.Namespace == "" {
		return nil, errors.New("sharding: Options.Client and Namespace are required")
	}
	if err := ValidateID(o.ID); err != nil {
		return nil, err
	}
	if o.Ring == "" {
		o.Ring = DefaultRing
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.RenewInterval <= 0 {
		o.RenewInterval = DefaultRenewInterval
	}
	if o.LeaseDuration < time.Second || o.LeaseDuration%time.Second != 0 || o.RenewInterval*3 > o.LeaseDuration {
		return nil, fmt.Errorf("sharding: the lease duration (%s) must be whole seconds, at least 1s and at least 3 renew intervals (%s)", o.LeaseDuration, o.RenewInterval)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Membership{o: o, observed: map[string]observation{}}, nil
}

// lister returns the Lease lister, nil until Run has synced it.
func (m *Membership) lister() coordinationlisters.LeaseNamespaceLister {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.leases
}

// ID returns this shard's id.
func (m *Membership) ID() string { return m.o.ID }

// Run joins the ring: it creates or takes over this shard's Lease, renews it every
// RenewInterval and watches the ring's Leases until ctx is done. It does not delete the Lease
// when ctx ends (Leave does). It returns an error only when the Lease watch cannot start.
func (m *Membership) Run(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("sharding").WithValues("shard", m.o.ID)
	sel := labels.SelectorFromSet(labels.Set{LabelRing: m.o.Ring}).String()
	f := informers.NewSharedInformerFactoryWithOptions(m.o.Client, 0, informers.WithNamespace(m.o.Namespace),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = sel }))
	inf := f.Coordination().V1().Leases()
	lister := inf.Lister().Leases(m.o.Namespace)
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, n any) { poke(n) }, DeleteFunc: poke,
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return ctx.Err()
	}
	m.mu.Lock()
	m.leases = lister
	m.mu.Unlock()
	renew := time.NewTicker(m.o.RenewInterval)
	defer renew.Stop()
	// Expiry is a matter of time, not of events: the ring is recomputed every second too.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// Once Run returns nothing renews the Lease: this shard may not act for any tenant.
	defer func() {
		m.mu.Lock()
		m.lastRenew, m.settled = time.Time{}, false
		m.mu.Unlock()
	}()
	m.renew(ctx, log)
	m.recompute(log)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-renew.C:
			m.renew(ctx, log)
		case <-changed:
		case <-tick.C:
		}
		m.recompute(log)
	}
}

// renew creates this shard's Lease or renews it.
func (m *Membership) renew(ctx context.Context, log logr.Logger) {
	now := m.o.Now()
	leases := m.o.Client.CoordinationV1().Leases(m.o.Namespace)
	name := LeaseName(m.o.ID)
	rctx, cancel := context.WithTimeout(ctx, m.o.RenewInterval)
	defer cancel()
	l, err := leases.Get(rctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.o.Namespace,
			Labels: map[string]string{LabelRing: m.o.Ring}}}
		m.fill(l, now, true)
		_, err = leases.Create(rctx, l, metav1.CreateOptions{})
	case err == nil:
		m.fill(l, now, l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != m.o.ID)
		_, err = leases.Update(rctx, l, metav1.UpdateOptions{})
	}
	if err != nil {
		if ctx.Err() == nil {
			log.Error(err, "Cannot renew the shard Lease", "lease", name)
		}
		return
	}
	m.mu.Lock()
	m.lastRenew = now
	if m.firstRenew.IsZero() {
		m.firstRenew = now
	}
	m.mu.Unlock()
}

func (m *Membership) fill(l *coordinationv1.Lease, now time.Time, acquired bool) {
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[LabelRing] = m.o.Ring
	l.Spec.HolderIdentity = ptr.To(m.o.ID)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(m.o.LeaseDuration / time.Second))
	l.Spec.RenewTime = &metav1.MicroTime{Time: now}
	if acquired || l.Spec.AcquireTime == nil {
		l.Spec.AcquireTime = &metav1.MicroTime{Time: now}
	}
}

// recompute rebuilds the ring from the live Leases and calls OnChange when it or this shard's
// validity changed.
func (m *Membership) recompute(log logr.Logger) {
	now := m.o.Now()
	var live []string
	if all, err := m.lister().List(labels.Everything()); err == nil {
		for _, l := range all {
			if id := m.liveShard(l); id != "" {
				live = append(live, id)
			}
		}
	}
	m.mu.Lock()
	settle := !m.settled && !m.firstRenew.IsZero() && now.Sub(m.firstRenew) >= m.o.RenewInterval
	m.mu.Unlock()
	if settle && m.exclusiveHeld(log) {
		settle = false
	}
	m.mu.Lock()
	if settle {
		m.settled = true
	}
	valid := m.validLocked(now)
	if valid && !slices.Contains(live, m.o.ID) {
		live = append(live, m.o.ID) // renewed, not in the cache yet
	}
	ring := NewRing(live, m.o.VirtualNodes)
	changed := valid != m.valid || !slices.Equal(ring.Shards(), m.ring.Shards())
	if changed && valid != m.valid {
		log.Info("Shard validity changed", "valid", valid, "lastRenew", m.lastRenew)
	}
	m.ring, m.valid = ring, valid
	m.mu.Unlock()
	if changed {
		log.Info("Shard ring changed", "shards", ring.Shards(), "valid", valid)
		if m.o.OnChange != nil {
			m.o.OnChange()
		}
	}
}

// liveShard returns the shard id of Lease l if it is live: renewed, by this process's
// observation, within its duration. A Lease first seen now counts as just renewed.
func (m *Membership) liveShard(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return ""
	}
	id := *l.Spec.HolderIdentity
	if l.Name != LeaseName(id) || l.DeletionTimestamp != nil {
		return ""
	}
	if !m.observedLive(l.Name, l.Spec.RenewTime.String(), time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second) {
		return ""
	}
	return id
}

// observedLive records renew as the latest renewTime of Lease name and reports whether it
// changed within d of now, by this process's clock.
func (m *Membership) observedLive(name, renew string, d time.Duration) bool {
	now := m.o.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	ob, ok := m.observed[name]
	if !ok || ob.renew != renew {
		ob = observation{renew: renew, at: now}
		m.observed[name] = ob
	}
	return now.Sub(ob.at) < d
}

// exclusiveHeld reports whether Options.ExclusiveLease is held by a live holder (an error
// reading it counts as held).
func (m *Membership) exclusiveHeld(log logr.Logger) bool {
	if m.o.ExclusiveLease == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.o.RenewInterval)
	defer cancel()
	l, err := m.o.Client.CoordinationV1().Leases(m.o.Namespace).Get(ctx, m.o.ExclusiveLease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		log.Error(err, "Cannot read the leader-election Lease; waiting before claiming tenants", "lease", m.o.ExclusiveLease)
		return true
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return false
	}
	if m.observedLive("exclusive/"+l.Name, l.Spec.RenewTime.String(), time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second) {
		log.Info("A replica without sharding holds the leader-election Lease; waiting for it to stop before claiming tenants",
			"lease", m.o.ExclusiveLease, "holder", *l.Spec.HolderIdentity)
		return true
	}
	return false
}

// validLocked reports whether this shard may act now: it has settled and its last renewal is
// younger than LeaseDuration − RenewInterval. Call with m.mu held.
func (m *Membership) validLocked(now time.Time) bool {
	return m.settled && !m.lastRenew.IsZero() && now.Sub(m.lastRenew) < m.o.LeaseDuration-m.o.RenewInterval
}

// Owner returns the shard that should sync tenant, and whether this shard can tell: false
// until one RenewInterval after its first renewal (so that replicas started together see each
// other first), and while this shard's own Lease is not renewed in time (then it must not act
// for any tenant).
func (m *Membership) Owner(tenant string) (string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.validLocked(m.o.Now()) || m.ring == nil {
		return "", false
	}
	return m.ring.Owner(tenant), true
}

// Owns reports whether this shard should sync tenant now: its Lease is valid and the ring
// maps tenant to it. It is the syncer's write fence.
func (m *Membership) Owns(tenant string) bool {
	owner, ok := m.Owner(tenant)
	return ok && owner == m.o.ID
}

// Live reports whether shard id holds a live Lease (renewed within its duration, by this
// process's clock). A shard that is not live may have its tenants taken, so a Lease the cache
// shows expired (or no Lease) is read again from the apiserver before the answer is false: a
// watch that lags must not declare a renewing shard dead. Any doubt (an error) answers true.
func (m *Membership) Live(id string) bool {
	if id == m.o.ID {
		m.mu.RLock()
		defer m.mu.RUnlock()
		return m.validLocked(m.o.Now())
	}
	leases := m.lister()
	if leases == nil {
		return true // not watching yet: assume the worst
	}
	if l, err := leases.Get(LeaseName(id)); err == nil && m.liveShard(l) == id {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.o.RenewInterval)
	defer cancel()
	l, err := m.o.Client.CoordinationV1().Leases(m.o.Namespace).Get(ctx, LeaseName(id), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		return true
	}
	return m.liveShard(l) == id
}

// Shards returns the live shards of the ring, sorted.
func (m *Membership) Shards() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.ring.Shards()
}

// Leave deletes this shard's Lease (with its resourceVersion as precondition), so the other
// shards take its tenants without waiting for it to expire. Call it after the shard released
// its tenants.
func (m *Membership) Leave(ctx context.Context) error {
	leases := m.o.Client.CoordinationV1().Leases(m.o.Namespace)
	l, err := leases.Get(ctx, LeaseName(m.o.ID), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != m.o.ID {
		return nil
	}
	err = leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &l.ResourceVersion}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
