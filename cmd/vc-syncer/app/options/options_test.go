package options

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func TestOptInKindsFlag(t *testing.T) {
	cases := map[string]struct {
		args    []string
		want    string
		wantErr string
	}{
		"default none":   {want: ""},
		"list":           {args: []string{"--opt-in-kinds=Ingress,NetworkPolicy,PodDisruptionBudget"}, want: "Ingress,NetworkPolicy,PodDisruptionBudget"},
		"blanks trimmed": {args: []string{"--opt-in-kinds=Ingress, NetworkPolicy,"}, want: "Ingress,NetworkPolicy"},
		"unknown kind":   {args: []string{"--opt-in-kinds=Ingress,Networkpolicy"}, wantErr: `--opt-in-kinds: unknown opt-in kind "Networkpolicy" (known: Ingress, NetworkPolicy, PodDisruptionBudget, Event)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := parseFlags(t, tc.args...)
			if !validates(t, o, tc.wantErr) {
				return
			}
			var got []string
			for _, k := range o.OptInKindList() {
				got = append(got, string(k))
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("kinds %v, want %s", got, tc.want)
			}
		})
	}
}

func TestLogFormat(t *testing.T) {
	cases := map[string]struct {
		inPod   bool
		args    []string
		wantErr string
		wantFmt string
	}{
		"default outside a Pod is console": {wantFmt: LogFormatConsole},
		"default in a Pod is json":         {inPod: true, wantFmt: LogFormatJSON},
		"flag wins in a Pod":               {inPod: true, args: []string{"--log-format=console"}, wantFmt: LogFormatConsole},
		"flag wins outside a Pod":          {args: []string{"--log-format=json"}, wantFmt: LogFormatJSON},
		"--zap-encoder wins over the flag": {args: []string{"--log-format=console", "--zap-encoder=json"}, wantFmt: LogFormatJSON},
		"unknown format":                   {args: []string{"--log-format=text"}, wantErr: `--log-format must be json or console, not "text"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			host := ""
			if tc.inPod {
				host = "10.96.0.1"
			}
			t.Setenv("KUBERNETES_SERVICE_HOST", host)
			o := parseFlags(t, tc.args...)
			if !validates(t, o, tc.wantErr) {
				return
			}
			var buf bytes.Buffer
			zap.New(o.ZapOpts(zap.WriteTo(&buf))...).WithName("test").Info("Checking the log format", "tenant", "team-a")
			line := strings.TrimSpace(buf.String())
			var entry map[string]any
			isJSON := json.Unmarshal([]byte(line), &entry) == nil
			if got := map[bool]string{true: LogFormatJSON, false: LogFormatConsole}[isJSON]; got != tc.wantFmt {
				t.Fatalf("log line is %s, want %s: %s", got, tc.wantFmt, line)
			}
			if isJSON {
				if entry["msg"] != "Checking the log format" || entry["tenant"] != "team-a" || entry["logger"] != "test" {
					t.Errorf("JSON log entry %v lacks msg, logger or tenant", entry)
				}
			} else if !strings.Contains(line, "\tChecking the log format\t") || !strings.Contains(line, `"tenant": "team-a"`) {
				t.Errorf("console log line %q is not tab-separated with a JSON context", line)
			}
		})
	}
}

func TestInClusterDefaults(t *testing.T) {
	o := NewOptions()
	if !o.LeaderElect {
		t.Error("--leader-elect must default to true")
	}
	if o.GracefulShutdownTimeout != 30*time.Second {
		t.Errorf("--graceful-shutdown-timeout defaults to %v, want 30s", o.GracefulShutdownTimeout)
	}
	if o.TenantRequestTimeout != 30*time.Second {
		t.Errorf("--tenant-request-timeout defaults to %v, want 30s", o.TenantRequestTimeout)
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--leader-elect=false", "--graceful-shutdown-timeout=-1s"}); err != nil {
		t.Fatal(err)
	}
	if o.LeaderElect {
		t.Error("--leader-elect=false did not turn it off")
	}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--graceful-shutdown-timeout must not be negative") {
		t.Errorf("Validate() = %v, want the negative timeout refused", err)
	}
	o = parseFlags(t, "--tenant-request-timeout=-1s")
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--tenant-request-timeout must not be negative") {
		t.Errorf("Validate() = %v, want the negative tenant request timeout refused", err)
	}
	if got := NewOptions().SlowTenantThreshold; got != 500*time.Millisecond {
		t.Errorf("--slow-tenant-threshold defaults to %v, want 500ms", got)
	}
	o = parseFlags(t, "--slow-tenant-threshold=-1s")
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--slow-tenant-threshold must not be negative") {
		t.Errorf("Validate() = %v, want the negative slow-tenant threshold refused", err)
	}
}

func TestMetricsSecureFlags(t *testing.T) {
	parse := func(args ...string) (*Options, error) {
		o := NewOptions()
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		return o, o.Validate()
	}
	o, err := parse()
	if err != nil || !o.MetricsSecure || o.MetricsCertDir != "" {
		t.Errorf("defaults: secure %t cert dir %q err %v; want secure, self-signed", o.MetricsSecure, o.MetricsCertDir, err)
	}
	if o, err := parse("--metrics-secure=true", "--metrics-cert-dir=/certs"); err != nil || o.MetricsCertDir != "/certs" {
		t.Errorf("cert dir: %v", err)
	}
	if _, err := parse("--metrics-secure=false", "--metrics-cert-dir=/certs"); err == nil || !strings.Contains(err.Error(), "--metrics-cert-dir needs --metrics-secure=true") {
		t.Errorf("cert dir without secure serving: err %v", err)
	}
}

