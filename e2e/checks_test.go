package e2e

// The checks of TestRealWorld: one pass reads both tenants and the super cluster and returns
// every mismatch it sees, per requirement; the test repeats passes until none is left.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// selector selects the super objects of one tenant.
func (tu *tenantUnderTest) selector() metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: labelManagedBy + "=" + managedByValue + "," + labelTenantUID + "=" + tu.uid}
}

// superRef identifies a super object the syncer manages, with the tenant object it copies.
type superRef struct {
	Group, Kind, Resource string
	Namespace, Name       string // in the super cluster
	UID                   string
	TenantUID             string
	TenantNamespace       string
	TenantName            string
	TenantObjUID          string
}

func (r superRef) withoutUID() superRef {
	r.UID, r.TenantObjUID = "", ""
	return r
}

func (r superRef) String() string {
	s := r.Kind + " " + r.Name
	if r.Namespace != "" {
		s = r.Kind + " " + r.Namespace + "/" + r.Name
	}
	return fmt.Sprintf("%s (tenant %s/%s)", s, r.TenantNamespace, r.TenantName)
}

// superObjects lists every object of every resource in the super cluster that carries the
// syncer's managed-by label (whatever its kind, so kinds synced later are covered too).
func (rw *realWorld) superObjects(ctx context.Context) ([]superRef, error) {
	resources, err := rw.superC.listableResources()
	if err != nil {
		return nil, err
	}
	var out []superRef
	for _, m := range resources {
		if m.Resource.Group == "events.k8s.io" || (m.Resource.Group == "" && m.Resource.Resource == "events") {
			continue
		}
		list, err := rw.superC.dyn.Resource(m.Resource).List(ctx, metav1.ListOptions{LabelSelector: labelManagedBy + "=" + managedByValue})
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("failed to list %s: %w", m.Resource, err)
		}
		for _, o := range list.Items {
			a := o.GetAnnotations()
			out = append(out, superRef{
				Group: m.GroupVersionKind.Group, Kind: m.GroupVersionKind.Kind, Resource: m.Resource.Resource,
				Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID()),
				TenantUID: a[annotationTenantUID], TenantNamespace: a[annotationNamespace], TenantName: a[annotationName],
				TenantObjUID: a[annotationUID],
			})
		}
	}
	return out, nil
}

// Requirement ids of the report.
const (
	reqRunning = iota
	reqSameState
	reqContent
	reqServiceStatus
	reqWorkloads
	reqClaims
	reqServiceAddresses
	reqResources
)

var requirements = []struct {
	id   int
	name string
}{
	{reqRunning, "pods that can run are Running with the super nodeName and podIP"},
	{reqSameState, "waiting and failing pods show the super state"},
	{reqContent, "super objects live in per-tenant namespaces with the tenant content"},
	{reqServiceStatus, "services get the super load-balancer status"},
	{reqWorkloads, "tenant controllers see their workloads ready"},
	{reqClaims, "claims are Bound to tenant PVs that mirror the super PVs"},
	{reqServiceAddresses, "services show the ClusterIPs, node ports and health-check node ports of their super copies"},
	{reqResources, "super Pods carry the tenant's requests, limits and QoS class"},
}

// report is the result of one check pass.
type report struct {
	problems map[int][]string
	gapNotes []string
	stats    string
	// suspects are tenant objects with a problem, for the evidence excerpt.
	suspects []suspect
	// counts are the tenant objects compared, by kind.
	counts map[string]int
}

func (r *report) add(req int, format string, args ...any) {
	r.problems[req] = append(r.problems[req], fmt.Sprintf(format, args...))
}

func (r *report) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !contains(r.gapNotes, msg) {
		r.gapNotes = append(r.gapNotes, msg)
	}
}

func (r *report) all() []string {
	var out []string
	for _, req := range requirements {
		out = append(out, r.problems[req.id]...)
	}
	return out
}

// tenantView is one tenant's objects in the test namespaces and their super copies.
type tenantView struct {
	tu       *tenantUnderTest
	superNS  map[string]string // tenant namespace → super namespace (from annotations)
	pods     []corev1.Pod
	superPod map[string]*corev1.Pod // "<tenant ns>/<name>" → super Pod
	cms      []corev1.ConfigMap
	superCM  map[string]*corev1.ConfigMap
	secrets  []corev1.Secret
	superSec map[string]*corev1.Secret
	sas      []corev1.ServiceAccount
	superSA  map[string]*corev1.ServiceAccount
	svcs     []corev1.Service
	superSvc map[string]*corev1.Service
	// superIn maps super object keys "<Kind> <super ns>/<name>" to their tenant namespace.
	superIn map[string]string
	// vnodes are the tenant's Nodes (virtual Nodes written by the syncer).
	vnodes []corev1.Node
	// claims are the tenant's claims, pvs all its PVs by name, superClaim the super claims by
	// "<tenant ns>/<name>" (see loadClaims).
	claims     []corev1.PersistentVolumeClaim
	pvs        map[string]*corev1.PersistentVolume
	superClaim map[string]*corev1.PersistentVolumeClaim
	// refusedPods are the tenant Pods "<ns>/<name>" of refusedByTenantPolicy manifests (set by
	// checkPods).
	refusedPods map[string]bool
}

