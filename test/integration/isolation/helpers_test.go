package isolation

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// Signal names of the tenant-policy contract (pkg/policy): the reason of the Warning Event on
// a refused tenant object, the Pod condition reason, and the counter of refusals.
const (
	reasonPolicyDenied = "PolicyDenied"
	denialsMetric      = "vcsyncer_policy_denials_total"
)

// Bounds of the waits. Every assertion polls; none waits longer than maxWait.
const (
	maxWait = 30 * time.Second
	poll    = 200 * time.Millisecond
	// After a signal, the refusal must hold for settleSignal + quietWindow, and the denial
	// counter may rise by at most one per refused object in quietWindow (a status update the
	// signal itself caused may be reconciled once more; a hot loop rises all the time).
	settleSignal = time.Second
	quietWindow  = 3 * time.Second
	settleFor    = 4 * time.Second // attacks without a required signal: how long nothing may escape
)

// suite is the one environment of the package: a super cluster with three kwok Nodes (0: a
// general Node, 1: tenant B's dedicated Node, 2: a control-plane Node), tenants A and B
// registered with the syncer's built-in default policy, and B's workload (see setUpB).
type suite struct {
	env   *localcluster.Environment
	c     client.Client // super cluster, the syncer's scheme (Tenants)
	super kubernetes.Interface
	a, b  *localcluster.ControlPlane
	// superQuiet and bQuiet are clients without API warnings (the snapshots list the
	// deprecated Endpoints).
	superQuiet, bQuiet kubernetes.Interface
	aUID, bUID         string
	// aNS is tenant A's namespace for most attacks, aSuperNS its super namespace.
	aNS, aSuperNS string
	// bSuperNS is the super namespace of B's namespace bNS.
	bSuperNS   string
	bPodIP     string // B's super Pod's IP
	bClaimUID  string // B's bound claim's UID (tenant side)
	metricsURL string // the syncer's metrics endpoint (http://host:port)
	// kubeletPort is the port of the syncer's kubelet API on 127.0.0.1.
	kubeletPort int
}

// Names of B's workload in its namespace bNS.
const (
	bNS       = "data"
	bPod      = "web"
	bSecret   = "creds"
	bClaim    = "claim"
	bService  = "web"
	bConfig   = "conf"
	bHost     = "b.example.com" // the host of B's Ingress
	aNS       = "attack"
	dedicated = "dedicated" // taint and label key of B's dedicated Node
)

// Super Nodes by role.
var (
	generalNode   = localcluster.FakeNodeName(0)
	bNode         = localcluster.FakeNodeName(1)
	systemNode    = localcluster.FakeNodeName(2)
	controlPlane  = "node-role.kubernetes.io/control-plane"
	criticalAddon = "CriticalAddonsOnly"
)

// isANS reports whether super namespace ns (with labels) belongs to tenant A.
func (s *suite) isANS(ns string, labels map[string]string) bool {
	return strings.HasPrefix(ns, conversion.SuperNamespacePrefix(s.a.Name, s.aUID)) || labels[conversion.LabelTenantUID] == s.aUID
}

// ---- signals ----

