package status

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
)

// providerFunc is a Provider from a func.
type providerFunc func() []Tenant

func (f providerFunc) TenantStatuses() []Tenant { return f() }

func makeTenant(name string, phase tenancyv1alpha1.TenantPhase, weight int32, conds ...metav1.Condition) tenancyv1alpha1.Tenant {
	return tenancyv1alpha1.Tenant{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenancyv1alpha1.TenantSpec{Weight: weight},
		Status:     tenancyv1alpha1.TenantStatus{Phase: phase, Conditions: conds},
	}
}

func cond(typ string, st metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: st, Reason: reason}
}

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		objs []tenancyv1alpha1.Tenant
		live []Tenant
		want []Tenant
	}{
		"nothing": {want: []Tenant{}},
		"object phase and weight win, live queues and times kept": {
			objs: []tenancyv1alpha1.Tenant{makeTenant("a", tenancyv1alpha1.TenantRunning, 3)},
			live: []Tenant{{Name: "a", Phase: "Connecting", Weight: 1, Downward: &Queue{Depth: 2, OldestSeconds: 1.5}, Upward: &Queue{}, LastSync: t0}},
			want: []Tenant{{Name: "a", Phase: "Running", Weight: 3, Downward: &Queue{Depth: 2, OldestSeconds: 1.5}, Upward: &Queue{}, LastSync: t0}},
		},
		"tenant without connection: object only, weight defaulted, reason from the first condition not True": {
			objs: []tenancyv1alpha1.Tenant{makeTenant("p", tenancyv1alpha1.TenantPending, 0,
				cond(tenancyv1alpha1.ConditionKubeconfigValid, metav1.ConditionFalse, "SecretNotFound"),
				cond(tenancyv1alpha1.ConditionConnected, metav1.ConditionFalse, "NotConnected"))},
			want: []Tenant{{Name: "p", Phase: "Pending", Reason: "KubeconfigValid: SecretNotFound", Weight: 1}},
		},
		"Running has no reason even with a condition not True": {
			objs: []tenancyv1alpha1.Tenant{makeTenant("r", tenancyv1alpha1.TenantRunning, 1, cond("Synced", metav1.ConditionUnknown, "Waiting"))},
			want: []Tenant{{Name: "r", Phase: "Running", Weight: 1}},
		},
		"shard from the object's status": {
			objs: []tenancyv1alpha1.Tenant{func() tenancyv1alpha1.Tenant {
				t := makeTenant("s", tenancyv1alpha1.TenantRunning, 1)
				t.Status.Shard = "vc-syncer-1"
				return t
			}()},
			want: []Tenant{{Name: "s", Phase: "Running", Weight: 1, Shard: "vc-syncer-1"}},
		},
		"unreconciled object keeps the live phase": {
			objs: []tenancyv1alpha1.Tenant{makeTenant("n", "", 2)},
			live: []Tenant{{Name: "n", Phase: "Connecting"}},
			want: []Tenant{{Name: "n", Phase: "Connecting", Weight: 2}},
		},
		"unreconciled object without connection is Pending": {
			objs: []tenancyv1alpha1.Tenant{makeTenant("n", "", 2)},
			want: []Tenant{{Name: "n", Phase: "Pending", Reason: "not reconciled yet", Weight: 2}},
		},
		"remembered tenant without connection: times kept with the object, dropped without": {
			objs: []tenancyv1alpha1.Tenant{makeTenant("paused", tenancyv1alpha1.TenantPaused, 1)},
			live: []Tenant{{Name: "paused", LastSync: t0}, {Name: "removed", LastSync: t0}},
			want: []Tenant{{Name: "paused", Phase: "Paused", Weight: 1, LastSync: t0}},
		},
		"live tenant missing from the list (cache lag) is kept; rows sorted by name": {
			objs: []tenancyv1alpha1.Tenant{makeTenant("c", tenancyv1alpha1.TenantPaused, 1)},
			live: []Tenant{{Name: "b", Phase: "Unreachable", Reason: "Unreachable", Weight: 4}, {Name: "a", Phase: "Running", Weight: 1}},
			want: []Tenant{{Name: "a", Phase: "Running", Weight: 1}, {Name: "b", Phase: "Unreachable", Reason: "Unreachable", Weight: 4}, {Name: "c", Phase: "Paused", Weight: 1}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, merge(tc.objs, tc.live)); diff != "" {
				t.Errorf("merge (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		d    time.Duration
		want string
	}{
		"negative":      {d: -time.Second, want: "0ms"},
		"milliseconds":  {d: 850 * time.Millisecond, want: "850ms"},
		"seconds":       {d: 4250 * time.Millisecond, want: "4.2s"},
		"minutes":       {d: 3*time.Minute + 7*time.Second, want: "3m07s"},
		"hours":         {d: 2*time.Hour + 5*time.Minute + 59*time.Second, want: "2h05m"},
		"just a minute": {d: time.Minute, want: "1m00s"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := formatDuration(tc.d); got != tc.want {
				t.Errorf("formatDuration(%v) = %q, want %q", tc.d, got, tc.want)
			}
			if got, want := formatAge(now.Add(-tc.d), now), tc.want+" ago"; got != want {
				t.Errorf("formatAge = %q, want %q", got, want)
			}
		})
	}
	if got := formatAge(time.Time{}, now); got != "never" {
		t.Errorf("formatAge(zero) = %q, want never", got)
	}
}

// newTestHandler serves a Handler over objs (through a fake client with listErr injected)
// and live rows, at a fixed time.
func newTestHandler(t *testing.T, objs []tenancyv1alpha1.Tenant, listErr error, live []Tenant, leader bool, now time.Time) *httptest.Server {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := tenancyv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme)
	for i := range objs {
		b = b.WithObjects(&objs[i])
	}
	if listErr != nil {
		b = b.WithInterceptorFuncs(interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return listErr
		}})
	}
	h, err := NewHandler(Options{
		Provider: providerFunc(func() []Tenant { return live }),
		Tenants:  b.Build(),
		Leader:   func() bool { return leader },
		Now:      func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func TestHandlerPage(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	objs := []tenancyv1alpha1.Tenant{
		makeTenant("team-a", tenancyv1alpha1.TenantRunning, 2),
		makeTenant("team-b", tenancyv1alpha1.TenantUnreachable, 1, cond(tenancyv1alpha1.ConditionConnected, metav1.ConditionFalse, "Unauthorized")),
	}
	live := []Tenant{
		{Name: "team-a", Phase: "Running", Downward: &Queue{Depth: 7, OldestSeconds: 3.25}, Upward: &Queue{}, LastSync: now.Add(-1500 * time.Millisecond),
			KubeletStreams: 3, HotRequests: 2, Retrying: []HotRequest{
				{Direction: "upward", Kind: "Pod", Namespace: "web", Name: "w-0", Retries: 31, Reason: "SuperCacheBehind", LastError: `<img src=x onerror=alert(1)>`, Since: now.Add(-25 * time.Minute), LongBackoff: true},
				{Direction: "downward", Kind: "Namespace", Name: "big", Retries: 12, Reason: "Quota", LastError: "no room", Since: now.Add(-2 * time.Minute)}}},
		{Name: "team-b", Phase: "Unreachable", Downward: &Queue{}, Upward: &Queue{}, LastCheckpoint: now.Add(-90 * time.Second)},
		{Name: `<script>alert("x")</script>`, Phase: "Connecting"},
	}
	srv := newTestHandler(t, objs, nil, live, true, now)
	resp, page := get(t, srv.URL+"/")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	tenantsTable := page[strings.Index(page, `<table id="tenants">`):strings.Index(page, `<table id="hot"`)]
	hotTable := page[strings.Index(page, `<table id="hot"`):]
	rowRE := regexp.MustCompile(`(?s)<tr data-tenant="([^"]*)">(.*?)</tr>`)
	cellRE := regexp.MustCompile(`(?s)<td class="([^"]*)"[^>]*>(.*?)</td>`)
	tagRE := regexp.MustCompile(`<[^>]+>`)
	got := map[string]map[string]string{}
	for _, m := range rowRE.FindAllStringSubmatch(tenantsTable, -1) {
		cells := map[string]string{}
		for i, c := range cellRE.FindAllStringSubmatch(m[2], -1) {
			key := c[1]
			if key == "num depth" || key == "num oldest" { // downward first, then upward
				key = map[bool]string{true: "down ", false: "up "}[i < 5] + key
			}
			cells[key] = tagRE.ReplaceAllString(c[2], " ")
		}
		got[m[1]] = cells
	}
	want := map[string]map[string]string{
		"team-a": {"name": "team-a", "phase": " Running ", "num weight": "2", "down num depth": "7", "down num oldest": "3.2s",
			"up num depth": "0", "up num oldest": "–", "last-sync": "1.5s ago", "last-checkpoint": "never", "num streams": "3", "num hot": "2"},
		"team-b": {"name": "team-b", "phase": " Unreachable  Connected: Unauthorized ", "num weight": "1", "down num depth": "0", "down num oldest": "–",
			"up num depth": "0", "up num oldest": "–", "last-sync": "never", "last-checkpoint": "1m30s ago", "num streams": "0", "num hot": "–"},
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;": {"name": "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", "phase": " Connecting ", "num weight": "0",
			"down num depth": "–", "down num oldest": "–", "up num depth": "–", "up num oldest": "–", "last-sync": "never", "last-checkpoint": "never", "num streams": "0", "num hot": "–"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	var hot [][]string
	for _, m := range rowRE.FindAllStringSubmatch(hotTable, -1) {
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(m[2], -1) {
			cells = append(cells, c[2])
		}
		hot = append(hot, cells)
	}
	wantHot := [][]string{
		{"team-a", "upward", "Pod web/w-0", "31", "SuperCacheBehind", "25m00s ago", "every 5m until it changes", "&lt;img src=x onerror=alert(1)&gt;"},
		{"team-a", "downward", "Namespace big", "12", "Quota", "2m00s ago", "backoff ≤ 1m", "no room"},
	}
	if diff := cmp.Diff(wantHot, hot); diff != "" {
		t.Errorf("hot requests (-want +got):\n%s", diff)
	}
	if strings.Contains(page, `<table id="hot" hidden>`) {
		t.Error("the hot-requests table is hidden although there are hot requests")
	}
	for _, s := range []string{`<span id="role" class="leader">leader</span>`, `<span id="count">3</span>`, "updated 11:00:00 UTC", `data-refresh="2000"`,
		`<meta http-equiv="refresh" content="2">`, `<p id="error" hidden>`} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("page has an unescaped tenant name or an external reference")
	}

	// The CSP hashes are those of the script and style actually served.
	csp := resp.Header.Get("Content-Security-Policy")
	for _, re := range []string{`(?s)<script>(.*)</script>`, `(?s)<style>(.*)</style>`} {
		m := regexp.MustCompile(re).FindStringSubmatch(page)
		if m == nil || !strings.Contains(csp, "'"+cspHash(m[1])+"'") {
			t.Errorf("served %s block does not match the Content-Security-Policy %q", re, csp)
		}
	}
}

func TestHandlerStandbyEmptyAndListError(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	srv := newTestHandler(t, nil, nil, nil, false, now)
	_, page := get(t, srv.URL+"/")
	for _, s := range []string{`class="standby"`, "No tenants.", `<span id="count">0</span>`, `<table id="hot" hidden>`} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}

	srv = newTestHandler(t, []tenancyv1alpha1.Tenant{makeTenant("hidden", tenancyv1alpha1.TenantRunning, 1)}, errors.New("cache not started"),
		[]Tenant{{Name: "live", Phase: "Running", Weight: 2}}, true, now)
	_, page = get(t, srv.URL+"/")
	if !strings.Contains(page, `<p id="error">failed to list Tenants: cache not started</p>`) || !strings.Contains(page, `data-tenant="live"`) {
		t.Errorf("a list error must show the error and the live tenants:\n%s", page)
	}
}

func TestHandlerJSON(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	last := now.Add(-2 * time.Second)
	srv := newTestHandler(t, []tenancyv1alpha1.Tenant{makeTenant("a", tenancyv1alpha1.TenantRunning, 5)}, nil,
		[]Tenant{{Name: "a", Phase: "Connecting", Downward: &Queue{Depth: 1, OldestSeconds: 0.5}, Upward: &Queue{}, LastSync: last}}, true, now)
	resp, body := get(t, srv.URL+"/status.json")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /status.json = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got Snapshot
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := Snapshot{Time: now.UTC(), Leader: true, Tenants: []Tenant{{Name: "a", Phase: "Running", Weight: 5,
		Downward: &Queue{Depth: 1, OldestSeconds: 0.5}, Upward: &Queue{}, LastSync: last.UTC()}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	// The page's script parses times ending in "Z" and treats a missing time as never.
	if !strings.Contains(body, `"time": "2026-11-30T11:00:00Z"`) || strings.Contains(body, "lastCheckpoint") {
		t.Errorf("times must be UTC and a zero time omitted:\n%s", body)
	}
}

func TestHandlerRouting(t *testing.T) {
	srv := newTestHandler(t, nil, nil, nil, true, time.Now())
	if resp, _ := get(t, srv.URL+"/metricz"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metricz = %d, want 404", resp.StatusCode)
	}
	resp, err := http.Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST / = %d, want 405", resp.StatusCode)
	}
	if _, err := NewHandler(Options{}); !errors.Is(err, ErrNoProvider) {
		t.Errorf("NewHandler without Provider: %v, want ErrNoProvider", err)
	}
}