// load reads the tenant's and the super cluster's objects.
func (rw *realWorld) load(ctx context.Context, tu *tenantUnderTest) (*tenantView, error) {
	tc, sc := tu.cp.Client.CoreV1(), rw.super.Client.CoreV1()
	sel := tu.selector()
	v := &tenantView{tu: tu, superNS: map[string]string{}, superPod: map[string]*corev1.Pod{}, superCM: map[string]*corev1.ConfigMap{},
		superSec: map[string]*corev1.Secret{}, superSA: map[string]*corev1.ServiceAccount{}, superSvc: map[string]*corev1.Service{},
		superIn: map[string]string{}, refusedPods: map[string]bool{}}
	nss, err := sc.Namespaces().List(ctx, sel)
	if err != nil {
		return nil, err
	}
	nodes, err := tc.Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	v.vnodes = nodes.Items
	for _, ns := range nss.Items {
		if ns.Annotations[annotationTenantUID] == tu.uid && ns.DeletionTimestamp == nil {
			if prev, dup := v.superNS[ns.Annotations[annotationNamespace]]; dup {
				return nil, fmt.Errorf("tenant namespace %s maps to two super namespaces %s and %s", ns.Annotations[annotationNamespace], prev, ns.Name)
			}
			v.superNS[ns.Annotations[annotationNamespace]] = ns.Name
		}
	}
	ours := func(ns string) bool { return rw.namespaces[ns] }
	key := func(m metav1.Object) string {
		return m.GetAnnotations()[annotationNamespace] + "/" + m.GetAnnotations()[annotationName]
	}
	tPods, err := tc.Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, p := range tPods.Items {
		if ours(p.Namespace) {
			v.pods = append(v.pods, p)
		}
	}
	sPods, err := sc.Pods(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for i := range sPods.Items {
		p := &sPods.Items[i]
		v.superPod[key(p)] = p
		v.superIn["Pod "+p.Namespace+"/"+p.Name] = p.Annotations[annotationNamespace]
	}
	tCMs, err := tc.ConfigMaps(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range tCMs.Items {
		if ours(o.Namespace) && !rw.tenantBaseline[tu.name][objKey{Kind: "ConfigMap", Namespace: o.Namespace, Name: o.Name}] {
			v.cms = append(v.cms, o)
		}
	}
	sCMs, err := sc.ConfigMaps(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for i := range sCMs.Items {
		o := &sCMs.Items[i]
		v.superCM[key(o)] = o
		v.superIn["ConfigMap "+o.Namespace+"/"+o.Name] = o.Annotations[annotationNamespace]
	}
	tSecs, err := tc.Secrets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range tSecs.Items {
		if ours(o.Namespace) && !rw.tenantBaseline[tu.name][objKey{Kind: "Secret", Namespace: o.Namespace, Name: o.Name}] {
			v.secrets = append(v.secrets, o)
		}
	}
	sSecs, err := sc.Secrets(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for i := range sSecs.Items {
		o := &sSecs.Items[i]
		v.superSec[key(o)] = o
		v.superIn["Secret "+o.Namespace+"/"+o.Name] = o.Annotations[annotationNamespace]
	}
	tSAs, err := tc.ServiceAccounts(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range tSAs.Items {
		if ours(o.Namespace) && !rw.tenantBaseline[tu.name][objKey{Kind: "ServiceAccount", Namespace: o.Namespace, Name: o.Name}] {
			v.sas = append(v.sas, o)
		}
	}
	sSAs, err := sc.ServiceAccounts(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for i := range sSAs.Items {
		o := &sSAs.Items[i]
		v.superSA[key(o)] = o
		v.superIn["ServiceAccount "+o.Namespace+"/"+o.Name] = o.Annotations[annotationNamespace]
	}
	tSvcs, err := tc.Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, o := range tSvcs.Items {
		if ours(o.Namespace) && !rw.tenantBaseline[tu.name][objKey{Kind: "Service", Namespace: o.Namespace, Name: o.Name}] {
			v.svcs = append(v.svcs, o)
		}
	}
	sSvcs, err := sc.Services(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for i := range sSvcs.Items {
		o := &sSvcs.Items[i]
		v.superSvc[key(o)] = o
		v.superIn["Service "+o.Namespace+"/"+o.Name] = o.Annotations[annotationNamespace]
	}
	if err := rw.loadClaims(ctx, v); err != nil {
		return nil, err
	}
	return v, nil
}

// playLoadBalancer acts as the super cluster's cloud load-balancer controller: it gives every
// super Service of type LoadBalancer that has none an ingress IP (TEST-NET-3).
func (rw *realWorld) playLoadBalancer(ctx context.Context) {
	for _, tu := range rw.tenants {
		svcs, err := rw.super.Client.CoreV1().Services(metav1.NamespaceAll).List(ctx, tu.selector())
		if err != nil {
			continue
		}
		for i := range svcs.Items {
			s := &svcs.Items[i]
			if s.Spec.Type != corev1.ServiceTypeLoadBalancer || len(s.Status.LoadBalancer.Ingress) > 0 {
				continue
			}
			rw.mu.Lock()
			rw.lbIPs++
			ip := fmt.Sprintf("203.0.113.%d", rw.lbIPs%250+1)
			rw.mu.Unlock()
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip, Hostname: s.Name + ".lb.example"}}
			if _, err := rw.super.Client.CoreV1().Services(s.Namespace).UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
				rw.t.Logf("failed to set the load-balancer status of super Service %s/%s: %v", s.Namespace, s.Name, err)
			}
		}
	}
}

// check runs every assertion once over both tenants.
func (rw *realWorld) check(ctx context.Context) *report {
	r := &report{problems: map[int][]string{}, counts: map[string]int{}}
	views := make([]*tenantView, len(rw.tenants))
	for i, tu := range rw.tenants {
		v, err := rw.load(ctx, tu)
		if err != nil {
			r.add(reqContent, "%s: failed to read objects: %v", tu.name, err)
			return r
		}
		views[i] = v
	}
	var pods, running, pending, superObjs int
	for _, v := range views {
		rw.checkNamespaces(r, v, views)
		p, run, pend := rw.checkPods(ctx, r, v)
		pods, running, pending = pods+p, running+run, pending+pend
		superObjs += len(v.superIn)
		rw.checkConfigData(r, v)
		rw.checkServices(r, v)
		rw.checkWorkloads(ctx, r, v)
		rw.checkClaims(r, v)
	}
	var counts []string
	for _, k := range keys(r.counts) {
		counts = append(counts, fmt.Sprintf("%d %s", r.counts[k], k))
	}
	r.stats = fmt.Sprintf("%d tenant Pods (%d Running/Succeeded, %d Pending) and %s compared with %d super objects",
		pods, running, pending, strings.Join(counts, ", "), superObjs)
	return r
}

// checkNamespaces checks that every tenant namespace holding synced objects maps to its own
// super namespace, distinct from the other tenant's, and that every super copy lives there.
func (rw *realWorld) checkNamespaces(r *report, v *tenantView, all []*tenantView) {
	for sobj, tns := range v.superIn {
		superNS := strings.SplitN(strings.SplitN(sobj, " ", 2)[1], "/", 2)[0]
		if want, ok := v.superNS[tns]; !ok {
			r.add(reqContent, "%s: super %s names tenant namespace %s, which has no super Namespace", v.tu.name, sobj, tns)
		} else if superNS != want {
			r.add(reqContent, "%s: super %s lives in %s, but tenant namespace %s maps to %s", v.tu.name, sobj, superNS, tns, want)
		}
	}
	for tns, sns := range v.superNS {
		for _, o := range all {
			if o != v && o.superNS[tns] == sns {
				r.add(reqContent, "tenants %s and %s share super namespace %s for namespace %s", v.tu.name, o.tu.name, sns, tns)
			}
		}
	}
}

// manifestOfPod finds the manifest that (through its controllers) made a tenant Pod.
func (rw *realWorld) manifestOfPod(ctx context.Context, tu *tenantUnderTest, p *corev1.Pod) (*manifest, objKey) {
	top := tu.topOwner(ctx, objKey{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, p.UID, p.OwnerReferences, 0)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.accepted[top], top
}

// topOwner follows controller owner references up to the top-level object.
func (tu *tenantUnderTest) topOwner(ctx context.Context, self objKey, uid types.UID, refs []metav1.OwnerReference, depth int) objKey {
	if k, ok := tu.owners.Load(uid); ok {
		return k.(objKey)
	}
	result := self
	for _, ref := range refs {
		if ref.Controller == nil || !*ref.Controller || depth > 5 {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			break
		}
		owner := objKey{Group: gv.Group, Kind: ref.Kind, Namespace: self.Namespace, Name: ref.Name}
		result = owner
		mapping, err := tu.c.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
		if err != nil {
			break
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			owner.Namespace, result = "", objKey{Group: gv.Group, Kind: ref.Kind, Name: ref.Name}
		}
		var o metav1.Object
		if owner.Namespace != "" {
			o, err = tu.c.dyn.Resource(mapping.Resource).Namespace(owner.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		} else {
			o, err = tu.c.dyn.Resource(mapping.Resource).Get(ctx, ref.Name, metav1.GetOptions{})
		}
		if err != nil {
			return result // not cached: the owner may show up (or be gone) next time
		}
		result = tu.topOwner(ctx, owner, o.GetUID(), o.GetOwnerReferences(), depth+1)
		break
	}
	tu.owners.Store(uid, result)
	return result
}

// checkPods compares every tenant Pod with its super Pod.
func (rw *realWorld) checkPods(ctx context.Context, r *report, v *tenantView) (pods, running, pending int) {
	for i := range v.pods {
		tp := &v.pods[i]
		if tp.DeletionTimestamp != nil {
			continue // being replaced (Jobs with ttlSecondsAfterFinished 0, rollouts)
		}
		pods++
		m, top := rw.manifestOfPod(ctx, v.tu, tp)
		path := "(no manifest)"
		if m != nil {
			path = m.Path
		}
		id := fmt.Sprintf("%s: Pod %s/%s (from %s in %s)", v.tu.name, tp.Namespace, tp.Name, top, path)
		sp := v.superPod[tp.Namespace+"/"+tp.Name]
		if rule, ok := refusedByTenantPolicy[path]; ok {
			v.refusedPods[tp.Namespace+"/"+tp.Name] = true
			cond := podScheduled(tp)
			switch {
			case sp != nil:
				rw.addSticky(reqSameState, suspect{v.tu, "Pod", tp.Namespace, tp.Name}, "%s: the tenant policy refuses it (%s: %s), but it has a super Pod %s/%s",
					id, rule.Rule, rule.Why, sp.Namespace, sp.Name)
			case tp.Spec.NodeName != "" || tp.Status.Phase != corev1.PodPending || cond == nil || cond.Status != corev1.ConditionFalse ||
				cond.Reason != "PolicyDenied" || !strings.HasPrefix(cond.Message, rule.Rule+": "):
				r.add(reqSameState, "%s: refused by the tenant policy (%s), want it Pending, unbound, PodScheduled=False reason PolicyDenied "+
					"message %q...; it is %s on node %q with PodScheduled %+v", id, rule.Why, rule.Rule+": ", tp.Status.Phase, tp.Spec.NodeName, cond)
				r.suspect(v.tu, "Pod", tp.Namespace, tp.Name)
			default:
				rw.observe(path, "Pod %s/%s refused by the tenant policy as designed: %s", tp.Namespace, tp.Name, cond.Message)
			}
			continue
		}
		if sp == nil {
			if why, ok := rejectedBySuperPolicy[path]; ok {
				if tp.Spec.NodeName == "" && tp.Status.Phase == corev1.PodPending {
					rw.observe(path, "Pod %s/%s refused by the super cluster as designed (%s); the tenant Pod stays Pending", tp.Namespace, tp.Name, why)
					continue
				}
				r.add(reqSameState, "%s was refused by the super cluster's Pod Security but the tenant shows phase %s on node %q", id, tp.Status.Phase, tp.Spec.NodeName)
				continue
			}
			req := reqRunning
			if _, pend := expectedPending[path]; pend || podsMayNotRun(path) {
				req = reqSameState
			}
			r.add(req, "%s has no super Pod (tenant phase %s)", id, tp.Status.Phase)
			r.suspect(v.tu, "Pod", tp.Namespace, tp.Name)
			continue
		}
		if sp.Annotations[annotationUID] != string(tp.UID) {
			r.add(reqContent, "%s: super Pod %s/%s names tenant UID %s, the tenant Pod is %s",
				id, sp.Namespace, sp.Name, sp.Annotations[annotationUID], tp.UID)
			continue
		}
		// Content (3): images and labels.
		if d := diffImages(tp, sp); d != "" {
			r.add(reqContent, "%s: super Pod %s/%s images differ: %s", id, sp.Namespace, sp.Name, d)
		}
		if d := diffLabels(tp.Labels, sp.Labels); d != "" {
			r.add(reqContent, "%s: super Pod %s/%s labels differ: %s", id, sp.Namespace, sp.Name, d)
		}
		rw.checkPodIdentity(r, id, tp, sp)
		// Resources and QoS class (issue 42): what the tenant asks is what runs.
		for _, d := range diffPodResources(tp, sp) {
			r.add(reqResources, "%s: super Pod %s/%s differs: %s", id, sp.Namespace, sp.Name, d)
			r.suspect(v.tu, "Pod", tp.Namespace, tp.Name)
		}
		// State (1, 2).
		superState, tenantState := podState(sp), podState(tp)
		if sp.Status.Phase == corev1.PodRunning || sp.Status.Phase == corev1.PodSucceeded {
			running++
		} else {
			pending++
		}
		sameState := superState == tenantState
		if reason, ok := expectedPending[path]; ok {
			if sp.Status.Phase != corev1.PodPending || sp.Spec.NodeName != "" {
				// "Never" is checked on every pass: a later pass may not see the Pod any more.
				rw.addSticky(reqSameState, suspect{v.tu, "Pod", tp.Namespace, tp.Name}, "%s: SOURCES.md expects it never to run (%s), but the super Pod %s/%s "+
					"is %s while the tenant Pod is %s", id, reason, sp.Namespace, sp.Name, superState, tenantState)
				r.suspect(v.tu, "Pod", tp.Namespace, tp.Name)
			}
			if !sameState {
				r.add(reqSameState, "%s: tenant shows %s, super Pod %s/%s shows %s", id, tenantState, sp.Namespace, sp.Name, superState)
				r.suspect(v.tu, "Pod", tp.Namespace, tp.Name)
			}
			rw.observe(path, "%s", superState)
			continue
		}
		for _, g := range gapsOf(path) {
			if g.RealKubelet != "" {
				if strings.Contains(superState, "Running") || strings.Contains(superState, "Succeeded") {
					r.note("KNOWN GAP %s: %s is %s in the super cluster and the tenant (a real kubelet: %s)", g.Name, id, superState, g.RealKubelet)
				} else {
					r.note("GAP CLOSED? %s: %s shows %s (known gap %s expected kwok to report it Running)", g.Name, id, superState, g.Name)
				}
			}
		}
		if podsMayNotRun(path) {
			if !sameState {
				r.add(reqSameState, "%s: tenant shows %s, super Pod %s/%s shows %s", id, tenantState, sp.Namespace, sp.Name, superState)
			}
			if sp.Status.Phase == corev1.PodRunning {
				r.note("GAP CLOSED? %s runs although a known gap says its Pods cannot: %s", id, superState)
			} else {
				r.note("KNOWN GAP: %s is %s (%s)", id, superState, gapNames(path))
			}
			rw.observe(path, "%s", superState)
			continue
		}
		switch {
		case sp.Status.Phase != corev1.PodRunning && sp.Status.Phase != corev1.PodSucceeded:
			r.add(reqRunning, "%s: super Pod %s/%s is %s, want Running", id, sp.Namespace, sp.Name, superState)
			r.suspect(v.tu, "Pod", tp.Namespace, tp.Name)
		case tp.Status.Phase != sp.Status.Phase || tp.Spec.NodeName != sp.Spec.NodeName || tp.Status.PodIP != sp.Status.PodIP:
			r.add(reqRunning, "%s: tenant has phase %s nodeName %q podIP %q, super Pod %s/%s has phase %s nodeName %q podIP %q",
				id, tp.Status.Phase, tp.Spec.NodeName, tp.Status.PodIP, sp.Namespace, sp.Name, sp.Status.Phase, sp.Spec.NodeName, sp.Status.PodIP)
			r.suspect(v.tu, "Pod", tp.Namespace, tp.Name)
		case !v.hasVNode(tp.Spec.NodeName):
			r.add(reqRunning, "%s: bound to Node %s, but the tenant has no virtual Node of that name", id, tp.Spec.NodeName)
			r.suspect(v.tu, "Pod", tp.Namespace, tp.Name)
		case !sameState:
			r.add(reqSameState, "%s: tenant shows %s, super Pod %s/%s shows %s", id, tenantState, sp.Namespace, sp.Name, superState)
		}
		rw.observe(path, "%s", superState)
	}
	return pods, running, pending
}

// podScheduled returns p's PodScheduled condition (nil when it has none).
func podScheduled(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// addSticky records a violation, once per subject, that stays reported even when later passes
// no longer see it.
func (rw *realWorld) addSticky(req int, subject suspect, format string, args ...any) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	key := subject.tu.name + "/" + subject.kind + "/" + subject.namespace + "/" + subject.name
	if rw.stickySeen[key] {
		return
	}
	rw.stickySeen[key] = true
	rw.sticky[req] = append(rw.sticky[req], fmt.Sprintf(format, args...))
	rw.stickySuspects = append(rw.stickySuspects, subject)
}

// hasVNode reports whether the tenant has a virtual Node (labelled by the syncer) named name.
func (v *tenantView) hasVNode(name string) bool {
	for _, n := range v.vnodes {
		if n.Name == name && n.Labels[labelVNode] == "true" {
			return true
		}
	}
	return false
}

func gapNames(path string) string {
	var names []string
	for _, g := range knownGaps[path] {
		if !contains(names, g.Name) {
			names = append(names, g.Name)
		}
	}
	return strings.Join(names, ", ")
}

// podState summarises what a user sees of a Pod: phase, node, IPs, readiness and container
// states (waiting/terminated reasons).
func podState(p *corev1.Pod) string {
	var b strings.Builder
	b.WriteString(string(p.Status.Phase))
	if p.Status.Reason != "" {
		b.WriteString("/" + p.Status.Reason)
	}
	fmt.Fprintf(&b, " node=%q hostIP=%q podIP=%q", p.Spec.NodeName, p.Status.HostIP, p.Status.PodIP)
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady || c.Type == corev1.PodScheduled {
			fmt.Fprintf(&b, " %s=%s", c.Type, c.Status)
			if c.Reason != "" {
				b.WriteString("/" + c.Reason)
			}
		}
	}
	for _, set := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range set {
			fmt.Fprintf(&b, " %s:", cs.Name)
			switch {
			case cs.State.Waiting != nil:
				b.WriteString("waiting/" + cs.State.Waiting.Reason)
			case cs.State.Running != nil:
				b.WriteString("running")
			case cs.State.Terminated != nil:
				fmt.Fprintf(&b, "terminated/%s(%d)", cs.State.Terminated.Reason, cs.State.Terminated.ExitCode)
			}
			fmt.Fprintf(&b, ",ready=%t,restarts=%d", cs.Ready, cs.RestartCount)
		}
	}
	return b.String()
}

func diffImages(t, s *corev1.Pod) string {
	images := func(cs []corev1.Container) map[string]string {
		m := map[string]string{}
		for _, c := range cs {
			m[c.Name] = c.Image
		}
		return m
	}
	var diffs []string
	for _, pair := range [][2][]corev1.Container{{t.Spec.InitContainers, s.Spec.InitContainers}, {t.Spec.Containers, s.Spec.Containers}} {
		ti, si := images(pair[0]), images(pair[1])
		if !equality.Semantic.DeepEqual(ti, si) {
			diffs = append(diffs, fmt.Sprintf("tenant %v, super %v", ti, si))
		}
	}
	return strings.Join(diffs, "; ")
}

// diffLabels compares tenant labels with a super object's labels minus the ownership labels.
func diffLabels(tenant, super map[string]string) string {
	s := map[string]string{}
	for k, v := range super {
		if k != labelManagedBy && k != labelTenantUID {
			s[k] = v
		}
	}
	if len(tenant) == 0 && len(s) == 0 {
		return ""
	}
	if equality.Semantic.DeepEqual(tenant, s) {
		return ""
	}
	return fmt.Sprintf("tenant %v, super %v", tenant, s)
}

// checkPodIdentity checks what a container of the super Pod would see of its identity: no
// downward-API reference that a kubelet resolves to the super namespace, the super UID or the
// super Pod's own labels and annotations (which carry the syncer's bookkeeping), and
// every projected service-account token of the tenant Pod served from the syncer's token
// annotation on the super Pod (a tenant token), never a super-cluster token.
func (rw *realWorld) checkPodIdentity(r *report, id string, tp, sp *corev1.Pod) {
	var refs []string
	visit := func(where string, f *corev1.ObjectFieldSelector) {
		if f != nil && (f.FieldPath == "metadata.namespace" || f.FieldPath == "metadata.uid" ||
			f.FieldPath == "metadata.labels" || strings.HasPrefix(f.FieldPath, "metadata.labels[") ||
			f.FieldPath == "metadata.annotations") {
			refs = append(refs, where+"="+f.FieldPath)
		}
	}
	for _, cs := range [][]corev1.Container{sp.Spec.InitContainers, sp.Spec.Containers} {
		for _, c := range cs {
			for _, e := range c.Env {
				if e.ValueFrom != nil {
					visit(c.Name+"/env/"+e.Name, e.ValueFrom.FieldRef)
				}
			}
		}
	}
	for _, vol := range sp.Spec.Volumes {
		if vol.DownwardAPI != nil {
			for _, it := range vol.DownwardAPI.Items {
				visit("volume/"+vol.Name+"/"+it.Path, it.FieldRef)
			}
		}
		if vol.Projected != nil {
			for _, src := range vol.Projected.Sources {
				if src.ServiceAccountToken != nil {
					r.add(reqContent, "%s: super Pod %s/%s projects a super-cluster service-account token in volume %s", id, sp.Namespace, sp.Name, vol.Name)
				}
				if src.DownwardAPI != nil {
					for _, it := range src.DownwardAPI.Items {
						visit("volume/"+vol.Name+"/"+it.Path, it.FieldRef)
					}
				}
			}
		}
	}
	if len(refs) > 0 {
		r.add(reqContent, "%s: super Pod %s/%s keeps %s, which a kubelet resolves to namespace %s / the super UID / the super "+
			"Pod's labels instead of tenant namespace %s / UID %s / the tenant's labels", id, sp.Namespace, sp.Name, strings.Join(refs, ", "),
			sp.Namespace, tp.Namespace, tp.UID)
	}
	n := 0 // the source's ordinal over all projected volumes: its token annotation's suffix
	for _, vol := range tp.Spec.Volumes {
		if vol.Projected == nil {
			continue
		}
		for i, src := range vol.Projected.Sources {
			if src.ServiceAccountToken == nil {
				continue
			}
			key := fmt.Sprintf("%s%d", annotationTokenPrefix, n)
			n++
			var got *corev1.VolumeProjection
			for _, sv := range sp.Spec.Volumes {
				if sv.Name == vol.Name && sv.Projected != nil && i < len(sv.Projected.Sources) {
					got = &sv.Projected.Sources[i]
				}
			}
			switch {
			case got == nil || got.DownwardAPI == nil || len(got.DownwardAPI.Items) != 1 || got.DownwardAPI.Items[0].FieldRef == nil ||
				got.DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.annotations['"+key+"']":
				r.add(reqContent, "%s: the tenant's projected serviceAccountToken (volume %s, audience %q) is not served from the "+
					"syncer's token annotation %s in super Pod %s/%s", id, vol.Name, src.ServiceAccountToken.Audience, key, sp.Namespace, sp.Name)
			case got.DownwardAPI.Items[0].Path != src.ServiceAccountToken.Path:
				r.add(reqContent, "%s: super Pod %s/%s projects the tenant token of volume %s at %q, want path %q", id, sp.Namespace, sp.Name,
					vol.Name, got.DownwardAPI.Items[0].Path, src.ServiceAccountToken.Path)
			case sp.Annotations[key] == "":
				r.add(reqContent, "%s: super Pod %s/%s has no tenant token in %s", id, sp.Namespace, sp.Name, key)
			}
		}
	}
}

// checkConfigData checks ConfigMaps, Secrets and ServiceAccounts.
func (rw *realWorld) checkConfigData(r *report, v *tenantView) {
	for i := range v.cms {
		t := &v.cms[i]
		if t.Name == "kube-root-ca.crt" {
			continue // each cluster publishes its own
		}
		s := v.superCM[t.Namespace+"/"+t.Name]
		r.counts["ConfigMaps"]++
		switch {
		case s == nil:
			r.add(reqContent, "%s: ConfigMap %s/%s has no super copy", v.tu.name, t.Namespace, t.Name)
			r.suspect(v.tu, "ConfigMap", t.Namespace, t.Name)
		case string(t.UID) != s.Annotations[annotationUID]:
			r.add(reqContent, "%s: super ConfigMap %s/%s names tenant UID %s, not %s", v.tu.name, s.Namespace, s.Name, s.Annotations[annotationUID], t.UID)
		case !equality.Semantic.DeepEqual(t.Data, s.Data) || !equality.Semantic.DeepEqual(t.BinaryData, s.BinaryData):
			r.add(reqContent, "%s: ConfigMap %s/%s data differs: tenant %v, super %s/%s %v", v.tu.name, t.Namespace, t.Name, t.Data, s.Namespace, s.Name, s.Data)
		case !equality.Semantic.DeepEqual(t.Immutable, s.Immutable):
			r.add(reqContent, "%s: ConfigMap %s/%s immutable differs: tenant %v, super %v", v.tu.name, t.Namespace, t.Name, ptrStr(t.Immutable), ptrStr(s.Immutable))
		}
	}
	for i := range v.secrets {
		t := &v.secrets[i]
		s := v.superSec[t.Namespace+"/"+t.Name]
		if t.Type == corev1.SecretTypeServiceAccountToken {
			// Tenant credentials: filled by the tenant's token controller, never copied down
			// (and so a super token can never come back up).
			r.counts["service-account-token Secrets (tenant-only)"]++
			if s != nil {
				r.add(reqContent, "%s: service-account-token Secret %s/%s was copied to the super cluster as %s/%s", v.tu.name, t.Namespace, t.Name, s.Namespace, s.Name)
			} else {
				rw.observe(rw.pathOf(objKey{Kind: "Secret", Namespace: t.Namespace, Name: t.Name}),
					"%s: service-account-token Secret %s/%s holds keys %v from the tenant's token controller and has no super copy",
					v.tu.name, t.Namespace, t.Name, secretKeys(t.Data))
			}
			continue
		}
		r.counts["Secrets"]++
		switch {
		case s == nil:
			r.add(reqContent, "%s: Secret %s/%s has no super copy", v.tu.name, t.Namespace, t.Name)
			r.suspect(v.tu, "Secret", t.Namespace, t.Name)
		case string(t.UID) != s.Annotations[annotationUID]:
			r.add(reqContent, "%s: super Secret %s/%s names tenant UID %s, not %s", v.tu.name, s.Namespace, s.Name, s.Annotations[annotationUID], t.UID)
		case !equality.Semantic.DeepEqual(t.Data, s.Data) || t.Type != s.Type:
			r.add(reqContent, "%s: Secret %s/%s differs: tenant type %s keys %v, super %s/%s type %s keys %v",
				v.tu.name, t.Namespace, t.Name, t.Type, secretKeys(t.Data), s.Namespace, s.Name, s.Type, secretKeys(s.Data))
		}
	}
	for i := range v.sas {
		t := &v.sas[i]
		if t.Name == "default" {
			continue // each cluster creates its own
		}
		s := v.superSA[t.Namespace+"/"+t.Name]
		r.counts["ServiceAccounts"]++
		if s == nil {
			r.add(reqContent, "%s: ServiceAccount %s/%s has no super copy", v.tu.name, t.Namespace, t.Name)
			r.suspect(v.tu, "ServiceAccount", t.Namespace, t.Name)
		} else if d := diffLabels(t.Labels, s.Labels); d != "" {
			r.add(reqContent, "%s: ServiceAccount %s/%s labels differ: %s", v.tu.name, t.Namespace, t.Name, d)
		}
	}
}

func ptrStr(b *bool) string {
	if b == nil {
		return "<nil>"
	}
	return fmt.Sprint(*b)
}

func secretKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkServices checks Service content (ports, selector, type) and load-balancer status.
func (rw *realWorld) checkServices(r *report, v *tenantView) {
	for i := range v.svcs {
		t := &v.svcs[i]
		s := v.superSvc[t.Namespace+"/"+t.Name]
		r.counts["Services"]++
		if rule, refused := refusedServices[t.Namespace+"/"+t.Name]; refused {
			if s != nil {
				r.add(reqContent, "%s: Service %s/%s is refused by the built-in tenant policy (%s: %s) but has a super copy %s/%s",
					v.tu.name, t.Namespace, t.Name, rule.Rule, rule.Why, s.Namespace, s.Name)
			}
			continue
		}
		if s == nil {
			r.add(reqContent, "%s: Service %s/%s has no super copy", v.tu.name, t.Namespace, t.Name)
			r.suspect(v.tu, "Service", t.Namespace, t.Name)
			continue
		}
		id := fmt.Sprintf("%s: Service %s/%s (super %s/%s)", v.tu.name, t.Namespace, t.Name, s.Namespace, s.Name)
		if string(t.UID) != s.Annotations[annotationUID] {
			r.add(reqContent, "%s names tenant UID %s, not %s", id, s.Annotations[annotationUID], t.UID)
			continue
		}
		if tp, sp := portsWithoutNodePorts(t.Spec.Ports), portsWithoutNodePorts(s.Spec.Ports); !equality.Semantic.DeepEqual(tp, sp) {
			r.add(reqContent, "%s ports differ: tenant %+v, super %+v", id, tp, sp)
		}
		if !equality.Semantic.DeepEqual(t.Spec.Selector, s.Spec.Selector) {
			r.add(reqContent, "%s selector differs: tenant %v, super %v", id, t.Spec.Selector, s.Spec.Selector)
		}
		if t.Spec.Type != s.Spec.Type {
			r.add(reqContent, "%s type differs: tenant %s, super %s", id, t.Spec.Type, s.Spec.Type)
		}
		if (t.Spec.ClusterIP == corev1.ClusterIPNone) != (s.Spec.ClusterIP == corev1.ClusterIPNone) {
			r.add(reqContent, "%s headless differs: tenant clusterIP %q, super %q", id, t.Spec.ClusterIP, s.Spec.ClusterIP)
		}
		if d := diffLabels(t.Labels, s.Labels); d != "" {
			r.add(reqContent, "%s labels differ: %s", id, d)
		}
		rw.checkServiceAddresses(r, v, id, t, s)
		// (4) status.
		if !equality.Semantic.DeepEqual(t.Status.LoadBalancer, s.Status.LoadBalancer) {
			r.add(reqServiceStatus, "%s status.loadBalancer differs: tenant %+v, super %+v", id, t.Status.LoadBalancer, s.Status.LoadBalancer)
			r.suspect(v.tu, "Service", t.Namespace, t.Name)
		} else if s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) == 0 {
			r.add(reqServiceStatus, "%s is of type LoadBalancer but the super Service has no ingress yet", id)
		} else if s.Spec.Type == corev1.ServiceTypeLoadBalancer {
			r.counts["LoadBalancer statuses"]++
			var ips []string
			for _, in := range t.Status.LoadBalancer.Ingress {
				ips = append(ips, in.IP+"/"+in.Hostname)
			}
			rw.observe(rw.pathOf(objKey{Kind: "Service", Namespace: t.Namespace, Name: t.Name}),
				"%s: LoadBalancer Service %s/%s shows ingress %v, as its super copy %s/%s", v.tu.name, t.Namespace, t.Name, ips, s.Namespace, s.Name)
		}
	}
}

// checkServiceAddresses checks that tenant Service t shows what works in the super cluster:
// the ClusterIPs of its super copy s (the tenant apiservers are on their own parts of the super
// cluster's Service range, registered as the Tenants' spec.serviceCIDRs), the node port of
// every port and the health-check node port.
func (rw *realWorld) checkServiceAddresses(r *report, v *tenantView, id string, t, s *corev1.Service) {
	r.counts["Service addresses"]++
	if t.Spec.Type != corev1.ServiceTypeExternalName && !slices.Equal(t.Spec.ClusterIPs, s.Spec.ClusterIPs) {
		r.add(reqServiceAddresses, "%s ClusterIPs differ: tenant %v, super %v", id, t.Spec.ClusterIPs, s.Spec.ClusterIPs)
		r.suspect(v.tu, "Service", t.Namespace, t.Name)
	}
	for j, tp := range t.Spec.Ports {
		if j >= len(s.Spec.Ports) || tp.NodePort == s.Spec.Ports[j].NodePort {
			continue
		}
		r.add(reqServiceAddresses, "%s port %d has nodePort %d in the tenant, %d in the super cluster", id, tp.Port, tp.NodePort, s.Spec.Ports[j].NodePort)
	}
	if t.Spec.HealthCheckNodePort != s.Spec.HealthCheckNodePort {
		r.add(reqServiceAddresses, "%s healthCheckNodePort %d in the tenant, %d in the super cluster", id, t.Spec.HealthCheckNodePort, s.Spec.HealthCheckNodePort)
	}
}

func (rw *realWorld) pathOf(k objKey) string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if m := rw.accepted[k]; m != nil {
		return m.Path
	}
	return "(no manifest)"
}

func portsWithoutNodePorts(ps []corev1.ServicePort) []corev1.ServicePort {
	out := make([]corev1.ServicePort, len(ps))
	for i, p := range ps {
		p.NodePort = 0
		out[i] = p
	}
	return out
}

// checkWorkloads checks that the tenant's own controllers see the workloads of runnable
// manifests ready: replicas ready, DaemonSet Pods ready, Jobs complete.
func (rw *realWorld) checkWorkloads(ctx context.Context, r *report, v *tenantView) {
	rw.mu.Lock()
	var docs []*document
	var ms []*manifest
	for _, m := range rw.manifests {
		for _, d := range m.Docs {
			if rw.accepted[d.key()] == m {
				docs, ms = append(docs, d), append(ms, m)
			}
		}
	}
	rw.mu.Unlock()
	for i, d := range docs {
		m := ms[i]
		if d.Mapping == nil || (d.GVK.Group != "apps" && d.GVK.Group != "batch" && (d.GVK.Group != "" || d.GVK.Kind != "ReplicationController")) {
			continue
		}
		if d.GVK.Kind == "CronJob" {
			continue
		}
		_, pend := expectedPending[m.Path]
		skip := pend || podsMayNotRun(m.Path)
		u, err := v.tu.c.dyn.Resource(d.Mapping.Resource).Namespace(d.Namespace).Get(ctx, d.Obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) && d.GVK.Kind == "Job" {
			if _, ttl := unstructuredInt(d.Obj.Object, "spec", "ttlSecondsAfterFinished"); ttl {
				rw.observe(m.Path, "Job %s finished and was removed by its ttlSecondsAfterFinished", d.Obj.GetName())
				continue
			}
		}
		if err != nil {
			r.add(reqWorkloads, "%s: %s: %v", v.tu.name, d, err)
			continue
		}
		var ready bool
		var state string
		switch d.GVK.Kind {
		case "Deployment", "StatefulSet", "ReplicaSet", "ReplicationController":
			want, ok := unstructuredInt(u.Object, "spec", "replicas")
			if !ok {
				want = 1
			}
			have, _ := unstructuredInt(u.Object, "status", "readyReplicas")
			ready, state = have == want, fmt.Sprintf("%d/%d ready", have, want)
		case "DaemonSet":
			// One Pod per tenant Node (vNode) its nodeSelector matches.
			selector, _, _ := unstructured.NestedStringMap(d.Obj.Object, "spec", "template", "spec", "nodeSelector")
			var matching []string
			var taints []string
			for _, n := range v.vnodes {
				if labels.SelectorFromSet(selector).Matches(labels.Set(n.Labels)) {
					matching = append(matching, n.Name)
					for _, tt := range n.Spec.Taints {
						taints = append(taints, n.Name+":"+tt.ToString())
					}
				}
			}
			desired, _ := unstructuredInt(u.Object, "status", "desiredNumberScheduled")
			have, _ := unstructuredInt(u.Object, "status", "numberReady")
			ready = have == desired && desired == int64(len(matching))
			state = fmt.Sprintf("%d/%d ready, %d vNodes match its nodeSelector %v", have, desired, len(matching), selector)
			if len(taints) > 0 {
				state += fmt.Sprintf(" (their taints: %s)", strings.Join(taints, ", "))
			}
		case "Job":
			ready, state = jobComplete(u.Object), "not complete"
			if ready {
				state = "complete"
			}
		default:
			continue
		}
		rw.observe(m.Path, "%s: %s %s", v.tu.name, d, state)
		if skip {
			if ready && !pend && d.GVK.Kind != "DaemonSet" {
				r.note("GAP CLOSED? %s: %s is %s although known gap %s says its Pods cannot run", v.tu.name, d, state, gapNames(m.Path))
			}
			continue
		}
		if !ready {
			r.add(reqWorkloads, "%s: %s in %s is %s", v.tu.name, d, m.Path, state)
		}
	}
}

func unstructuredInt(obj map[string]any, fields ...string) (int64, bool) {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false
		}
		if cur, ok = m[f]; !ok {
			return 0, false
		}
	}
	switch n := cur.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	}
	return 0, false
}