// denials returns the sum of vcsyncer_policy_denials_total{tenant, kind ∈ kinds, rule ∈ rules}
// in the in-process registry (kinds and rules compared case-insensitively; nil rules: any).
func denials(tenant string, kinds, rules []string) float64 {
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return -1
	}
	in := func(v string, set []string) bool {
		if set == nil {
			return true
		}
		for _, s := range set {
			if strings.EqualFold(s, v) {
				return true
			}
		}
		return false
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != denialsMetric {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if l["tenant"] == tenant && in(l["kind"], kinds) && in(l["rule"], rules) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// deniedEvents returns the PolicyDenied Warning Events (any namespace: Events about
// cluster-scoped objects go to "default") about the tenant object kind/name whose message
// starts with "<rule>:" for one of rules (nil: any), and the sum of their counts.
func deniedEvents(ctx context.Context, c kubernetes.Interface, kind, name string, rules []string) ([]corev1.Event, int32, error) {
	evs, err := c.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return nil, 0, err
	}
	var out []corev1.Event
	var n int32
	for _, e := range evs.Items {
		if e.Reason != reasonPolicyDenied || !strings.EqualFold(e.InvolvedObject.Kind, kind) {
			continue
		}
		ok := rules == nil
		for _, r := range rules {
			if strings.HasPrefix(e.Message, r+":") {
				ok = true
			}
		}
		if !ok {
			continue
		}
		out = append(out, e)
		n += max(e.Count, 1)
	}
	return out, n, nil
}

// eventSummary lists every Event about name (any reason), for failure messages.
func eventSummary(ctx context.Context, c kubernetes.Interface, name string) string {
	evs, err := c.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return err.Error()
	}
	if len(evs.Items) == 0 {
		return "no Events at all"
	}
	var parts []string
	for _, e := range evs.Items {
		parts = append(parts, fmt.Sprintf("%s %s %q ×%d", e.Type, e.Reason, truncate(e.Message, 160), e.Count))
	}
	return strings.Join(parts, "; ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// attack is one attack of tenant A, checked by (*suite).run.
type attack struct {
	// kind is the kind of the tenant objects that get the signal (resources.Kind values).
	kind string
	// ns is their tenant namespace ("" for cluster-scoped), names their names.
	ns    string
	names []string
	// anyOf: the signal on one of names is enough (otherwise on each).
	anyOf bool
	// rules are the rule names the refusal may carry (the first one is the expected one; more
	// when a broader rule may refuse first, e.g. serviceType before loadBalancerIP).
	rules []string
	// create makes tenant A's attack objects.
	create func(ctx context.Context) error
	// escaped looks at the super cluster and returns a description of the escape, or nil.
	escaped func(ctx context.Context) error
	// superPod, for a Pod attack, is the super Pod's name: when it does not exist after the
	// signal, the tenant Pod must have PodScheduled=False with reason PolicyDenied.
	superPod string
}

// run runs attack a: snapshots B's objects and the super objects outside A's namespaces, makes
// the attack, waits (at most maxWait) for the signal — a PolicyDenied Warning Event with one of
// a.rules on A's object(s) and a rise of the denial counter — failing at once if the attack
// escapes first; then checks for quietWindow that nothing escapes and the refusal is not
// retried in a hot loop; then compares the snapshots.
func (s *suite) run(t *testing.T, a attack) {
	t.Helper()
	ctx := context.Background()
	before := s.snapshot(t)
	c0 := denials(s.a.Name, []string{a.kind}, a.rules)
	if err := a.create(ctx); apierrors.IsInvalid(err) {
		t.Skipf("tenant A's own apiserver refuses the attack objects, so the syncer never sees them: %v", err)
	} else if err != nil {
		t.Fatalf("creating the attack objects in tenant A: %v", err)
	}
	defer s.compare(t, before)

	deadline := time.Now().Add(maxWait)
	for {
		if err := a.escaped(ctx); err != nil {
			t.Errorf("ATTACK ESCAPED (%s): %v", strings.TrimPrefix(t.Name(), "TestIsolation/"), err)
			if ok, why := s.signalled(ctx, a, c0); !ok {
				t.Errorf("and no refusal signal: %s", why)
			}
			return
		}
		ok, why := s.signalled(ctx, a, c0)
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("no refusal signal within %s (nothing escaped so far): %s", maxWait, why)
			return
		}
		time.Sleep(poll)
	}

	// The signal came: the refusal must hold and must not be retried in a hot loop.
	var c1 float64
	start := time.Now()
	for measuring := false; time.Since(start) < settleSignal+quietWindow; time.Sleep(250 * time.Millisecond) {
		if !measuring && time.Since(start) >= settleSignal {
			c1, measuring = denials(s.a.Name, []string{a.kind}, a.rules), true
		}
		if err := a.escaped(ctx); err != nil {
			t.Errorf("ATTACK ESCAPED after its refusal was signalled (%s): %v", t.Name(), err)
			return
		}
	}
	c2 := denials(s.a.Name, []string{a.kind}, a.rules)
	if rise := c2 - c1; rise > float64(len(a.names)) {
		t.Errorf("hot loop: %s{tenant=%q,kind=%q,rule∈%v} rose by %v in %s after the signal (from %v to %v; %d refused objects)",
			denialsMetric, s.a.Name, a.kind, a.rules, rise, quietWindow, c1, c2, len(a.names))
	}
	for _, n := range a.names {
		if _, count, err := deniedEvents(ctx, s.a.Client, a.kind, n, a.rules); err == nil && count > 5 {
			t.Errorf("hot loop: %d PolicyDenied Events about %s %s within %s", count, a.kind, n, maxWait+settleSignal+quietWindow)
		}
	}
	if a.superPod != "" {
		if _, err := s.super.CoreV1().Pods(s.superNSOf(a.ns)).Get(ctx, a.superPod, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			s.checkPodScheduledDenied(t, a.ns, a.names[0])
		}
	}
}

// signalled reports whether the refusal signal of a is there (and if not, why).
func (s *suite) signalled(ctx context.Context, a attack, c0 float64) (bool, string) {
	var missing []string
	seen := 0
	for _, n := range a.names {
		evs, _, err := deniedEvents(ctx, s.a.Client, a.kind, n, a.rules)
		if err != nil {
			return false, err.Error()
		}
		if len(evs) == 0 {
			missing = append(missing, fmt.Sprintf("%s %s/%s has no %s Event with rule %s (its Events: %s)",
				a.kind, a.ns, n, reasonPolicyDenied, strings.Join(a.rules, " or "), eventSummary(ctx, s.a.Client, n)))
		} else {
			seen++
		}
	}
	if seen == 0 || (!a.anyOf && len(missing) > 0) {
		return false, strings.Join(missing, "; ")
	}
	if c := denials(s.a.Name, []string{a.kind}, a.rules); c <= c0 {
		return false, fmt.Sprintf("Events are there but %s{tenant=%q,kind=%q,rule∈%v} did not rise (still %v)", denialsMetric, s.a.Name, a.kind, a.rules, c)
	}
	return true, ""
}

// checkPodScheduledDenied checks that tenant A's Pod ns/name has PodScheduled=False with
// reason PolicyDenied (waiting at most maxWait).
func (s *suite) checkPodScheduledDenied(t *testing.T, ns, name string) {
	t.Helper()
	itest.Eventually(t, maxWait, "refused tenant Pod "+ns+"/"+name+" has PodScheduled=False reason PolicyDenied", func(ctx context.Context) error {
		p, err := s.a.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				if c.Status == corev1.ConditionFalse && c.Reason == reasonPolicyDenied {
					return nil
				}
				return itest.Errorf("PodScheduled=%s reason %q message %q", c.Status, c.Reason, c.Message)
			}
		}
		return itest.Errorf("no PodScheduled condition (conditions %+v)", p.Status.Conditions)
	})
}

