package status

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Handler serves the status page at "/" and the Snapshot as JSON at "/status.json". Other
// paths get 404, methods other than GET and HEAD get 405.
type Handler struct {
	o    Options
	page *template.Template
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns a Handler for o, with defaults filled in. It fails with ErrNoProvider
// when o.Provider is nil.
func NewHandler(o Options) (*Handler, error) {
	if o.Provider == nil {
		return nil, ErrNoProvider
	}
	if o.Leader == nil {
		o.Leader = func() bool { return true }
	}
	if o.RefreshInterval <= 0 {
		o.RefreshInterval = 2 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	page, err := template.New("status").Parse(pageTemplate)
	if err != nil {
		return nil, err
	}
	return &Handler{o: o, page: page}, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch r.URL.Path {
	case "/", "":
		h.servePage(w, r)
	case "/status.json":
		h.serveJSON(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) serveJSON(w http.ResponseWriter, r *http.Request) {
	data, err := json.MarshalIndent(h.Snapshot(r.Context()), "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(data, '\n'))
}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := h.page.Execute(&buf, h.view(h.Snapshot(r.Context()))); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	_, _ = w.Write(buf.Bytes())
}

// pageView is what the page template renders: a Snapshot with every value already formatted.
type pageView struct {
	Leader         bool
	Updated        string
	Error          string
	RefreshSeconds string
	RefreshMillis  int64
	Rows           []rowView
	Hot            []hotView
}

// hotView is one row of the hot-requests table.
type hotView struct {
	Tenant, Direction, Object, Reason, LastError string
	Retries                                      int
	Since, SinceTitle, Next, NextClass           string
}

type rowView struct {
	Name, Phase, PhaseClass, Reason string
	Weight                          int32
	DownDepth, DownOldest           string
	UpDepth, UpOldest               string
	LastSync, LastSyncTitle         string
	LastCheckpoint                  string
	LastCheckpointTitle             string
	Hot                             string
	Streams                         int
}

func (h *Handler) view(s Snapshot) pageView {
	v := pageView{
		Leader:         s.Leader,
		Updated:        s.Time.UTC().Format("15:04:05") + " UTC",
		Error:          s.Error,
		RefreshSeconds: strconv.FormatFloat(h.o.RefreshInterval.Seconds(), 'f', -1, 64),
		RefreshMillis:  h.o.RefreshInterval.Milliseconds(),
	}
	for _, t := range s.Tenants {
		row := rowView{
			Name: t.Name, Phase: t.Phase, PhaseClass: strings.ToLower(t.Phase), Reason: t.Reason, Weight: t.Weight,
			LastSync: formatAge(t.LastSync, s.Time), LastSyncTitle: formatTitle(t.LastSync),
			LastCheckpoint: formatAge(t.LastCheckpoint, s.Time), LastCheckpointTitle: formatTitle(t.LastCheckpoint),
		}
		row.DownDepth, row.DownOldest = formatQueue(t.Downward)
		row.UpDepth, row.UpOldest = formatQueue(t.Upward)
		row.Streams = t.KubeletStreams
		row.Hot = "\u2013"
		if t.HotRequests > 0 {
			row.Hot = strconv.Itoa(t.HotRequests)
		}
		v.Rows = append(v.Rows, row)
		for _, h := range t.Retrying {
			obj := h.Kind + " " + h.Name
			if h.Namespace != "" {
				obj = h.Kind + " " + h.Namespace + "/" + h.Name
			}
			hv := hotView{Tenant: t.Name, Direction: h.Direction, Object: obj, Reason: h.Reason, LastError: h.LastError,
				Retries: h.Retries, Since: formatAge(h.Since, s.Time), SinceTitle: formatTitle(h.Since),
				Next: "backoff \u2264 1m", NextClass: "next"}
			if h.LongBackoff {
				hv.Next, hv.NextClass = "every 5m until it changes", "next backoff"
			}
			v.Hot = append(v.Hot, hv)
		}
	}
	return v
}

// formatQueue renders a queue's depth and oldest-item age; "–" for an unknown queue and for
// the age of an empty one.
func formatQueue(q *Queue) (depth, oldest string) {
	const none = "\u2013"
	if q == nil {
		return none, none
	}
	if q.Depth == 0 {
		return "0", none
	}
	return strconv.Itoa(q.Depth), formatDuration(time.Duration(q.OldestSeconds * float64(time.Second)))
}

// formatTitle is the exact time shown on hover, in the JSON's format; "" for never.
func formatTitle(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
