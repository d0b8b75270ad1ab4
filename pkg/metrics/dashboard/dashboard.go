package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Paths of the generated files, relative to the repository root.
const (
	JSONPath      = "charts/vc-syncer/dashboards/vc-syncer.json"
	ConfigMapPath = "config/grafana/vc-syncer-dashboard.yaml"
	// ConfigMapKey is the ConfigMap data key holding the dashboard (the sidecar loads *.json).
	ConfigMapKey = "vc-syncer.json"
)

// UID is the dashboard's stable Grafana uid.
const UID = "vc-syncer"

type target struct {
	Expr, Legend string
	// Instant asks Grafana for one value per series (tables), not a range.
	Instant bool
}

type panel struct {
	Title, Description string
	// Type is a Grafana panel type: timeseries, stat, bargauge, table.
	Type string
	// Unit is a Grafana unit: s, short, ops, bytes, percentunit, dateTimeAsIso, none.
	Unit    string
	W, H    int
	Stack   bool
	Targets []target
}

type row struct {
	Title  string
	Panels []panel
}

const (
	ds      = `{"type":"prometheus","uid":"${datasource}"}`
	rate    = `[$__rate_interval]`
	sel     = `{tenant=~"$tenant"}`
	selDown = `{tenant=~"$tenant",direction="downward"}`
)

func ts(title, unit, desc string, targets ...target) panel {
	return panel{Title: title, Description: desc, Type: "timeseries", Unit: unit, W: 12, H: 8, Targets: targets}
}

func stat(title, unit, desc string, targets ...target) panel {
	return panel{Title: title, Description: desc, Type: "stat", Unit: unit, W: 6, H: 4, Targets: targets}
}

func q(expr, legend string) target { return target{Expr: expr, Legend: legend} }

func quantile(qv, inner string) string {
	return fmt.Sprintf("histogram_quantile(%s, %s)", qv, inner)
}

