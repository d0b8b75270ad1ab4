package localcluster

import (
	"strings"
	"testing"
)

func TestCheckPortForwardTarget(t *testing.T) {
	cases := map[string]struct {
		target  string
		wantErr bool
	}{
		"empty: port-forward off":  {target: ""},
		"IPv4 loopback":            {target: "127.0.0.1:8080"},
		"other 127/8 address":      {target: "127.1.2.3:1"},
		"IPv6 loopback":            {target: "[::1]:65535"},
		"not loopback":             {target: "10.0.0.1:80", wantErr: true},
		"unspecified address":      {target: "0.0.0.0:80", wantErr: true},
		"host name":                {target: "localhost:80", wantErr: true},
		"no port":                  {target: "127.0.0.1", wantErr: true},
		"port 0":                   {target: "127.0.0.1:0", wantErr: true},
		"port too large":           {target: "127.0.0.1:65536", wantErr: true},
		"named port":               {target: "127.0.0.1:http", wantErr: true},
		"zone":                     {target: "[::1%lo]:80", wantErr: true},
		"YAML injection in target": {target: "127.0.0.1:80\n  evil: x", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkPortForwardTarget(tc.target)
			if (err != nil) != tc.wantErr {
				t.Errorf("checkPortForwardTarget(%q) = %v, want error %v", tc.target, err, tc.wantErr)
			}
		})
	}
}

func TestKwokAttachPortForwardConfig(t *testing.T) {
	c := &ControlPlane{Dir: "/state/super", superPlane: true}
	cfg := c.kwokAttachPortForwardConfig()
	if !strings.Contains(cfg, "kind: ClusterAttach") || !strings.Contains(cfg, `logsFile: "/state/super/kwok/pod.log"`) {
		t.Errorf("no ClusterAttach following the Pod log file:\n%s", cfg)
	}
	if strings.Contains(cfg, "ClusterPortForward") {
		t.Errorf("a ClusterPortForward without a target:\n%s", cfg)
	}
	c.portForwardTarget = "[::1]:9000"
	cfg = c.kwokAttachPortForwardConfig()
	if !strings.Contains(cfg, "kind: ClusterPortForward") || !strings.Contains(cfg, "address: \"::1\"\n      port: 9000\n") {
		t.Errorf("no ClusterPortForward to [::1]:9000:\n%s", cfg)
	}
}
