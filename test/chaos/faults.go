package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
)

// Target is what the faults act on.
type Target struct {
	// Replicas are the syncer processes.
	Replicas []*Replica
	// TenantAPIServerPID returns the pid of tenant i's kube-apiserver.
	TenantAPIServerPID func(i int) int
	// RestartTenantAPIServer kills tenant i's kube-apiserver and starts it again, and returns
	// once it is ready (localcluster.ControlPlane.RestartAPIServer).
	RestartTenantAPIServer func(ctx context.Context, i int) error
	// Super is the super cluster's client.
	Super kubernetes.Interface
	// TenantUIDs are the Tenants' UIDs, by tenant index.
	TenantUIDs []string
	// CheckpointNamespace and CheckpointPrefix locate the syncer's checkpoint Secrets (every
	// Secret in the namespace whose name starts with the prefix).
	CheckpointNamespace, CheckpointPrefix string
	// SuperEtcdURL is the client URL of the super cluster's etcd (SuperEtcdCompact).
	SuperEtcdURL string
	// Tenancy is a client of the super cluster's Tenants and TenantPolicies, and TenantNames
	// the Tenants' names by tenant index (PolicyFlip).
	Tenancy     client.Client
	TenantNames []string
	// Refusals records the refusals PolicyFlip holds, for the invariants.
	Refusals *Refusals
	// TenantTarget is what the faults of faults_tenant.go act on.
	TenantTarget

	// RestartSuperAPIServer kills the super cluster's kube-apiserver and starts it again, and
	// returns once it is ready (SuperRestart).
	RestartSuperAPIServer func(ctx context.Context) error
	// AddTenant registers tenant i again as the harness did at start (same kubeconfig and
	// options) and returns the new Tenant's UID once it is Running (TenantRemoveReadd, which
	// then updates TenantUIDs).
	AddTenant func(ctx context.Context, i int) (string, error)
	// Spares are replicas beyond Replicas, not running between faults, that SyncerScale starts
	// and stops; none when the replicas run without --sharding.
	Spares []*Replica
}

// Injector injects one fault into t and returns what it did. It restores what it broke before
// it returns (a killed replica is started again, a stopped process continued), also when ctx
// ends. An error means the fault could not be injected (no object to touch).
type Injector func(ctx context.Context, t *Target, f Fault) (string, error)

// Injectors are the fault kinds' functions.
var Injectors = map[Kind]Injector{
	SyncerKill:       syncerSignal(syscall.SIGKILL),
	SyncerTerm:       syncerSignal(syscall.SIGTERM),
	TenantPause:      tenantPause,
	SuperCopyDelete:  superCopyDelete,
	SuperCopyEdit:    superCopyEdit,
	CheckpointDelete: checkpointDelete,

	CheckpointCorrupt: checkpointCorrupt,
	ReplicaPause:      replicaPause,
	PolicyFlip:        policyFlip,
	SuperEtcdCompact:  superEtcdCompact,
	TenantRestart:     tenantRestart,

	SuperRestart:         superRestart,         // faults_cluster.go
	SuperNamespaceDelete: superNamespaceDelete, // faults_cluster.go
	TenantRemoveReadd:    tenantRemoveReadd,    // faults_cluster.go
	SyncerScale:          syncerScale,          // faults_cluster.go
}

// errNoCandidate is returned when a fault finds nothing to act on.
var errNoCandidate = errors.New("nothing to act on")

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// syncerSignal stops replica f.Target with sig, waits until it has exited, keeps it down for
// the hold and starts it again.
func syncerSignal(sig syscall.Signal) Injector {
	return func(ctx context.Context, t *Target, f Fault) (string, error) {
		if len(t.Replicas) == 0 {
			return "", errNoCandidate
		}
		r := t.Replicas[f.Target%len(t.Replicas)]
		pid := r.Signal(sig)
		sleepCtx(ctx, f.Hold())
		if err := r.Start(); err != nil {
			return "", fmt.Errorf("starting %s again: %w", r.ID, err)
		}
		return fmt.Sprintf("%s %s (pid %d), down %s, started again as pid %d", sig, r.ID, pid, f.Hold(), r.PID()), nil
	}
}

