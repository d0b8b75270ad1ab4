package status

import (
	"crypto/sha256"
	"encoding/base64"
)

// pageStyle is the page's only style sheet (inline: the page needs no external assets).
const pageStyle = `
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header{display:flex;gap:1em;align-items:baseline;flex-wrap:wrap;padding:12px 20px;background:#24292f;color:#fff}
header h1{font-size:18px;margin:0}
#role{padding:1px 8px;border-radius:10px;background:#2da44e}
#role.standby{background:#9a6700}
#updated,#conn{color:#d0d7de}
#conn.lost{color:#ff8182;font-weight:600}
main{padding:16px 20px}
#error{color:#cf222e}
table{border-collapse:collapse;background:#fff;box-shadow:0 1px 3px rgba(0,0,0,.12)}
th,td{padding:6px 12px;text-align:left;border-bottom:1px solid #d8dee4;white-space:nowrap}
thead th{background:#eaeef2;font-weight:600}
thead tr.sub th{font-weight:400;font-size:12px;color:#57606a}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.stale{opacity:.5}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px;color:#fff;background:#6e7781}
.phase-running{background:#1a7f37}
.phase-connecting,.phase-pending{background:#9a6700}
.phase-unreachable,.phase-unauthorized,.phase-duplicatecontrolplane{background:#cf222e}
#hot{margin-top:16px}
#hot td.error{white-space:normal;max-width:40em;overflow-wrap:anywhere;font-family:ui-monospace,monospace;font-size:12px}
.backoff{color:#9a6700;font-weight:600}
.phase-paused,.phase-terminating{background:#6e7781}
.reason{color:#57606a;font-size:12px;margin-left:6px}
footer{padding:0 20px 16px;color:#57606a;font-size:12px}
`

// pageScript refreshes the table in place from status.json every data-refresh milliseconds.
// It formats exactly as formatDuration and formatAge do, against the snapshot's own time, and
// writes only through textContent.
const pageScript = `
(function () {
  "use strict";
  var every = parseInt(document.body.getAttribute("data-refresh"), 10) || 2000;
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function dur(s) {
    if (s < 0) { s = 0; }
    if (s < 1) { return Math.floor(s * 1000) + "ms"; }
    if (s < 60) { return s.toFixed(1) + "s"; }
    if (s < 3600) { return Math.floor(s / 60) + "m" + two(Math.floor(s) % 60) + "s"; }
    return Math.floor(s / 3600) + "h" + two(Math.floor(s / 60) % 60) + "m";
  }
  function ms(t) {
    var i = t.indexOf(".");
    if (i < 0) { return Date.parse(t); }
    var frac = (t.slice(i + 1, t.length - 1) + "000").slice(0, 3);
    return Date.parse(t.slice(0, i) + "." + frac + "Z");
  }
  function age(t, now) { return t ? dur((now - ms(t)) / 1000) + " ago" : "never"; }
  function cell(tr, cls, text, title) {
    var td = document.createElement("td");
    td.className = cls;
    td.textContent = text;
    if (title) { td.title = title; }
    tr.appendChild(td);
    return td;
  }
  function queue(tr, q) {
    cell(tr, "num depth", q ? String(q.depth) : "\u2013");
    cell(tr, "num oldest", q && q.depth > 0 ? dur(q.oldestSeconds) : "\u2013");
  }
  function render(s) {
    var now = ms(s.time);
    var role = document.getElementById("role");
    role.textContent = s.leader ? "leader" : "standby (not leader): the leader replica syncs";
    role.className = s.leader ? "leader" : "standby";
    document.getElementById("updated").textContent = "updated " + s.time.slice(11, 19) + " UTC";
    var err = document.getElementById("error");
    err.textContent = s.error || "";
    err.hidden = !s.error;
    document.getElementById("count").textContent = String(s.tenants.length);
    var body = document.createElement("tbody");
    var hot = document.createElement("tbody");
    s.tenants.forEach(function (t) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-tenant", t.name);
      cell(tr, "name", t.name);
      var ph = cell(tr, "phase", "");
      var b = document.createElement("span");
      b.className = "badge phase-" + t.phase.toLowerCase();
      b.textContent = t.phase;
      ph.appendChild(b);
      if (t.reason) {
        var r = document.createElement("span");
        r.className = "reason";
        r.textContent = t.reason;
        ph.appendChild(r);
      }
      cell(tr, "num weight", String(t.weight));
      queue(tr, t.downward);
      queue(tr, t.upward);
      cell(tr, "last-sync", age(t.lastSync, now), t.lastSync || "");
      cell(tr, "last-checkpoint", age(t.lastCheckpoint, now), t.lastCheckpoint || "");
      cell(tr, "num streams", String(t.kubeletStreams || 0));
      cell(tr, "num hot", t.hotRequests ? String(t.hotRequests) : "\u2013");
      body.appendChild(tr);
      (t.retrying || []).forEach(function (h) {
        var hr = document.createElement("tr");
        hr.setAttribute("data-tenant", t.name);
        cell(hr, "name", t.name);
        cell(hr, "direction", h.direction);
        cell(hr, "object", h.kind + " " + (h.namespace ? h.namespace + "/" : "") + h.name);
        cell(hr, "num retries", String(h.retries));
        cell(hr, "reason", h.reason);
        cell(hr, "since", age(h.since, now), h.since);
        cell(hr, h.longBackoff ? "next backoff" : "next", h.longBackoff ? "every 5m until it changes" : "backoff \u2264 1m");
        cell(hr, "error", h.lastError);
        hot.appendChild(hr);
      });
    });
    if (s.tenants.length === 0) {
      var tr = document.createElement("tr");
      tr.className = "empty";
      var td = cell(tr, "", "No tenants. Register one with vc-syncer tenant add.");
      td.colSpan = 11;
      body.appendChild(tr);
    }
    var table = document.getElementById("tenants");
    table.replaceChild(body, table.tBodies[0]);
    table.className = "";
    var ht = document.getElementById("hot");
    ht.replaceChild(hot, ht.tBodies[0]);
    ht.hidden = hot.rows.length === 0;
  }
  function poll() {
    fetch("status.json", { cache: "no-store" }).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.json();
    }).then(function (s) {
      render(s);
      var c = document.getElementById("conn");
      c.textContent = "";
      c.className = "";
    }).catch(function (e) {
      var c = document.getElementById("conn");
      c.textContent = "connection lost (" + e.message + "); retrying";
      c.className = "lost";
      document.getElementById("tenants").className = "stale";
    }).then(function () { setTimeout(poll, every); });
  }
  setTimeout(poll, every);
})();
`