// TestTenantDNSFlag: tenant DNS is on unless --tenant-dns=false turns it off.
func TestTenantDNSFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, true}, {[]string{"--tenant-dns=false"}, false}, {[]string{"--tenant-dns"}, true}} {
		o := parseFlags(t, tc.args...)
		if o.TenantDNS != tc.want {
			t.Errorf("args %v: TenantDNS %v, want %v", tc.args, o.TenantDNS, tc.want)
		}
	}
}

// TestVNodeLeaseRenewInterval: the renew interval defaults to 20s and must be at most half of
// the Lease duration, so one missed renewal never lets a Lease run out by its own duration.
func TestVNodeLeaseRenewInterval(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"--vnode-lease-renew-interval=10s"}, true},
		{[]string{"--vnode-lease-renew-interval=25s"}, false},
		{[]string{"--vnode-lease-duration=60s", "--vnode-lease-renew-interval=30s"}, true},
		{[]string{"--vnode-lease-renew-interval=500ms"}, false},
	} {
		o := parseFlags(t, tc.args...)
		err := o.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%v: Validate() = %v, want ok=%t", tc.args, err, tc.ok)
		}
		if tc.args == nil && o.VNodeLeaseRenewInterval != 20*time.Second {
			t.Errorf("default renew interval %s, want 20s", o.VNodeLeaseRenewInterval)
		}
	}
}

func TestShardingFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--sharding"}, true},
		{[]string{"--sharding", "--shard-id=vc-syncer-7d9f-abcde"}, true},
		{[]string{"--sharding", "--shard-id=Not_Valid"}, false},
		{[]string{"--sharding", "--shard-lease-duration=6s", "--shard-lease-renew-interval=2s"}, true},
		{[]string{"--sharding", "--shard-lease-duration=6s", "--shard-lease-renew-interval=3s"}, false},
		{[]string{"--shard-id=Not_Valid"}, true}, // not used without --sharding
	} {
		o := parseFlags(t, tc.args...)
		if err := o.Validate(); (err == nil) != tc.ok {
			t.Errorf("%v: Validate() = %v, want ok=%t", tc.args, err, tc.ok)
		}
	}
	o := NewOptions()
	for spec, want := range map[string][2]string{
		"":                     {"secret:vc-syncer-system/vc-syncer-checkpoint-shard-s1", "secret:vc-syncer-system/vc-syncer-checkpoint-tenant-"},
		"file:/var/lib/x.ckpt": {"file:/var/lib/x.ckpt.shard-s1", "file:/var/lib/x.ckpt.tenant-tenant-1"},
		"none":                 {"none", "none"},
	} {
		o.CheckpointStore = spec
		if got := o.ShardCheckpointStoreSpec("s1"); got != want[0] {
			t.Errorf("%q: shard store %q, want %q", spec, got, want[0])
		}
		if got := o.TenantCheckpointStoreSpec("tenant-1"); !strings.HasPrefix(got, want[1]) {
			t.Errorf("%q: tenant store %q, want prefix %q", spec, got, want[1])
		}
	}
	for _, spec := range []string{"", "file:/var/lib/x.ckpt"} {
		o.CheckpointStore = spec
		if a, b := o.TenantCheckpointStoreSpec("tenant-1"), o.TenantCheckpointStoreSpec("tenant-2"); a == b || len(a) > 253 {
			t.Errorf("tenant stores %q and %q: want distinct, short names", a, b)
		}
		// A shard id and a tenant name that look alike still name different stores.
		if a, b := o.ShardCheckpointStoreSpec("tenant-x"), o.TenantCheckpointStoreSpec("x"); a == b {
			t.Errorf("shard tenant-x and tenant x share the store %q", a)
		}
	}
}

// parseFlags returns the Options of the command line args (not validated); a parse error fails t.
func parseFlags(t testing.TB, args ...string) *Options {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

// validates reports whether o passes Validate. With wantErr set, Validate must fail with an
// error containing it (else t fails at once); with wantErr empty, any error fails t at once.
func validates(t testing.TB, o *Options, wantErr string) bool {
	t.Helper()
	err := o.Validate()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("Validate() = %v, want %q", err, wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func TestKubeletFlags(t *testing.T) {
	cases := map[string]struct {
		args     []string
		wantAddr string
		wantPort int32
		wantErr  string
	}{
		"default off":                         {},
		"specific IP advertises itself":       {args: []string{"--kubelet-bind-address=10.0.0.5:10250"}, wantAddr: "10.0.0.5", wantPort: 10250},
		"wildcard needs an advertise address": {args: []string{"--kubelet-bind-address=:10250"}, wantErr: "--kubelet-advertise-address is required"},
		"wildcard with a Service name and port": {args: []string{"--kubelet-bind-address=0.0.0.0:10250", "--kubelet-advertise-address=vc-syncer-kubelet.vc-syncer-system.svc", "--kubelet-advertise-port=443"},
			wantAddr: "vc-syncer-kubelet.vc-syncer-system.svc", wantPort: 443},
		"port 0 needs an advertised port": {args: []string{"--kubelet-bind-address=127.0.0.1:0"}, wantErr: "--kubelet-advertise-port"},
		"no port":                         {args: []string{"--kubelet-bind-address=127.0.0.1"}, wantErr: "want host:port"},
		"certificate without key":         {args: []string{"--kubelet-bind-address=127.0.0.1:10250", "--kubelet-tls-cert-file=a.crt"}, wantErr: "go together"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate() = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			addr, port, _ := o.KubeletEndpoint()
			if addr != tc.wantAddr || port != tc.wantPort {
				t.Errorf("endpoint %q:%d, want %q:%d", addr, port, tc.wantAddr, tc.wantPort)
			}
		})
	}
}