// rows is the dashboard's content.
func rows() []row {
	return []row{
		{Title: "Overview: all tenants", Panels: []panel{
			stat("Tenants connected", "short", "Registered Tenants whose apiserver answered the last probe (vcsyncer_tenant_connected).",
				q(`sum(vcsyncer_tenant_connected)`, "connected")),
			stat("Tenants not connected", "short", "Registered Tenants whose last probe failed; see the Tenant's Connected condition for the reason.",
				q(`count(vcsyncer_tenant_connected == 0) or vector(0)`, "not connected")),
			stat("Tenants synced", "short", "Tenants whose caches have synced and whose events are being synced (vcsyncer_tenant_synced).",
				q(`sum(vcsyncer_tenant_synced)`, "synced")),
			{Title: "Build", Type: "table", Unit: "none", W: 6, H: 4,
				Description: "The running vc-syncer builds (vcsyncer_build_info), one row per replica.",
				Targets:     []target{{Expr: `count by (version, revision, goversion) (vcsyncer_build_info)`, Legend: "{{version}} {{revision}}", Instant: true}}},
			ts("Tenant connected", "short", "1 while the tenant's apiserver answers the syncer's probes, 0 while it does not.",
				q(`max by (tenant) (vcsyncer_tenant_connected)`, "{{tenant}}")),
			ts("Downward lag p99 by tenant", "s", "99th percentile of the end-to-end lag from a tenant change reaching the syncer to the super cluster write that carries it (vcsyncer_sync_lag_seconds).",
				q(quantile("0.99", `sum by (le, tenant) (rate(vcsyncer_sync_lag_seconds_bucket{direction="downward"}`+rate+`))`), "{{tenant}}")),
			ts("Upward lag p99 by tenant", "s", "99th percentile of the end-to-end lag from a super cluster change (status, scheduling) reaching the syncer to the tenant write that carries it.",
				q(quantile("0.99", `sum by (le, tenant) (rate(vcsyncer_sync_lag_seconds_bucket{direction="upward"}`+rate+`))`), "{{tenant}}")),
			ts("Oldest queued item age by tenant", "s", "Age of the oldest request waiting in each tenant's queue: the tenant's current queue lag (vcsyncer_queue_oldest_item_age_seconds).",
				q(`max by (tenant, direction) (vcsyncer_queue_oldest_item_age_seconds)`, "{{tenant}} {{direction}}")),
			ts("Queue depth by tenant", "short", "Requests waiting per tenant and direction (vcsyncer_queue_depth).",
				q(`sum by (tenant, direction) (vcsyncer_queue_depth)`, "{{tenant}} {{direction}}")),
			ts("Throughput by tenant", "ops", "Reconciles per second per tenant and direction (vcsyncer_sync_duration_seconds_count).",
				q(`sum by (tenant, direction) (rate(vcsyncer_sync_duration_seconds_count`+rate+`))`, "{{tenant}} {{direction}}")),
			ts("Sync errors by tenant", "ops", "Failed reconciles per second (each is retried with backoff; see the tenant's Warning Events).",
				q(`sum by (tenant, direction) (rate(vcsyncer_sync_duration_seconds_count{result="error"}`+rate+`))`, "{{tenant}} {{direction}}")),
			ts("Queue adds and retries by tenant", "ops", "Requests added to the queues per second, and re-queued after a failure (vcsyncer_queue_adds_total, vcsyncer_queue_retries_total).",
				q(`sum by (tenant) (rate(vcsyncer_queue_adds_total`+rate+`))`, "{{tenant}} adds"),
				q(`sum by (tenant) (rate(vcsyncer_queue_retries_total`+rate+`))`, "{{tenant}} retries")),
			ts("Queue wait p99 by tenant", "s", "99th percentile of the time a request waited in its tenant's queue before a worker took it (vcsyncer_queue_wait_duration_seconds).",
				q(quantile("0.99", `sum by (le, tenant, direction) (rate(vcsyncer_queue_wait_duration_seconds_bucket`+rate+`))`), "{{tenant}} {{direction}}")),
			ts("vNodes by tenant", "short", "Virtual Nodes kept in each tenant (vcsyncer_vnodes).",
				q(`sum by (tenant) (vcsyncer_vnodes)`, "{{tenant}}")),
		}},
		{Title: "Tenant drill-down: $tenant", Panels: []panel{
			stat("Connected", "short", "1 when every selected tenant is connected.",
				q(`min(vcsyncer_tenant_connected`+sel+`)`, "connected")),
			stat("Queue depth", "short", "Requests waiting for the selected tenants, both directions.",
				q(`sum(vcsyncer_queue_depth`+sel+`)`, "depth")),
			stat("Oldest queued item", "s", "Age of the oldest waiting request of the selected tenants.",
				q(`max(vcsyncer_queue_oldest_item_age_seconds`+sel+`)`, "age")),
			stat("Downward lag p99", "s", "99th percentile end-to-end downward lag of the selected tenants.",
				q(quantile("0.99", `sum by (le) (rate(vcsyncer_sync_lag_seconds_bucket`+selDown+rate+`))`), "p99")),
			ts("Sync duration p99 by kind", "s", "99th percentile duration of one reconcile, by kind and direction.",
				q(quantile("0.99", `sum by (le, kind, direction) (rate(vcsyncer_sync_duration_seconds_bucket`+sel+rate+`))`), "{{kind}} {{direction}}")),
			ts("Syncs by kind and result", "ops", "Reconciles per second, by kind, direction and result (success|error).",
				q(`sum by (kind, direction, result) (rate(vcsyncer_sync_duration_seconds_count`+sel+rate+`))`, "{{kind}} {{direction}} {{result}}")),
			ts("End-to-end lag by kind", "s", "50th and 99th percentile lag from a change reaching the syncer to the write on the other side, by kind and direction.",
				q(quantile("0.5", `sum by (le, kind, direction) (rate(vcsyncer_sync_lag_seconds_bucket`+sel+rate+`))`), "p50 {{kind}} {{direction}}"),
				q(quantile("0.99", `sum by (le, kind, direction) (rate(vcsyncer_sync_lag_seconds_bucket`+sel+rate+`))`), "p99 {{kind}} {{direction}}")),
			ts("Queue depth and oldest item", "short", "Waiting requests and the age (seconds) of the oldest, by direction.",
				q(`sum by (direction) (vcsyncer_queue_depth`+sel+`)`, "depth {{direction}}"),
				q(`max by (direction) (vcsyncer_queue_oldest_item_age_seconds`+sel+`)`, "oldest (s) {{direction}}")),
		}},
		{Title: "Pod creation: five phases (VirtualCluster paper)", Panels: []panel{
			{Title: "Mean time per phase", Type: "bargauge", Unit: "s", W: 12, H: 8,
				Description: "Mean time a new tenant Pod spends in each phase: downward queue, downward process (to the super Pod), super scheduling, upward queue, upward process (to the binding in the tenant).",
				Targets:     []target{q(`sum by (phase) (rate(vcsyncer_pod_creation_phase_duration_seconds_sum`+sel+rate+`)) / sum by (phase) (rate(vcsyncer_pod_creation_phase_duration_seconds_count`+sel+rate+`))`, "{{phase}}")}},
			{Title: "Phase p99 (stacked)", Type: "timeseries", Unit: "s", W: 12, H: 8, Stack: true,
				Description: "99th percentile of each phase over time, stacked in pipeline order.",
				Targets:     []target{q(quantile("0.99", `sum by (le, phase) (rate(vcsyncer_pod_creation_phase_duration_seconds_bucket`+sel+rate+`))`), "{{phase}}")}},
			ts("Pod creation p50 / p99 by tenant", "s", "Time from a new tenant Pod reaching the syncer to its binding to a vNode in the tenant (vcsyncer_pod_creation_duration_seconds).",
				q(quantile("0.5", `sum by (le, tenant) (rate(vcsyncer_pod_creation_duration_seconds_bucket`+rate+`))`), "p50 {{tenant}}"),
				q(quantile("0.99", `sum by (le, tenant) (rate(vcsyncer_pod_creation_duration_seconds_bucket`+rate+`))`), "p99 {{tenant}}")),
			ts("Pods created per second by tenant", "ops", "New tenant Pods bound per second.",
				q(`sum by (tenant) (rate(vcsyncer_pod_creation_duration_seconds_count`+rate+`))`, "{{tenant}}")),
		}},
		{Title: "Remediation", Panels: []panel{
			ts("Mismatches by tenant and reason", "ops", "Confirmed drift between a tenant object and its super copy that only the remediation scan found, re-enqueued at low priority (vcsyncer_remediation_mismatches_total).",
				q(`sum by (tenant, kind, reason) (rate(vcsyncer_remediation_mismatches_total`+rate+`))`, "{{tenant}} {{kind}} {{reason}}")),
			ts("Fixes by tenant", "ops", "Re-enqueued mismatches a later scan found repaired (vcsyncer_remediation_fixes_total).",
				q(`sum by (tenant, kind, reason) (rate(vcsyncer_remediation_fixes_total`+rate+`))`, "{{tenant}} {{kind}} {{reason}}")),
			ts("Skipped tenants", "ops", "Tenants (or kinds) left out of scans because their caches could not be trusted: not synced, disconnected, cache not synced (vcsyncer_remediation_skips_total).",
				q(`sum by (tenant, reason) (rate(vcsyncer_remediation_skips_total`+rate+`))`, "{{tenant}} {{reason}}")),
			ts("Scan duration", "s", "50th and 99th percentile duration of one scan over every tenant and kind (vcsyncer_remediation_scan_duration_seconds).",
				q(quantile("0.5", `sum by (le) (rate(vcsyncer_remediation_scan_duration_seconds_bucket`+rate+`))`), "p50"),
				q(quantile("0.99", `sum by (le) (rate(vcsyncer_remediation_scan_duration_seconds_bucket`+rate+`))`), "p99")),
			ts("Mismatches of $tenant by kind", "short", "Mismatches of the selected tenants found in the dashboard's time range, by kind and reason.",
				q(`sum by (kind, reason) (increase(vcsyncer_remediation_mismatches_total`+sel+`[$__range]))`, "{{kind}} {{reason}}")),
		}},
		{Title: "Super-cluster admission window", Panels: []panel{
			stat("Window", "short", "Current size of the admission window: new super Pods that may be created and not yet bound at once (vcsyncer_admission_window).",
				q(`max(vcsyncer_admission_window)`, "window")),
			stat("Waiting", "short", "Tenant Pods waiting in the admission window, all tenants (vcsyncer_admission_waiting).",
				q(`sum(vcsyncer_admission_waiting)`, "waiting")),
			ts("Admitted by tenant", "ops", "New super Pods admitted per second, by tenant (vcsyncer_admission_admitted_total).",
				q(`sum by (tenant) (rate(vcsyncer_admission_admitted_total`+sel+rate+`))`, "{{tenant}}")),
			ts("Waiting and held by tenant", "short", "Pods waiting in the window and slots held (created, not yet bound), by tenant (vcsyncer_admission_waiting, vcsyncer_admission_held).",
				q(`sum by (tenant) (vcsyncer_admission_waiting`+sel+`)`, "{{tenant}} waiting"),
				q(`sum by (tenant) (vcsyncer_admission_held`+sel+`)`, "{{tenant}} held")),
			ts("Admission wait p99 by tenant", "s", "99th percentile time a new super Pod waited in the window, by tenant (vcsyncer_admission_wait_seconds).",
				q(quantile("0.99", `sum by (tenant, le) (rate(vcsyncer_admission_wait_seconds_bucket`+sel+rate+`))`), "{{tenant}}")),
		}},
		{Title: "Kubelet API: tenant users' logs, exec, attach, port-forward", Panels: []panel{
			ts("Kubelet API requests by tenant", "ops", "Requests of the vNodes' kubelet API forwarded to the super cluster, per tenant and endpoint (vcsyncer_kubelet_requests_total{result=\"forwarded\"}).",
				q(`sum by (tenant, endpoint) (rate(vcsyncer_kubelet_requests_total{tenant=~"$tenant",result="forwarded"}`+rate+`))`, "{{tenant}} {{endpoint}}")),
			ts("Kubelet API refusals", "ops", "Requests refused, per tenant and reason (vcsyncer_kubelet_requests_total: pod_not_found, not_owned, policy_forbidden, too_many_streams, bad_query, ...), and those attributed to no tenant (401, vcsyncer_kubelet_unauthenticated_total, by reason).",
				q(`sum by (tenant, result) (rate(vcsyncer_kubelet_requests_total{tenant=~"$tenant",result!="forwarded"}`+rate+`))`, "{{tenant}} {{result}}"),
				q(`sum by (reason) (rate(vcsyncer_kubelet_unauthenticated_total`+rate+`))`, "401 {{reason}}")),
			ts("Kubelet API bytes by tenant", "Bps", "Bytes of the kubelet API's streams per tenant and direction: to_tenant (logs, exec output, port-forward data from the Pod), from_tenant (stdin, port-forward data to the Pod) (vcsyncer_kubelet_bytes_total).",
				q(`sum by (tenant, direction) (rate(vcsyncer_kubelet_bytes_total{tenant=~"$tenant"}`+rate+`))`, "{{tenant}} {{direction}}")),
			ts("Kubelet API open streams by tenant", "short", "Requests and streams (logs -f, exec, attach, port-forward) held open per tenant; past its limit (TenantPolicy kubelet.maxStreams, --kubelet-max-streams-per-tenant) a tenant gets 429 (vcsyncer_kubelet_open_streams).",
				q(`sum by (tenant) (vcsyncer_kubelet_open_streams{tenant=~"$tenant"})`, "{{tenant}}")),
		}},
		{Title: "Checkpoints", Panels: []panel{
			stat("Since last checkpoint", "s", "Seconds since the last successful checkpoint (vcsyncer_checkpoint_last_success_timestamp_seconds).",
				q(`time() - max(vcsyncer_checkpoint_last_success_timestamp_seconds)`, "age")),
			stat("Checkpoint size", "bytes", "Size of the last checkpoint written (vcsyncer_checkpoint_size_bytes).",
				q(`max(vcsyncer_checkpoint_size_bytes)`, "size")),
			stat("Checkpoint items", "short", "Objects recorded in the last checkpoint (vcsyncer_checkpoint_items).",
				q(`max(vcsyncer_checkpoint_items)`, "items")),
			stat("Lists avoided", "short", "Full LISTs of a tenant kind avoided by resuming from a checkpoint, in the time range (vcsyncer_checkpoint_lists_avoided_total).",
				q(`sum(increase(vcsyncer_checkpoint_lists_avoided_total[$__range]))`, "avoided")),
			ts("Checkpoint duration", "s", "50th and 99th percentile time to write one checkpoint (vcsyncer_checkpoint_duration_seconds).",
				q(quantile("0.5", `sum by (le) (rate(vcsyncer_checkpoint_duration_seconds_bucket`+rate+`))`), "p50"),
				q(quantile("0.99", `sum by (le) (rate(vcsyncer_checkpoint_duration_seconds_bucket`+rate+`))`), "p99")),
			ts("Checkpoint skips and failures", "ops", "Checkpoints skipped, by reason, and failed (vcsyncer_checkpoint_skips_total, vcsyncer_checkpoint_failures_total).",
				q(`sum by (reason) (rate(vcsyncer_checkpoint_skips_total`+rate+`))`, "skipped: {{reason}}"),
				q(`sum(rate(vcsyncer_checkpoint_failures_total`+rate+`))`, "failed")),
			{Title: "Resume mode by tenant", Type: "table", Unit: "none", W: 24, H: 8,
				Description: "How each tenant kind's source started after the last restart: watch (resumed the watch from the checkpoint), relist-diff (listed and diffed against the checkpoint) or cold (no usable checkpoint) (vcsyncer_source_resume_mode).",
				Targets:     []target{{Expr: `sum by (tenant, mode) (vcsyncer_source_resume_mode)`, Legend: "{{tenant}} {{mode}}", Instant: true}}},
		}},
	}
}