// pageTemplate is the page, filled in from a pageView. The script and style are concatenated
// in as literal template text, so the served bytes, and so their CSP hashes, are exactly the
// constants' (a test checks that they hold no template action).
var pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vc-syncer status</title>
<noscript><meta http-equiv="refresh" content="{{.RefreshSeconds}}"></noscript>
<style>` + pageStyle + `</style>
</head>
<body data-refresh="{{.RefreshMillis}}">
<header>
<h1>vc-syncer</h1>
<span id="role" class="{{if .Leader}}leader{{else}}standby{{end}}">{{if .Leader}}leader{{else}}standby (not leader): the leader replica syncs{{end}}</span>
<span><span id="count">{{len .Rows}}</span> tenants</span>
<span id="updated">updated {{.Updated}}</span>
<span id="conn"></span>
</header>
<main>
<p id="error"{{if not .Error}} hidden{{end}}>{{.Error}}</p>
<table id="tenants">
<thead>
<tr><th>Tenant</th><th>Phase</th><th>Weight</th><th colspan="2">Downward queue</th><th colspan="2">Upward queue</th><th>Last sync</th><th>Last checkpoint</th><th title="kubectl logs, exec, attach and port-forward through this replica's kubelet API now">Streams</th><th>Retrying</th></tr>
<tr class="sub"><th></th><th></th><th></th><th>depth</th><th>oldest</th><th>depth</th><th>oldest</th><th></th><th></th><th>kubelet API</th><th>&gt;10 times</th></tr>
</thead>
<tbody>
{{- range .Rows}}
<tr data-tenant="{{.Name}}"><td class="name">{{.Name}}</td><td class="phase"><span class="badge phase-{{.PhaseClass}}">{{.Phase}}</span>{{if .Reason}}<span class="reason">{{.Reason}}</span>{{end}}</td><td class="num weight">{{.Weight}}</td><td class="num depth">{{.DownDepth}}</td><td class="num oldest">{{.DownOldest}}</td><td class="num depth">{{.UpDepth}}</td><td class="num oldest">{{.UpOldest}}</td><td class="last-sync" title="{{.LastSyncTitle}}">{{.LastSync}}</td><td class="last-checkpoint" title="{{.LastCheckpointTitle}}">{{.LastCheckpoint}}</td><td class="num streams">{{.Streams}}</td><td class="num hot">{{.Hot}}</td></tr>
{{- else}}
<tr class="empty"><td colspan="11">No tenants. Register one with vc-syncer tenant add.</td></tr>
{{- end}}
</tbody>
</table>
<table id="hot"{{if not .Hot}} hidden{{end}}>
<caption>Requests retried more than 10 times in a row (top 5 per tenant)</caption>
<thead><tr><th>Tenant</th><th>Direction</th><th>Object</th><th>Retries</th><th>Last reason</th><th>Failing since</th><th>Next retry</th><th>Last error</th></tr></thead>
<tbody>
{{- range .Hot}}
<tr data-tenant="{{.Tenant}}"><td class="name">{{.Tenant}}</td><td class="direction">{{.Direction}}</td><td class="object">{{.Object}}</td><td class="num retries">{{.Retries}}</td><td class="reason">{{.Reason}}</td><td class="since" title="{{.SinceTitle}}">{{.Since}}</td><td class="{{.NextClass}}">{{.Next}}</td><td class="error">{{.LastError}}</td></tr>
{{- end}}
</tbody>
</table>
</main>
<footer>Refreshes every {{.RefreshSeconds}}s. Data: <a href="status.json">status.json</a>, <a href="metrics">metrics</a>. Queue figures are per tenant with --fair-queuing (otherwise &ndash;).</footer>
<script>` + pageScript + `</script>
</body>
</html>
`

// contentSecurityPolicy allows only the page's own inline script and style (by hash) and
// requests to its own origin.
var contentSecurityPolicy = "default-src 'none'; script-src '" + cspHash(pageScript) + "'; style-src '" +
	cspHash(pageStyle) + "'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}