// tenantPause SIGSTOPs tenant f.Target's kube-apiserver, keeps it stopped for the hold and
// SIGCONTs it.
func tenantPause(ctx context.Context, t *Target, f Fault) (string, error) {
	if len(t.TenantUIDs) == 0 {
		return "", errNoCandidate
	}
	i := f.Target % len(t.TenantUIDs)
	pid := t.TenantAPIServerPID(i)
	if pid <= 0 {
		return "", fmt.Errorf("tenant %d: no kube-apiserver pid", i)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return "", fmt.Errorf("SIGSTOP pid %d: %w", pid, err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	sleepCtx(ctx, f.Hold())
	return fmt.Sprintf("tenant %d kube-apiserver (pid %d) stopped for %s", i, pid, f.Hold()), nil
}

// superCopies returns the super copies of tenant f.Target's load objects, sorted by kind,
// namespace and name.
func superCopies(ctx context.Context, t *Target, f Fault) ([]Obj, error) {
	if len(t.TenantUIDs) == 0 {
		return nil, errNoCandidate
	}
	uid := t.TenantUIDs[f.Target%len(t.TenantUIDs)]
	var out []Obj
	for _, l := range listers {
		objs, err := l.list(ctx, t.Super, metav1.ListOptions{LabelSelector: conversion.LabelTenantUID + "=" + uid + "," + LabelLoad + "=" + ValueLoad})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if !o.Deleting {
				out = append(out, o)
			}
		}
	}
	if len(out) == 0 {
		return nil, errNoCandidate
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, nil
}

// superCopyDelete deletes the super copy f.Pick chooses among tenant f.Target's.
func superCopyDelete(ctx context.Context, t *Target, f Fault) (string, error) {
	objs, err := superCopies(ctx, t, f)
	if err != nil {
		return "", err
	}
	o := objs[f.Pick%uint64(len(objs))]
	uid := types.UID(o.UID)
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	c := t.Super.CoreV1()
	switch o.Kind {
	case "ConfigMap":
		err = c.ConfigMaps(o.Namespace).Delete(ctx, o.Name, opts)
	case "Secret":
		err = c.Secrets(o.Namespace).Delete(ctx, o.Name, opts)
	case "Service":
		err = c.Services(o.Namespace).Delete(ctx, o.Name, opts)
	case "Pod":
		err = c.Pods(o.Namespace).Delete(ctx, o.Name, opts)
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return "", fmt.Errorf("deleting super %s: %w", o.Key(), err)
	}
	return fmt.Sprintf("deleted super %s (uid %s) of %d candidates", o.Key(), o.UID, len(objs)), nil
}

// superCopyEdit sets label LabelGen of the super copy f.Pick chooses to a value no tenant
// object has (and, for a ConfigMap, its data), as someone editing the super cluster would.
func superCopyEdit(ctx context.Context, t *Target, f Fault) (string, error) {
	objs, err := superCopies(ctx, t, f)
	if err != nil {
		return "", err
	}
	o := objs[f.Pick%uint64(len(objs))]
	val := fmt.Sprintf("tampered-%d", f.Seq)
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, LabelGen, val)
	if o.Kind == "ConfigMap" {
		patch = fmt.Sprintf(`{"metadata":{"labels":{%q:%q}},"data":{"gen":%q}}`, LabelGen, val, val)
	}
	c := t.Super.CoreV1()
	p := []byte(patch)
	switch o.Kind {
	case "ConfigMap":
		_, err = c.ConfigMaps(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, p, metav1.PatchOptions{})
	case "Secret":
		_, err = c.Secrets(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, p, metav1.PatchOptions{})
	case "Service":
		_, err = c.Services(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, p, metav1.PatchOptions{})
	case "Pod":
		_, err = c.Pods(o.Namespace).Patch(ctx, o.Name, types.MergePatchType, p, metav1.PatchOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("editing super %s: %w", o.Key(), err)
	}
	return fmt.Sprintf("edited super %s (uid %s): %s", o.Key(), o.UID, patch), nil
}

// checkpointSecretNames returns the names of the checkpoint Secrets (manifests and chunks of
// every store: the replicas' and the tenants' hand-over ones), sorted.
func checkpointSecretNames(ctx context.Context, t *Target) ([]string, error) {
	l, err := t.Super.CoreV1().Secrets(t.CheckpointNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range l.Items {
		if strings.HasPrefix(s.Name, t.CheckpointPrefix) && s.DeletionTimestamp.IsZero() {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return nil, errNoCandidate
	}
	sort.Strings(names)
	return names, nil
}

// checkpointDelete deletes the checkpoint Secret f.Pick chooses.
func checkpointDelete(ctx context.Context, t *Target, f Fault) (string, error) {
	names, err := checkpointSecretNames(ctx, t)
	if err != nil {
		return "", err
	}
	name := names[f.Pick%uint64(len(names))]
	if err := t.Super.CoreV1().Secrets(t.CheckpointNamespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return "", err
	}
	return fmt.Sprintf("deleted checkpoint Secret %s/%s of %v", t.CheckpointNamespace, name, names), nil
}

// replicaOfSecret returns the replica whose own checkpoint store Secret name belongs to
// ("<prefix>-shard-<id>" and its chunks "<prefix>-shard-<id>-g<generation>-<i>"); for another
// store (a tenant's hand-over store, or the one store of an unsharded replica) replica target.
func replicaOfSecret(t *Target, name string, target int) *Replica {
	for _, r := range t.Replicas {
		own := t.CheckpointPrefix + "-shard-" + r.ID
		if name == own || strings.HasPrefix(name, own+"-g") {
			return r
		}
	}
	return t.Replicas[target%len(t.Replicas)]
}

// Corruption modes of corruptData.
const (
	corruptGarbage  = 0 // every value's bytes replaced by pseudo-random ones, same length
	corruptTruncate = 1 // every value cut to half its length
)

// corruptData returns a corrupted copy of a Secret's data (mode corruptGarbage or
// corruptTruncate; the garbage is drawn from seed). data is not changed.
func corruptData(data map[string][]byte, mode int, seed uint64) map[string][]byte {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make(map[string][]byte, len(data))
	for _, k := range sortedKeys(data) {
		v := data[k]
		switch mode {
		case corruptTruncate:
			out[k] = append([]byte(nil), v[:len(v)/2]...)
		default:
			g := make([]byte, max(len(v), 16))
			for i := range g {
				g[i] = byte(rng.UintN(256))
			}
			out[k] = g
		}
	}
	return out
}

// checkpointCorrupt SIGKILLs the replica that reads the checkpoint Secret f.Pick chooses (so
// no save of its own repairs it first), corrupts that Secret's data (garbage or truncated,
// by f.Pick), and starts the replica again after the hold: it reads the corrupted checkpoint
// on start.
func checkpointCorrupt(ctx context.Context, t *Target, f Fault) (string, error) {
	if len(t.Replicas) == 0 {
		return "", errNoCandidate
	}
	names, err := checkpointSecretNames(ctx, t)
	if err != nil {
		return "", err
	}
	name := names[f.Pick%uint64(len(names))]
	r := replicaOfSecret(t, name, f.Target)
	pid := r.Signal(syscall.SIGKILL)
	detail, err := corruptSecret(ctx, t, name, int((f.Pick>>32)%2), f.Pick)
	sleepCtx(ctx, f.Hold())
	if serr := r.Start(); serr != nil {
		return "", fmt.Errorf("starting %s again: %w", r.ID, serr)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("SIGKILL %s (pid %d), %s, started again after %s as pid %d", r.ID, pid, detail, f.Hold(), r.PID()), nil
}

func corruptSecret(ctx context.Context, t *Target, name string, mode int, seed uint64) (string, error) {
	c := t.Super.CoreV1().Secrets(t.CheckpointNamespace)
	s, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading checkpoint Secret %s: %w", name, err)
	}
	s.Data = corruptData(s.Data, mode, seed)
	if s.Immutable != nil && *s.Immutable {
		// A chunk: its data cannot be updated, so it is replaced by a corrupted copy.
		uid := s.UID
		if err := c.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
			return "", fmt.Errorf("replacing immutable checkpoint Secret %s: %w", name, err)
		}
		s.ResourceVersion, s.UID, s.CreationTimestamp = "", "", metav1.Time{}
		_, err = c.Create(ctx, s, metav1.CreateOptions{})
	} else {
		_, err = c.Update(ctx, s, metav1.UpdateOptions{})
	}
	if err != nil {
		return "", fmt.Errorf("corrupting checkpoint Secret %s: %w", name, err)
	}
	return fmt.Sprintf("checkpoint Secret %s/%s %s", t.CheckpointNamespace, name, map[int]string{corruptGarbage: "filled with garbage", corruptTruncate: "truncated"}[mode]), nil
}

// replicaPause SIGSTOPs replica f.Target for the hold (longer than its shard Lease: the other
// replicas take its tenants meanwhile) and SIGCONTs it.
func replicaPause(ctx context.Context, t *Target, f Fault) (string, error) {
	if len(t.Replicas) == 0 {
		return "", errNoCandidate
	}
	r := t.Replicas[f.Target%len(t.Replicas)]
	pid := r.PID()
	if pid <= 0 {
		return "", errNoCandidate
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return "", fmt.Errorf("SIGSTOP %s (pid %d): %w", r.ID, pid, err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	sleepCtx(ctx, f.Hold())
	return fmt.Sprintf("%s (pid %d) stopped for %s, continued", r.ID, pid, f.Hold()), nil
}

// RefusingPolicy is the TenantPolicy PolicyFlip points a Tenant at: it allows NodePort
// Services only, so every Service of the load (ClusterIP) is refused.
const RefusingPolicy = "chaos-refuse-clusterip-services"

// policyFlip points tenant f.Target's Tenant at RefusingPolicy for the hold (its Services are
// refused: their super copies go), then back at the policy it named before.
func policyFlip(ctx context.Context, t *Target, f Fault) (string, error) {
	if t.Tenancy == nil || len(t.TenantNames) == 0 {
		return "", errNoCandidate
	}
	i := f.Target % len(t.TenantNames)
	name, uid := t.TenantNames[i], t.TenantUIDs[i]
	p := &tenancyv1alpha1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: RefusingPolicy}, Spec: tenancyv1alpha1.TenantPolicySpec{
		Services: &tenancyv1alpha1.ServicePolicy{AllowedTypes: []corev1.ServiceType{corev1.ServiceTypeNodePort}}}}
	if err := t.Tenancy.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating TenantPolicy %s: %w", RefusingPolicy, err)
	}
	old, err := setPolicyName(ctx, t.Tenancy, name, RefusingPolicy)
	if err != nil {
		return "", err
	}
	t.Refusals.Begin(uid, "Service", time.Now())
	sleepCtx(ctx, f.Hold())
	t.Refusals.End(uid, "Service") // before the policy is back: copies may come back at once
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := setPolicyName(rctx, t.Tenancy, name, old); err != nil {
		return "", fmt.Errorf("restoring Tenant %s spec.policyName %q: %w", name, old, err)
	}
	return fmt.Sprintf("Tenant %s: spec.policyName %q → %s (ClusterIP Services refused) for %s, then back", name, old, RefusingPolicy, f.Hold()), nil
}

// setPolicyName sets Tenant name's spec.policyName and returns the previous one.
func setPolicyName(ctx context.Context, c client.Client, name, policyName string) (string, error) {
	var old string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		tn := &tenancyv1alpha1.Tenant{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		old = tn.Spec.PolicyName
		tn.Spec.PolicyName = policyName
		return c.Update(ctx, tn)
	})
	if err != nil {
		return "", fmt.Errorf("setting Tenant %s spec.policyName %q: %w", name, policyName, err)
	}
	return old, nil
}

// superEtcdCompact SIGKILLs replica f.Target, compacts the super cluster's etcd at its current
// revision, and starts the replica again after the hold: it resumes from checkpointed
// positions older than the compaction.
func superEtcdCompact(ctx context.Context, t *Target, f Fault) (string, error) {
	if t.SuperEtcdURL == "" || len(t.Replicas) == 0 {
		return "", errNoCandidate
	}
	r := t.Replicas[f.Target%len(t.Replicas)]
	pid := r.Signal(syscall.SIGKILL)
	rev, err := etcdCompact(ctx, t.SuperEtcdURL)
	sleepCtx(ctx, f.Hold())
	if serr := r.Start(); serr != nil {
		return "", fmt.Errorf("starting %s again: %w", r.ID, serr)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("SIGKILL %s (pid %d), super etcd compacted at revision %d, %s started again after %s as pid %d", r.ID, pid, rev, r.ID, f.Hold(), r.PID()), nil
}

// etcdCompact compacts the etcd at url (its JSON gateway) at its current revision and returns
// the revision.
func etcdCompact(ctx context.Context, url string) (int64, error) {
	var rr struct {
		Header struct {
			Revision int64 `json:"revision,string"`
		} `json:"header"`
	}
	if err := etcdCall(ctx, url+"/v3/kv/range", `{"key":"AA=="}`, &rr); err != nil { // key "\x00"
		return 0, err
	}
	if rr.Header.Revision <= 0 {
		return 0, fmt.Errorf("etcd %s: no revision in the range response", url)
	}
	var cr struct{}
	if err := etcdCall(ctx, url+"/v3/kv/compaction", fmt.Sprintf(`{"revision":"%d"}`, rr.Header.Revision), &cr); err != nil {
		return 0, err
	}
	return rr.Header.Revision, nil
}

func etcdCall(ctx context.Context, url, body string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", url, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}

// tenantRestart kills tenant f.Target's kube-apiserver and starts it again (the restart
// returns once it is ready).
func tenantRestart(ctx context.Context, t *Target, f Fault) (string, error) {
	if t.RestartTenantAPIServer == nil || len(t.TenantUIDs) == 0 {
		return "", errNoCandidate
	}
	i := f.Target % len(t.TenantUIDs)
	start := time.Now()
	if err := t.RestartTenantAPIServer(ctx, i); err != nil {
		return "", fmt.Errorf("restarting tenant %d kube-apiserver: %w", i, err)
	}
	return fmt.Sprintf("tenant %d kube-apiserver killed and started again, ready after %s", i, time.Since(start).Round(10*time.Millisecond)), nil
}