func jobComplete(obj map[string]any) bool {
	status, _ := obj["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == "Complete" && cm["status"] == "True" {
			return true
		}
	}
	return false
}

// suspect is a tenant object that still mismatches, for the evidence excerpt.
type suspect struct {
	tu                    *tenantUnderTest
	kind, namespace, name string
}

func (r *report) suspect(tu *tenantUnderTest, kind, ns, name string) {
	r.suspects = append(r.suspects, suspect{tu: tu, kind: kind, namespace: ns, name: name})
}

// logSyncerEvidence prints, for the objects that mismatch, the tenant Events recorded on them
// (the syncer reports through Events) and the syncer log lines that name them.
func (rw *realWorld) logSyncerEvidence(t *testing.T, r *report) {
	rw.mu.Lock()
	all := append(append([]suspect(nil), rw.stickySuspects...), r.suspects...)
	rw.mu.Unlock()
	seen := map[suspect]bool{}
	for _, s := range all {
		if seen[s] || len(seen) >= 12 {
			continue
		}
		seen[s] = true
		var lines []string
		events, err := s.tu.cp.Client.CoreV1().Events(s.namespace).List(t.Context(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=" + s.kind + ",involvedObject.name=" + s.name,
		})
		if err == nil {
			for _, e := range events.Items {
				from := e.ReportingController
				if from == "" {
					from = e.Source.Component
				}
				lines = append(lines, fmt.Sprintf("tenant Event %s %s (from %s, x%d): %s", e.Type, e.Reason, from, e.Count, e.Message))
			}
		}
		for _, l := range rw.syncer.grepLog(5, s.namespace, s.name) {
			lines = append(lines, "vc-syncer log: "+l)
		}
		if len(lines) > 0 {
			t.Logf("evidence for %s %s %s/%s:\n  %s", s.tu.name, s.kind, s.namespace, s.name, strings.Join(lines, "\n  "))
		}
	}
}