// superNSOf returns the super namespace of tenant A's namespace ns.
func (s *suite) superNSOf(ns string) string { return conversion.SuperNamespace(s.a.Name, s.aUID, ns) }

// settled waits until reached reports that the syncer acted on the attack (or A got a
// PolicyDenied Event about kind/name), failing fast when the attack escapes, then checks for
// settleFor that nothing escapes. For attacks whose refusal needs no signal (a part filtered
// by design, or a translation).
func (s *suite) settled(t *testing.T, kind, name string, reached, escaped func(ctx context.Context) error) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(maxWait)
	for {
		if err := escaped(ctx); err != nil {
			t.Errorf("ATTACK ESCAPED (%s): %v", strings.TrimPrefix(t.Name(), "TestIsolation/"), err)
			return
		}
		if evs, _, _ := deniedEvents(ctx, s.a.Client, kind, name, nil); len(evs) > 0 {
			break
		}
		err := reached(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the syncer did not act on the attack within %s: %v (Events: %s)", maxWait, err, eventSummary(ctx, s.a.Client, name))
			return
		}
		time.Sleep(poll)
	}
	end := time.Now().Add(settleFor)
	for time.Now().Before(end) {
		if err := escaped(ctx); err != nil {
			t.Errorf("ATTACK ESCAPED (%s): %v", strings.TrimPrefix(t.Name(), "TestIsolation/"), err)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// ---- snapshots ----

// snapshot is a normalised view of objects: "Kind ns/name" → object without status,
// resourceVersion and managedFields (Nodes also without annotations, which kwok and the node
// controllers write).
type snapshot map[string]map[string]any

// snapshots holds the two views one attack is compared against.
type snapshots struct {
	super snapshot // super objects outside A's namespaces, and cluster-scoped objects
	b     snapshot // tenant B's objects (in B's control plane)
}

func (s *suite) snapshot(t *testing.T) snapshots {
	t.Helper()
	ctx := context.Background()
	sup, err := s.superOutsideA(ctx)
	if err != nil {
		t.Fatalf("snapshot of the super cluster: %v", err)
	}
	b, err := tenantObjects(ctx, s.bQuiet, bNS)
	if err != nil {
		t.Fatalf("snapshot of tenant B: %v", err)
	}
	return snapshots{super: sup, b: b}
}

// compare fails the test with every difference between before and now.
func (s *suite) compare(t *testing.T, before snapshots) {
	t.Helper()
	now := s.snapshot(t)
	if d := diff(before.super, now.super); len(d) > 0 {
		t.Errorf("super objects outside tenant A's namespaces changed:\n  %s", strings.Join(d, "\n  "))
	}
	if d := diff(before.b, now.b); len(d) > 0 {
		t.Errorf("tenant B's objects changed:\n  %s", strings.Join(d, "\n  "))
	}
}

// superOutsideA lists the super objects that no attack of A may change: every namespaced
// object of the compared kinds outside A's super namespaces (vc-syncer-system, where the
// syncer writes checkpoints and the suite registers Tenants, excluded), super Namespaces other
// than A's, PersistentVolumes not bound into A's namespaces (and every PV labelled for another
// tenant), Nodes, and the cluster-scoped classes.
func (s *suite) superOutsideA(ctx context.Context) (snapshot, error) {
	out := snapshot{}
	nsl, err := s.super.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	skip := map[string]bool{itest.KubeconfigNS: true}
	for _, ns := range nsl.Items {
		if s.isANS(ns.Name, ns.Labels) {
			skip[ns.Name] = true
			continue
		}
		if err := out.add("Namespace", &ns); err != nil {
			return nil, err
		}
	}
	objs, err := listNamespaced(ctx, s.superQuiet, "")
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if !skip[o.obj.GetNamespace()] {
			if err := out.add(o.kind, o.obj); err != nil {
				return nil, err
			}
		}
	}
	pvs, err := s.super.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		owner := pv.Labels[conversion.LabelTenantUID]
		intoA := pv.Spec.ClaimRef != nil && skip[pv.Spec.ClaimRef.Namespace]
		if (owner != "" && owner != s.aUID) || (owner == "" && !intoA) {
			if err := out.add("PersistentVolume", pv); err != nil {
				return nil, err
			}
		}
	}
	nodes, err := s.super.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range nodes.Items {
		n := nodes.Items[i].DeepCopy()
		n.Annotations = nil
		// Lifecycle taints (not-ready, unreachable) come and go with kwok's heartbeats on a
		// busy machine; they are the node controller's, not an attack's.
		var taints []corev1.Taint
		for _, tn := range n.Spec.Taints {
			if !strings.HasPrefix(tn.Key, "node.kubernetes.io/") {
				taints = append(taints, tn)
			}
		}
		n.Spec.Taints = taints
		if err := out.add("Node", n); err != nil {
			return nil, err
		}
	}
	cluster, err := listClusterClasses(ctx, s.super)
	if err != nil {
		return nil, err
	}
	for _, o := range cluster {
		if err := out.add(o.kind, o.obj); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// tenantObjects lists a tenant's objects in namespace ns and its PersistentVolumes, with
// status kept for claims and volumes (a bound claim must stay bound to the same volume).
func tenantObjects(ctx context.Context, c kubernetes.Interface, ns string) (snapshot, error) {
	out := snapshot{}
	objs, err := listNamespaced(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if err := out.add(o.kind, o.obj); err != nil {
			return nil, err
		}
	}
	pvs, err := c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range pvs.Items {
		if err := out.add("PersistentVolume", &pvs.Items[i]); err != nil {
			return nil, err
		}
	}
	claims, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range claims.Items {
		out["PersistentVolumeClaim.status "+ns+"/"+claims.Items[i].Name] = map[string]any{
			"phase": string(claims.Items[i].Status.Phase), "volume": claims.Items[i].Spec.VolumeName,
		}
	}
	return out, nil
}

// add stores the normalised form of obj under "kind ns/name".
func (sn snapshot) add(kind string, obj metav1.Object) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "resourceVersion")
		delete(md, "managedFields")
	}
	key := kind + " " + obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		key = kind + " " + ns + "/" + obj.GetName()
	}
	sn[key] = m
	return nil
}