// Grafana JSON model, the fields vc-syncer's dashboard uses.
type (
	gridPos struct {
		H int `json:"h"`
		W int `json:"w"`
		X int `json:"x"`
		Y int `json:"y"`
	}
	jsonTarget struct {
		Datasource   json.RawMessage `json:"datasource"`
		Expr         string          `json:"expr"`
		Format       string          `json:"format,omitempty"`
		Instant      bool            `json:"instant,omitempty"`
		LegendFormat string          `json:"legendFormat"`
		Range        bool            `json:"range"`
		RefID        string          `json:"refId"`
	}
	jsonPanel struct {
		Collapsed   *bool           `json:"collapsed,omitempty"`
		Datasource  json.RawMessage `json:"datasource,omitempty"`
		Description string          `json:"description,omitempty"`
		FieldConfig any             `json:"fieldConfig,omitempty"`
		GridPos     gridPos         `json:"gridPos"`
		ID          int             `json:"id"`
		Options     any             `json:"options,omitempty"`
		Panels      []jsonPanel     `json:"panels,omitempty"`
		Targets     []jsonTarget    `json:"targets,omitempty"`
		Title       string          `json:"title"`
		Type        string          `json:"type"`
	}
	object = map[string]any
)

func fieldConfig(p panel) any {
	custom := object{}
	if p.Type == "timeseries" {
		custom = object{"drawStyle": "line", "fillOpacity": 10, "lineWidth": 1, "showPoints": "never", "spanNulls": true}
		if p.Stack {
			custom["stacking"] = object{"group": "A", "mode": "normal"}
			custom["fillOpacity"] = 40
		}
	}
	return object{"defaults": object{"unit": p.Unit, "custom": custom, "min": 0}, "overrides": []any{}}
}

