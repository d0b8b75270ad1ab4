package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// The ownership contract of super objects (see the architecture page): a label to select
// them, annotations to map them back to their tenant object. Never parse super names.
const (
	labelManagedBy      = "tenancy.vcsyncer.io/managed-by"
	managedByValue      = "vc-syncer"
	labelTenantUID      = "tenancy.vcsyncer.io/tenant-uid"
	annotationTenant    = "tenancy.vcsyncer.io/tenant"
	annotationTenantUID = "tenancy.vcsyncer.io/tenant-uid"
	annotationNamespace = "tenancy.vcsyncer.io/namespace"
	annotationName      = "tenancy.vcsyncer.io/name"
	annotationUID       = "tenancy.vcsyncer.io/uid"
	// annotationTokenPrefix followed by n is the super Pod annotation with the tenant-issued
	// token of the Pod's n-th projected serviceAccountToken source.
	annotationTokenPrefix = "tenancy.vcsyncer.io/sa-token."
	// labelVNode marks the virtual Nodes the syncer creates in a tenant.
	labelVNode = "tenancy.vcsyncer.io/vnode"
)

// Bounds of the polls. The whole test takes about 4-6 minutes on 2 cores.
const (
	settleTimeout  = 3 * time.Minute
	deleteTimeout  = 3 * time.Minute
	barrierTimeout = 90 * time.Second
	pollInterval   = 3 * time.Second
)

// TestRealWorld applies every apply-ready manifest of the real-world corpus into two tenants
// at once (same namespaces, same names) through kubectl, with vc-syncer running as a
// process, and checks what a user of either tenant would see:
//
//  1. every tenant Pod that can run is Running (Job Pods Succeeded) with the super Pod's
//     nodeName and podIP;
//  2. Pods that wait or fail show the super Pod's state (phase, container states) in the tenant;
//  3. each tenant's objects live in its own mapped super namespace, found by the ownership
//     annotations, with the tenant's content (ConfigMap/Secret data, Service ports and
//     selector, container images, labels);
//  4. Services get the super Service's status.loadBalancer (the test plays the cloud load
//     balancer controller in the super cluster);
//  5. NEGATIVE and needs-conversion manifests are rejected by the tenant apiserver and add no
//     super object;
//  6. a CoreDNS per tenant (in place of its CoreDNS Pod) answers, queried the way a super Pod's
//     dnsConfig says, every ClusterIP Service name with the tenant ClusterIP and every
//     StatefulSet Pod name <pod>.<svc>.<ns>.svc.cluster.local with the super Pod's IP;
//  7. deleting everything removes every super object the syncer created for those namespaces;
//  8. every super Pod carries the tenant Pod's requests and limits (each container and init
//     container, and the pod-level spec.resources) and the same status.qosClass.
//
// Known gaps (expectations_test.go) are logged, never skipped silently.
func TestRealWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("TestRealWorld starts a super cluster, two tenants and vc-syncer and runs for minutes; skipped with -short")
	}
	root := itest.RepoRoot(t)
	corpusDir := filepath.Clean(filepath.Join(root, "..", "shared", "realworld"))
	if _, err := os.Stat(filepath.Join(corpusDir, "SOURCES.md")); err != nil {
		t.Skipf("real-world corpus not found at %s: CI checks out ../shared/ beside the clone, and the project never "+
			"copies the corpus into the repository (%v)", corpusDir, err)
	}
	start := time.Now()
	manifests := loadCorpus(t, corpusDir)
	bin := itest.BuildSyncer(t)
	var syncerLog string
	keepSyncerLog(t, &syncerLog)
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 3}, 2)
	rw := setUp(t, env, bin, manifests)
	syncerLog = rw.syncer.logPath
	rw.logExpectations()

	t.Run("negative manifests are rejected and add no super object", rw.testNegatives)
	t.Run("apply-ready manifests are accepted by both tenants", rw.testApply)
	t.Run("tenants mirror the super cluster", rw.testSettled)
	t.Run("tenant DNS answers the tenants' names", rw.testDNS)
	rw.logSummary()
	t.Run("deleting everything removes the super objects", rw.testDelete)
	t.Logf("TestRealWorld: %d manifests, %d documents, 2 tenants, %s in all",
		len(manifests), rw.documentCount(), time.Since(start).Round(time.Second))
}