// diff lists the objects that appeared, disappeared or changed between a and b, with the
// changed fields.
func diff(a, b snapshot) []string {
	var out []string
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			out = append(out, k+": deleted")
			continue
		}
		if !reflect.DeepEqual(av, bv) {
			out = append(out, k+": "+strings.Join(fieldDiff("", av, bv), ", "))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k+": created")
		}
	}
	sort.Strings(out)
	return out
}

// fieldDiff names the fields that differ between two JSON values (maps recursed two levels).
func fieldDiff(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok || strings.Count(path, ".") >= 2 {
		aj, _ := json.Marshal(a)
		bj, _ := json.Marshal(b)
		return []string{fmt.Sprintf("%s: %s → %s", strings.TrimPrefix(path, "."), truncate(string(aj), 120), truncate(string(bj), 120))}
	}
	var out []string
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if !reflect.DeepEqual(am[k], bm[k]) {
			out = append(out, fieldDiff(path+"."+k, am[k], bm[k])...)
		}
	}
	return out
}

// ---- small helpers ----

// superPod returns tenant A's super Pod name in super namespace ns, nil when it does not exist.
func (s *suite) superPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	p, err := s.super.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return p, err
}

// podEscape returns an escaped func for a Pod attack: check is called on A's super Pod
// name (in A's super namespace of aNS) once it exists.
func (s *suite) podEscape(name string, check func(p *corev1.Pod) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		p, err := s.superPod(ctx, s.aSuperNS, name)
		if err != nil || p == nil {
			return nil
		}
		if err := check(p); err != nil {
			return fmt.Errorf("super Pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	}
}

// basePod returns a minimal tenant Pod without a service-account token.
func basePod(name string) *corev1.Pod {
	f := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"attack": name}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: &f,
			Containers:                   []corev1.Container{{Name: "c", Image: "busybox"}},
		},
	}
}

func ptr[T any](v T) *T { return &v }