func options(p panel) any {
	reduce := object{"calcs": []string{"lastNotNull"}, "fields": "", "values": false}
	switch p.Type {
	case "stat":
		return object{"colorMode": "value", "graphMode": "area", "justifyMode": "auto", "orientation": "auto", "reduceOptions": reduce, "textMode": "auto"}
	case "bargauge":
		return object{"displayMode": "gradient", "orientation": "horizontal", "reduceOptions": reduce, "showUnfilled": true}
	case "table":
		return object{"showHeader": true}
	default:
		return object{
			"legend":  object{"calcs": []string{"lastNotNull", "max"}, "displayMode": "table", "placement": "bottom", "showLegend": true},
			"tooltip": object{"mode": "multi", "sort": "desc"},
		}
	}
}

func build() []jsonPanel {
	var out []jsonPanel
	id, y := 0, 0
	for _, r := range rows() {
		id++
		f := false
		out = append(out, jsonPanel{Collapsed: &f, GridPos: gridPos{H: 1, W: 24, X: 0, Y: y}, ID: id, Title: r.Title, Type: "row", Panels: []jsonPanel{}})
		y++
		x, rowH := 0, 0
		for _, p := range r.Panels {
			if x+p.W > 24 {
				x, y, rowH = 0, y+rowH, 0
			}
			id++
			jp := jsonPanel{
				Datasource: json.RawMessage(ds), Description: p.Description, FieldConfig: fieldConfig(p),
				GridPos: gridPos{H: p.H, W: p.W, X: x, Y: y}, ID: id, Options: options(p), Title: p.Title, Type: p.Type,
			}
			for i, t := range p.Targets {
				jt := jsonTarget{Datasource: json.RawMessage(ds), Expr: t.Expr, LegendFormat: t.Legend, Range: !t.Instant, RefID: string(rune('A' + i))}
				if t.Instant {
					jt.Format, jt.Instant = "table", true
				}
				jp.Targets = append(jp.Targets, jt)
			}
			out = append(out, jp)
			x += p.W
			rowH = max(rowH, p.H)
		}
		y += rowH
	}
	return out
}