// realWorld is the state of one TestRealWorld run.
type realWorld struct {
	t         *testing.T
	manifests []*manifest
	syncer    *syncerProcess
	super     *localcluster.ControlPlane
	superC    *clusterClients
	tenants   []*tenantUnderTest

	// namespaces are the tenant namespaces the manifests go into; created are those the test
	// (or a manifest) creates and deletes at the end; preexisting are the others (default...).
	namespaces  map[string]bool
	created     map[string]bool
	preexisting map[string]bool

	mu sync.Mutex
	// accepted maps every document the tenants accepted to its manifest (same in both tenants).
	accepted map[objKey]*manifest
	// rejected are the documents of NEGATIVE and needs-conversion manifests the tenants refused.
	rejected map[objKey]*manifest
	// baseline are the super objects that existed before anything was applied.
	baseline map[superRef]bool
	// tenantBaseline are tenant objects in pre-existing namespaces before anything was applied.
	tenantBaseline map[string]map[objKey]bool
	// lbIPs counts the load-balancer IPs the test handed out.
	lbIPs int
	// observations are state notes per manifest, printed in the summary.
	observations map[string][]string
	// barrierNS are the namespaces that got a barrier ConfigMap (deleted at the end).
	barrierNS map[string]bool
	// sticky are violations of "never" expectations seen at any time while settling.
	sticky         map[int][]string
	stickySeen     map[string]bool
	stickySuspects []suspect
}

// tenantUnderTest is one tenant control plane and what the test knows about it.
type tenantUnderTest struct {
	cp      *localcluster.ControlPlane
	name    string
	uid     string
	c       *clusterClients
	kubectl *kubectl
	owners  sync.Map // types.UID → objKey of the top-level owner
}

