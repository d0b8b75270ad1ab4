package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/status"
)

// What a violation's evidence holds at most: log lines per replica, bytes per line.
const (
	evidenceLogLines = 4
	evidenceLineMax  = 600
)

// withEvidence returns vs with, for each violation about one tenant object (its Key is
// "<tenant>/Kind/ns/name"), what the replicas knew of it when the settle bound passed: each
// replica's status row of the tenant (shard, queue depths, last sync and checkpoint, and the
// object's request if it is among the hot ones) and the last lines of each replica's log that
// name the object's request or the tenant's hand-overs and checkpoints. A super copy left
// stale then says whether its request was still being retried (and why), sat in a queue, or
// was in no replica's queue at all (lost).
func (h *Harness) withEvidence(ctx context.Context, vs []Violation) []Violation {
	statuses := map[string]*status.Snapshot{}
	errs := map[string]error{}
	logs := map[string][]byte{}
	for _, r := range h.target.Replicas {
		st, err := fetchStatus(ctx, r.Metrics)
		statuses[r.ID], errs[r.ID] = st, err
		if b, err := os.ReadFile(r.Log); err == nil {
			logs[r.ID] = b
		}
	}
	out := make([]Violation, len(vs))
	for i, v := range vs {
		out[i] = v
		out[i].Evidence = objectEvidence(v.Key, h.replicaIDs(), statuses, errs, logs)
	}
	return out
}

func (h *Harness) replicaIDs() []string {
	ids := make([]string, 0, len(h.target.Replicas))
	for _, r := range h.target.Replicas {
		ids = append(ids, r.ID)
	}
	return ids
}

// fetchStatus reads a replica's /status.json from its metrics address.
func fetchStatus(ctx context.Context, addr string) (*status.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/status.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status.json: %s", resp.Status)
	}
	var st status.Snapshot
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&st); err != nil {
		return nil, err
	}
	return &st, nil
}

// objectEvidence is the evidence of the violation with key (see withEvidence) from the
// replicas' status snapshots (by replica ID; errs holds why one is missing) and logs; nil for
// a key that names no tenant object.
func objectEvidence(key string, replicas []string, statuses map[string]*status.Snapshot, errs map[string]error, logs map[string][]byte) []string {
	parts := strings.SplitN(key, "/", 4)
	if len(parts) != 4 || parts[0] == "super" || parts[0] == "replica" {
		return nil
	}
	tenantName, kind, ns, name := parts[0], parts[1], parts[2], parts[3]
	request := tenantName + "/" + kind + "/" + ns + "/" + name // resources.Request.String
	var out []string
	for _, id := range replicas {
		out = append(out, statusLine(id, tenantName, kind, ns, name, statuses[id], errs[id]))
		for _, l := range lastLines(logs[id], evidenceLogLines, func(line string) bool {
			return strings.Contains(line, request) || strings.Contains(line, `"`+tenantName+`"`) && mentionsHandover(line)
		}) {
			out = append(out, "replica "+id+" log: "+l)
		}
	}
	return out
}

// statusLine renders replica id's status row of tenantName and the hot request of the object
// (kind ns/name), if listed.
func statusLine(id, tenantName, kind, ns, name string, st *status.Snapshot, err error) string {
	if st == nil {
		return fmt.Sprintf("replica %s: no status (%v)", id, err)
	}
	for _, t := range st.Tenants {
		if t.Name != tenantName {
			continue
		}
		s := fmt.Sprintf("replica %s: tenant %s phase %s shard %q, downward %s, upward %s, last sync %s, last checkpoint %s",
			id, t.Name, t.Phase, t.Shard, queueText(t.Downward), queueText(t.Upward), ago(st.Time, t.LastSync), ago(st.Time, t.LastCheckpoint))
		retrying := "not among its hot requests"
		for _, r := range t.Retrying {
			if r.Kind == kind && r.Namespace == ns && r.Name == name {
				retrying = fmt.Sprintf("%s retried %d times since %s, reason %s, long backoff %t: %s",
					r.Direction, r.Retries, ago(st.Time, r.Since), r.Reason, r.LongBackoff, r.LastError)
			}
		}
		return s + "; the object's request: " + retrying
	}
	return fmt.Sprintf("replica %s: tenant %s not known here", id, tenantName)
}

func queueText(q *status.Queue) string {
	if q == nil {
		return "-"
	}
	return fmt.Sprintf("depth %d (oldest %.0fs)", q.Depth, q.OldestSeconds)
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%.0fs ago", now.Sub(t).Seconds())
}

// mentionsHandover reports whether a log line is about a tenant's hand-over or checkpoints.
func mentionsHandover(line string) bool {
	for _, m := range []string{"Took the tenant", "Released the tenant", "Hand-over checkpoint written",
		"Final checkpoint", "starts cold", "Objects changed since they were last enqueued"} {
		if strings.Contains(line, m) {
			return true
		}
	}
	return false
}

// lastLines returns the last n lines of log that keep accepts, each cut to evidenceLineMax bytes.
func lastLines(log []byte, n int, keep func(string) bool) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if !keep(line) {
			continue
		}
		if len(line) > evidenceLineMax {
			line = line[:evidenceLineMax] + "…"
		}
		out = append(out, line)
		if len(out) > n {
			out = out[1:]
		}
	}
	return out
}

// logUnreadySuperPods logs every managed super Pod that is not Running and Ready, with its
// node, scheduling gates and conditions: what the super cluster says about tenant Pods left
// Pending.
func (h *Harness) logUnreadySuperPods(ctx context.Context) {
	l, err := h.env.Super.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: conversion.LabelManagedBy + "=" + conversion.ManagedByValue})
	if err != nil {
		h.o.Logf("listing super Pods: %v", err)
		return
	}
	// A super component that exited (nothing starts it again) leaves Pods unscheduled or not run.
	for name, pid := range h.env.Super.PIDs() {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			h.o.Logf("super %s (pid %d) is not running (log %s)", name, pid, filepath.Join(h.env.Super.LogDir(), name+".log"))
		}
	}
	for _, p := range l.Items {
		if p.Status.Phase == corev1.PodRunning && podReady(&p) {
			continue
		}
		var conds []string
		for _, c := range p.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s %s %s", c.Type, c.Status, c.Reason, c.Message))
		}
		var gates []string
		for _, g := range p.Spec.SchedulingGates {
			gates = append(gates, g.Name)
		}
		h.o.Logf("super Pod %s/%s (uid %s, created %s, deleting %t): phase %q, node %q, scheduling gates %v, conditions %v",
			p.Namespace, p.Name, p.UID, p.CreationTimestamp.UTC().Format(time.RFC3339), p.DeletionTimestamp != nil, p.Status.Phase, p.Spec.NodeName, gates, conds)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