// TenantVariableQuery is the query of the dashboard variable tenant.
const TenantVariableQuery = "label_values(vcsyncer_tenant_connected, tenant)"

// JSON returns the dashboard's Grafana JSON model (schemaVersion 39, Grafana 10 and later),
// indented, ending in a newline. The result is deterministic.
func JSON() ([]byte, error) {
	d := object{
		"annotations":   object{"list": []any{}},
		"description":   "vc-syncer: per-tenant lag, queues, throughput, the five-phase Pod creation breakdown, remediation and checkpoints.",
		"editable":      true,
		"graphTooltip":  1,
		"id":            nil,
		"links":         []any{},
		"panels":        build(),
		"refresh":       "30s",
		"schemaVersion": 39,
		"tags":          []string{"vc-syncer", "multi-tenancy"},
		"templating": object{"list": []any{
			object{"current": object{}, "hide": 0, "includeAll": false, "label": "Data source", "multi": false,
				"name": "datasource", "options": []any{}, "query": "prometheus", "refresh": 1, "regex": "", "type": "datasource"},
			object{"current": object{}, "datasource": json.RawMessage(ds), "definition": TenantVariableQuery, "hide": 0,
				"includeAll": true, "label": "Tenant", "multi": true, "name": "tenant", "options": []any{},
				"query":   object{"qryType": 1, "query": TenantVariableQuery, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
				"refresh": 2, "regex": "", "sort": 1, "type": "query"},
		}},
		"time":       object{"from": "now-1h", "to": "now"},
		"timepicker": object{},
		"timezone":   "",
		"title":      "vc-syncer",
		"uid":        UID,
		"version":    1,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ConfigMap returns a ConfigMap manifest (YAML) holding dashboard under ConfigMapKey, labelled
// grafana_dashboard: "1" so the Grafana Helm chart's dashboard sidecar loads it from any
// namespace it watches. The JSON is kept byte for byte in a literal block scalar.
func ConfigMap(dashboard []byte) []byte {
	var b strings.Builder
	b.WriteString(`# Generated by "make dashboard" from ` + JSONPath + `; do not edit.
apiVersion: v1
kind: ConfigMap
metadata:
  name: vc-syncer-dashboard
  namespace: vc-syncer-system
  labels:
    app.kubernetes.io/name: vc-syncer
    app.kubernetes.io/component: dashboard
    grafana_dashboard: "1"
data:
  ` + ConfigMapKey + `: |
`)
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(dashboard), "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("    " + line)
	}
	b.WriteString("\n")
	return []byte(b.String())
}