func setUp(t *testing.T, env *localcluster.Environment, bin string, manifests []*manifest) *realWorld {
	t.Helper()
	rw := &realWorld{
		t: t, manifests: manifests, super: env.Super, superC: newClusterClients(t, env.Super),
		namespaces: map[string]bool{}, created: map[string]bool{}, preexisting: map[string]bool{},
		accepted: map[objKey]*manifest{}, rejected: map[objKey]*manifest{}, baseline: map[superRef]bool{},
		tenantBaseline: map[string]map[objKey]bool{}, observations: map[string][]string{},
		barrierNS: map[string]bool{}, sticky: map[int][]string{}, stickySeen: map[string]bool{},
	}
	rw.syncer = startSyncer(t, bin, env.Super)
	// The syncer installs the Tenant CRD at start-up; `tenant add` needs it served.
	err := poll(t.Context(), time.Minute, 500*time.Millisecond, func(ctx context.Context) error {
		if err := rw.syncer.exited(); err != nil {
			return stopPolling{err}
		}
		_, err := rw.superC.dyn.Resource(tenantGVR).List(ctx, metav1.ListOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("the Tenant API is not served: %v", err)
	}
	for _, cp := range env.Tenants {
		rw.syncer.addTenant(t, cp)
	}
	for _, cp := range env.Tenants {
		tu := &tenantUnderTest{cp: cp, name: cp.Name, c: newClusterClients(t, cp), kubectl: newKubectl(t, cp)}
		tu.uid = waitTenantRunning(t, rw.syncer, rw.superC.dyn, cp.Name)
		rw.tenants = append(rw.tenants, tu)
	}
	rw.createStaticVolumes(t)
	if out, _, err := newKubectl(t, env.Super).run(t.Context(), "get", "tenants"); err == nil {
		t.Logf("kubectl get tenants (super cluster):\n%s", out)
	}
	// Both tenants run the same Kubernetes version: one mapper plans both.
	planNamespaces(t, manifests, rw.tenants[0].c.mapper)
	existing, err := rw.tenants[0].cp.Client.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range existing.Items {
		rw.preexisting[ns.Name] = true
	}
	for _, m := range manifests {
		rw.namespaces[m.Namespace] = true
		if !rw.preexisting[m.Namespace] {
			rw.created[m.Namespace] = true
		}
		for _, d := range m.Docs {
			if d.GVK.Kind == "Namespace" && d.GVK.Group == "" && !rw.preexisting[d.Obj.GetName()] {
				rw.namespaces[d.Obj.GetName()], rw.created[d.Obj.GetName()] = true, true
			}
		}
	}
	t.Logf("%d manifests go into %d tenant namespaces (%d created by the test, pre-existing: %s)",
		len(manifests), len(rw.namespaces), len(rw.created), strings.Join(keys(intersect(rw.namespaces, rw.preexisting)), ", "))

	// Baselines: super objects and tenant objects of pre-existing namespaces.
	refs, err := rw.superObjects(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		rw.baseline[r.withoutUID()] = true
	}
	for _, tu := range rw.tenants {
		rw.tenantBaseline[tu.name] = map[objKey]bool{}
		for ns := range intersect(rw.namespaces, rw.preexisting) {
			for _, k := range tu.syncedKindKeys(t, ns) {
				rw.tenantBaseline[tu.name][k] = true
			}
		}
	}
	return rw
}

func intersect(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		if b[k] {
			out[k] = true
		}
	}
	return out
}

// syncedKindKeys lists the ConfigMaps, Secrets, ServiceAccounts and Services of namespace ns.
func (tu *tenantUnderTest) syncedKindKeys(t *testing.T, ns string) []objKey {
	ctx, cs := t.Context(), tu.cp.Client.CoreV1()
	var out []objKey
	cms, err1 := cs.ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	secs, err2 := cs.Secrets(ns).List(ctx, metav1.ListOptions{})
	sas, err3 := cs.ServiceAccounts(ns).List(ctx, metav1.ListOptions{})
	svcs, err4 := cs.Services(ns).List(ctx, metav1.ListOptions{})
	if err := firstErr(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	for _, o := range cms.Items {
		out = append(out, objKey{Kind: "ConfigMap", Namespace: ns, Name: o.Name})
	}
	for _, o := range secs.Items {
		out = append(out, objKey{Kind: "Secret", Namespace: ns, Name: o.Name})
	}
	for _, o := range sas.Items {
		out = append(out, objKey{Kind: "ServiceAccount", Namespace: ns, Name: o.Name})
	}
	for _, o := range svcs.Items {
		out = append(out, objKey{Kind: "Service", Namespace: ns, Name: o.Name})
	}
	return out
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// logExpectations logs every known gap and expected non-running manifest of this corpus.
func (rw *realWorld) logExpectations() {
	t := rw.t
	inCorpus := map[string]*manifest{}
	for _, m := range rw.manifests {
		inCorpus[m.Path] = m
	}
	var lines []string
	for _, p := range keys(knownGaps) {
		if inCorpus[p] == nil {
			continue
		}
		for _, g := range knownGaps[p] {
			l := fmt.Sprintf("  KNOWN GAP (%s) %-28s %s: %s", g.Cause, g.Name, p, g.Reason)
			if g.RealKubelet != "" {
				l += "; a real kubelet would show " + g.RealKubelet
			}
			lines = append(lines, l)
		}
	}
	t.Logf("%d known gaps in this corpus, none of them the syncer's (causes: environment, corpus, design):\n%s", len(lines), strings.Join(lines, "\n"))
	lines = nil
	for _, p := range keys(expectedPending) {
		if inCorpus[p] != nil {
			lines = append(lines, fmt.Sprintf("  %s: %s", p, expectedPending[p]))
		}
	}
	t.Logf("manifests whose Pods are expected to stay Pending in the super cluster (and so in the tenant):\n%s", strings.Join(lines, "\n"))
	lines = nil
	for _, p := range keys(rejectedBySuperPolicy) {
		if inCorpus[p] != nil {
			lines = append(lines, fmt.Sprintf("  %s: %s", p, rejectedBySuperPolicy[p]))
		}
	}
	t.Logf("manifests whose Pods the super cluster refuses by design (Pod Security baseline on super namespaces):\n%s", strings.Join(lines, "\n"))
	for _, set := range []struct {
		what  string
		rules map[string]policyRule
	}{
		{"refuses (no super Pod, PodScheduled=False reason PolicyDenied)", refusedByTenantPolicy},
		{"syncs with a part left out (PolicyDenied Warning Event)", filteredByTenantPolicy},
	} {
		lines = nil
		for _, p := range keys(set.rules) {
			if inCorpus[p] != nil {
				lines = append(lines, fmt.Sprintf("  %s: %s: %s", p, set.rules[p].Rule, set.rules[p].Why))
			}
		}
		t.Logf("manifests whose Pods the built-in tenant policy %s:\n%s", set.what, strings.Join(lines, "\n"))
	}
	lines = nil
	for _, k := range keys(refusedServices) {
		lines = append(lines, fmt.Sprintf("  %s: %s: %s", k, refusedServices[k].Rule, refusedServices[k].Why))
	}
	t.Logf("Services the built-in tenant policy refuses (no super copy):\n%s", strings.Join(lines, "\n"))
}

func gapsOf(path string) []knownGap { return knownGaps[path] }

func podsMayNotRun(path string) bool {
	if _, ok := rejectedBySuperPolicy[path]; ok {
		return true
	}
	if _, ok := refusedByTenantPolicy[path]; ok {
		return true
	}
	for _, g := range knownGaps[path] {
		if g.PodsMayNotRun {
			return true
		}
	}
	return false
}

func rejectedHere(path string) (knownGap, bool) {
	for _, g := range knownGaps[path] {
		if g.Rejected {
			return g, true
		}
	}
	return knownGap{}, false
}

func (rw *realWorld) documentCount() int {
	n := 0
	for _, m := range rw.manifests {
		n += len(m.Docs)
	}
	return n
}

func (rw *realWorld) observe(path, format string, args ...any) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if !contains(rw.observations[path], msg) {
		rw.observations[path] = append(rw.observations[path], msg)
	}
}

// forEachTenant runs f for every tenant in parallel and waits.
func (rw *realWorld) forEachTenant(f func(tu *tenantUnderTest)) {
	var wg sync.WaitGroup
	for _, tu := range rw.tenants {
		wg.Go(func() { f(tu) })
	}
	wg.Wait()
}

// createNamespaces creates the test namespaces, except those an apply-ready manifest creates
// itself (with its own labels) and no negative manifest needs beforehand.
func (rw *realWorld) createNamespaces(t *testing.T) {
	byFile := map[string]bool{}
	for _, m := range rw.manifests {
		for _, d := range m.Docs {
			if d.GVK.Kind == "Namespace" && d.GVK.Group == "" && m.Class != classNegative && m.Class != classNeedsConversion {
				byFile[d.Obj.GetName()] = true
			}
		}
	}
	for _, m := range rw.manifests {
		if m.Class == classNegative || m.Class == classNeedsConversion {
			delete(byFile, m.Namespace)
		}
	}
	rw.forEachTenant(func(tu *tenantUnderTest) {
		for _, ns := range keys(rw.created) {
			if byFile[ns] {
				continue
			}
			_, err := tu.cp.Client.CoreV1().Namespaces().Create(t.Context(),
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Errorf("%s: failed to create namespace %s: %v", tu.name, ns, err)
			}
		}
	})
}

// Expected kubectl errors of rejected documents, by class.
var (
	rejectedRE = map[class]*regexp.Regexp{
		classNegative:        regexp.MustCompile(`cannot be handled as|cannot unmarshal|is invalid|Invalid value|Required value`),
		classNeedsConversion: regexp.MustCompile(`no matches for kind`),
	}
	namespaceMissingRE = regexp.MustCompile(`namespaces? "[^"]*" not found`)
)

// apply runs kubectl apply for one manifest in one tenant.
func (tu *tenantUnderTest) apply(ctx context.Context, m *manifest) (string, error) {
	out, errOut, err := tu.kubectl.run(ctx, "apply", "-n", m.Namespace, "-f", m.File)
	return strings.TrimSpace(out + "\n" + errOut), err
}

// exists reports whether the document's object exists in the tenant (false for kinds the
// tenant does not serve).
func (tu *tenantUnderTest) exists(ctx context.Context, d *document) (bool, error) {
	if d.Mapping == nil {
		return false, nil
	}
	var err error
	if d.Namespace != "" {
		_, err = tu.c.dyn.Resource(d.Mapping.Resource).Namespace(d.Namespace).Get(ctx, d.Obj.GetName(), metav1.GetOptions{})
	} else {
		_, err = tu.c.dyn.Resource(d.Mapping.Resource).Get(ctx, d.Obj.GetName(), metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// testNegatives applies the NEGATIVE and needs-conversion manifests first, into namespaces
// that exist (so a rejection is the manifest's own), and checks that the tenant refused them
// with the expected error and that the syncer created nothing for them.
func (rw *realWorld) testNegatives(t *testing.T) {
	rw.createNamespaces(t)
	var negatives []*manifest
	for _, m := range rw.manifests {
		if m.Class == classNegative || m.Class == classNeedsConversion {
			negatives = append(negatives, m)
		}
	}
	if len(negatives) == 0 {
		t.Log("the corpus has no negative manifest")
		return
	}
	barrierNS := rw.barrierNS
	rw.forEachTenant(func(tu *tenantUnderTest) {
		for _, m := range negatives {
			out, err := tu.apply(t.Context(), m)
			if err == nil {
				t.Errorf("%s: kubectl apply of %s manifest %s succeeded; SOURCES.md says the tenant apiserver rejects it:\n%s",
					tu.name, m.Class, m.Path, out)
			} else if namespaceMissingRE.MatchString(out) {
				t.Errorf("%s: %s was rejected for a missing namespace, not for its content:\n%s", tu.name, m.Path, out)
			} else if !rejectedRE[m.Class].MatchString(out) {
				t.Errorf("%s: %s was rejected with an unexpected error (want %q):\n%s", tu.name, m.Path, rejectedRE[m.Class], out)
			} else {
				t.Logf("%s: %s rejected as expected: %s", tu.name, m.Path, firstLines(out, 2))
			}
			for _, d := range m.Docs {
				ok, err := tu.exists(t.Context(), d)
				if err != nil {
					t.Errorf("%s: %s: %v", tu.name, d, err)
					continue
				}
				rw.mu.Lock()
				switch {
				case ok && m.Class == classNegative:
					t.Errorf("%s: %s of NEGATIVE manifest %s exists in the tenant", tu.name, d, m.Path)
				case ok:
					rw.accepted[d.key()] = m // the valid rest of a partial apply
				case m.Class == classNeedsConversion && d.Mapping != nil:
					t.Errorf("%s: %s of %s uses a served API version but was not created (partial apply expected)", tu.name, d, m.Path)
				default:
					rw.rejected[d.key()] = m
				}
				if m.Namespace != "" {
					barrierNS[m.Namespace] = true
				}
				rw.mu.Unlock()
			}
		}
	})
	// A barrier ConfigMap in each affected namespace, created after the negatives: once its
	// super copy exists, the syncer has had the tenant's earlier events in hand (a best-effort
	// barrier, the workers run in parallel), so a wrongly synced object would show by now.
	rw.forEachTenant(func(tu *tenantUnderTest) {
		for ns := range barrierNS {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rw-barrier", Namespace: ns}, Data: map[string]string{"after": "negatives"}}
			if _, err := tu.cp.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Errorf("%s: failed to create barrier ConfigMap in %s: %v", tu.name, ns, err)
			}
		}
	})
	problems := eventually(t.Context(), barrierTimeout, time.Second, func(ctx context.Context) []string {
		if err := rw.syncer.exited(); err != nil {
			return []string{err.Error()}
		}
		var problems []string
		for _, tu := range rw.tenants {
			cms, err := rw.super.Client.CoreV1().ConfigMaps(metav1.NamespaceAll).List(ctx, tu.selector())
			if err != nil {
				return []string{err.Error()}
			}
			have := map[string]bool{}
			for _, cm := range cms.Items {
				if cm.Annotations[annotationName] == "rw-barrier" {
					have[cm.Annotations[annotationNamespace]] = true
				}
			}
			for ns := range barrierNS {
				if !have[ns] {
					problems = append(problems, fmt.Sprintf("%s: barrier ConfigMap %s/rw-barrier has no super copy yet", tu.name, ns))
				}
			}
		}
		return problems
	})
	for _, p := range problems {
		t.Error(p)
	}
	// No super object may stem from a rejected document, and every new super object must
	// belong to an object the tenant holds.
	refs, err := rw.superObjects(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tenantByUID := map[string]*tenantUnderTest{}
	for _, tu := range rw.tenants {
		tenantByUID[tu.uid] = tu
	}
	newObjects := 0
	for _, r := range refs {
		tu := tenantByUID[r.TenantUID]
		if tu == nil || rw.baseline[r.withoutUID()] {
			continue
		}
		if (r.Kind == "ResourceQuota" || r.Kind == "LimitRange") && strings.HasPrefix(r.Name, "vc-syncer-") {
			continue // a super namespace's bounds (policy limits), the syncer's own, not a tenant copy
		}
		newObjects++
		k := objKey{Group: r.Group, Kind: r.Kind, Namespace: r.TenantNamespace, Name: r.TenantName}
		if r.Kind == "Namespace" {
			k.Namespace = ""
		}
		if m, bad := rw.rejected[k]; bad {
			t.Errorf("%s: super %s stems from %s of rejected manifest %s", tu.name, r, k, m.Path)
		}
		if err := tu.holds(t.Context(), r); err != nil {
			t.Errorf("%s: super %s has no tenant object: %v", tu.name, r, err)
		}
	}
	t.Logf("after %d negative manifests (in each tenant): %d rejected documents, %d accepted documents of partial applies; "+
		"%d new super objects (both tenants), each backed by a tenant object", len(negatives), len(rw.rejected),
		len(rw.accepted), newObjects)
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, " | ")
}

// holds checks that the tenant object a super object claims to copy exists with that UID.
func (tu *tenantUnderTest) holds(ctx context.Context, r superRef) error {
	mapping, err := tu.c.mapper.RESTMapping(schema.GroupKind{Group: r.Group, Kind: r.Kind})
	if err != nil {
		return err
	}
	ri := tu.c.dyn.Resource(mapping.Resource)
	var obj metav1.Object
	if r.Kind == "Namespace" && r.Group == "" {
		obj, err = ri.Get(ctx, r.TenantNamespace, metav1.GetOptions{})
	} else if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		obj, err = ri.Namespace(r.TenantNamespace).Get(ctx, r.TenantName, metav1.GetOptions{})
	} else {
		obj, err = ri.Get(ctx, r.TenantName, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	if string(obj.GetUID()) != r.TenantObjUID {
		return fmt.Errorf("tenant UID is %s, the super object names %s", obj.GetUID(), r.TenantObjUID)
	}
	return nil
}

// testApply applies every apply-ready manifest into both tenants at once.
func (rw *realWorld) testApply(t *testing.T) {
	var n int
	rw.forEachTenant(func(tu *tenantUnderTest) {
		for _, m := range rw.manifests {
			if m.Class == classNegative || m.Class == classNeedsConversion {
				continue
			}
			if tu == rw.tenants[0] {
				n++
			}
			out, err := tu.apply(t.Context(), m)
			gap, rejected := rejectedHere(m.Path)
			switch {
			case err != nil && rejected:
				t.Logf("%s: %s rejected (known gap %s): %s", tu.name, m.Path, gap.Name, firstLines(out, 2))
			case err != nil:
				t.Errorf("%s: kubectl apply -n %s -f %s failed: %v\n%s", tu.name, m.Namespace, m.Path, err, out)
			case rejected:
				t.Logf("%s: GAP CLOSED? %s was accepted although known gap %s says the tenant rejects it", tu.name, m.Path, gap.Name)
			}
			for _, d := range m.Docs {
				ok, gerr := tu.exists(t.Context(), d)
				switch {
				case gerr != nil:
					t.Errorf("%s: %s: %v", tu.name, d, gerr)
				case ok || err == nil && vanishes(m, d) != "":
					rw.mu.Lock()
					rw.accepted[d.key()] = m
					rw.mu.Unlock()
					if !ok {
						rw.observe(m.Path, "%s: %s is already gone after the apply: %s", tu.name, d, vanishes(m, d))
					}
				case err == nil:
					t.Errorf("%s: kubectl apply of %s succeeded but %s does not exist", tu.name, m.Path, d)
				}
			}
		}
	})
	t.Logf("applied %d apply-ready manifests into %d tenants: %d documents accepted", n, len(rw.tenants), len(rw.accepted))
}

// vanishes says why the tenant's own controllers may delete document d of m right after it
// is created ("" when they do not).
func vanishes(m *manifest, d *document) string {
	if reason, ok := vanishing[m.Path]; ok {
		return reason
	}
	if _, ttl := unstructuredInt(d.Obj.Object, "spec", "ttlSecondsAfterFinished"); ttl && d.GVK.Kind == "Job" {
		return "a finished Job is deleted after its ttlSecondsAfterFinished"
	}
	return ""
}

// testSettled waits until both tenants show what the super cluster does, then reports each
// requirement's remaining mismatches.
func (rw *realWorld) testSettled(t *testing.T) {
	start := time.Now()
	var last *report
	problems := eventually(t.Context(), settleTimeout, pollInterval, func(ctx context.Context) []string {
		if err := rw.syncer.exited(); err != nil {
			return []string{err.Error()}
		}
		rw.playLoadBalancer(ctx)
		last = rw.check(ctx)
		return last.all()
	})
	if last == nil {
		t.Fatal("no check ran")
	}
	if len(problems) == 0 {
		t.Logf("both tenants mirror the super cluster after %s: %s", time.Since(start).Round(time.Second), last.stats)
	} else {
		t.Logf("still %d mismatches after %s (%s)", len(problems), settleTimeout, last.stats)
	}
	failed := false
	for _, req := range requirements {
		failed = !t.Run(req.name, func(t *testing.T) {
			for _, p := range last.problems[req.id] {
				t.Error(p)
			}
			rw.mu.Lock()
			defer rw.mu.Unlock()
			for _, p := range rw.sticky[req.id] {
				t.Errorf("seen while settling: %s", p)
			}
		}) || failed
	}
	for _, l := range last.gapNotes {
		t.Log(l)
	}
	rw.logNewlySyncedKinds(t)
	if failed {
		rw.logSyncerEvidence(t, last)
	}
}

// syncedKinds are the kinds the syncer copies to the super cluster today; a super copy of any
// other kind is logged as new.
var syncedKinds = map[string]bool{"Namespace": true, "Pod": true, "ConfigMap": true, "Secret": true, "ServiceAccount": true, "Service": true,
	"PersistentVolumeClaim": true,
	// the last three are opt-in and turned on by startSyncer
	"Endpoints": true, "EndpointSlice": true, "Ingress": true, "NetworkPolicy": true, "PodDisruptionBudget": true}

// isBound reports the syncer's own bounds of a super namespace (its backstop ResourceQuota and
// LimitRange, see resources.EnsureBounds): stamped with the tenant, but no copy of a tenant object.
func isBound(r superRef) bool {
	return r.Kind == "ResourceQuota" && r.Name == "vc-syncer-quota" || r.Kind == "LimitRange" && r.Name == "vc-syncer-limits"
}

// logNewlySyncedKinds logs super objects of the tenants whose kind is not in syncedKinds.
func (rw *realWorld) logNewlySyncedKinds(t *testing.T) {
	refs, err := rw.superObjects(t.Context())
	if err != nil {
		t.Logf("failed to list super objects: %v", err)
		return
	}
	for _, r := range refs {
		for _, tu := range rw.tenants {
			if r.TenantUID == tu.uid && !syncedKinds[r.Kind] && rw.namespaces[r.TenantNamespace] && !isBound(r) {
				t.Logf("GAP CLOSED? %s: the syncer now copies %s objects: super %s (update the known gaps)", tu.name, r.Kind, r)
			}
		}
	}
}

// logSummary logs, per manifest, what the tenants hold and what their Pods show.
func (rw *realWorld) logSummary() {
	var b strings.Builder
	for _, m := range rw.manifests {
		accepted := 0
		for _, d := range m.Docs {
			if rw.accepted[d.key()] == m {
				accepted++
			}
		}
		fmt.Fprintf(&b, "  %-16s %s -n %s: %d documents, %d accepted\n", m.Class, m.Path, m.Namespace, len(m.Docs), accepted)
		counts := map[string]int{}
		var order []string
		for _, o := range rw.observations[m.Path] {
			short := o
			if i := strings.Index(o, " node="); i > 0 {
				short = o[:i]
			}
			if counts[short] == 0 {
				order = append(order, short)
			}
			counts[short]++
		}
		for _, o := range order {
			if counts[o] > 1 {
				fmt.Fprintf(&b, "      %s (x%d)\n", o, counts[o])
			} else {
				fmt.Fprintf(&b, "      %s\n", o)
			}
		}
	}
	rw.t.Logf("per-manifest summary (Pod states are distinct super states seen while settling):\n%s", b.String())
}

// testDelete deletes everything the manifests created (kubectl delete -f per file, then the
// test namespaces) in both tenants and waits until the super cluster holds no object the
// syncer created for those namespaces.
func (rw *realWorld) testDelete(t *testing.T) {
	start := time.Now()
	rw.forEachTenant(func(tu *tenantUnderTest) {
		for _, m := range rw.manifests {
			if m.Class == classNegative {
				continue
			}
			out, _, err := tu.kubectl.run(t.Context(), "delete", "-n", m.Namespace, "-f", m.File, "--ignore-not-found", "--wait=false")
			if err != nil && m.Class == classApplyReady {
				if _, rejected := rejectedHere(m.Path); !rejected {
					t.Logf("%s: kubectl delete -f %s: %v %s", tu.name, m.Path, err, firstLines(out, 2))
				}
			}
		}
		for ns := range rw.barrierNS {
			err := tu.cp.Client.CoreV1().ConfigMaps(ns).Delete(t.Context(), "rw-barrier", metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("%s: failed to delete barrier ConfigMap %s/rw-barrier: %v", tu.name, ns, err)
			}
		}
		args := append([]string{"delete", "namespace", "--ignore-not-found", "--wait=false"}, keys(rw.created)...)
		if out, errOut, err := tu.kubectl.run(t.Context(), args...); err != nil {
			t.Errorf("%s: kubectl delete namespace: %v\n%s%s", tu.name, err, out, errOut)
		}
	})
	t.Logf("deleted %d manifests and %d namespaces in each tenant in %s", len(rw.manifests), len(rw.created), time.Since(start).Round(time.Second))
	tenantUIDs := map[string]string{}
	for _, tu := range rw.tenants {
		tenantUIDs[tu.uid] = tu.name
	}
	var remaining []superRef
	problems := eventually(t.Context(), deleteTimeout, pollInterval, func(ctx context.Context) []string {
		if err := rw.syncer.exited(); err != nil {
			return []string{err.Error()}
		}
		refs, err := rw.superObjects(ctx)
		if err != nil {
			return []string{err.Error()}
		}
		remaining = remaining[:0]
		var problems []string
		for _, r := range refs {
			name, ours := tenantUIDs[r.TenantUID]
			if !ours || !rw.namespaces[r.TenantNamespace] || rw.baseline[r.withoutUID()] {
				continue
			}
			remaining = append(remaining, r)
			problems = append(problems, fmt.Sprintf("%s: super %s still exists", name, r))
		}
		return problems
	})
	if len(problems) == 0 {
		t.Logf("every super object of the %d test namespaces is gone %s after the deletes (pre-existing namespaces keep only "+
			"their %d baseline objects)", len(rw.namespaces), time.Since(start).Round(time.Second), len(rw.baseline))
		return
	}
	sort.Strings(problems)
	for i, p := range problems {
		if i == 40 {
			t.Errorf("... and %d more", len(problems)-40)
			break
		}
		t.Error(p)
	}
	for i, r := range remaining {
		if i == 10 {
			break
		}
		if lines := rw.syncer.grepLog(4, r.TenantNamespace, r.TenantName); len(lines) > 0 {
			t.Logf("vc-syncer log lines about %s:\n  %s", r, strings.Join(lines, "\n  "))
		}
	}
}
