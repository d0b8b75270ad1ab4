package isolation

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/metrics"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// kubeletMarker is a line of the super Pods' log (kwok serves one log file for every Pod): a
// refused request's body must never carry it.
const kubeletMarker = "isolation-kubelet-log-line"

// kubeletWalls returns the attacks on the syncer's kubelet API (the vNodes' kubelet, which
// tenant apiservers reach for logs, exec, attach and port-forward): each request, sent as a
// tenant apiserver (or anyone on the network) could send it, is refused and nothing is
// forwarded to the super cluster. B's own kubelet certificate reading B's Pod's log is the
// control: the same path, with the right certificate, is forwarded.
func (s *suite) kubeletWalls() []attackCase {
	logsB := "/containerLogs/" + bNS + "/" + bPod + "/c"
	return []attackCase{
		{"kubelet-no-client-certificate", s.attackKubelet(nil, nil, logsB, http.StatusUnauthorized, "no_certificate")},
		{"kubelet-tenant-admin-certificate", s.attackKubelet(s.b.RESTConfig.CertData, s.b.RESTConfig.KeyData, logsB, http.StatusUnauthorized, "unknown_certificate")},
		{"kubelet-a-reads-b-pod-logs", s.attackKubelet(s.a.KubeletClientCert, s.a.KubeletClientKey, logsB, http.StatusNotFound, "")},
		{"kubelet-a-execs-into-b-pod", s.attackKubelet(s.a.KubeletClientCert, s.a.KubeletClientKey, "/exec/"+bNS+"/"+bPod+"/c?command=id&output=1", http.StatusNotFound, "")},
		{"kubelet-a-attaches-to-b-pod", s.attackKubelet(s.a.KubeletClientCert, s.a.KubeletClientKey, "/attach/"+bNS+"/"+bPod+"/c?output=1", http.StatusNotFound, "")},
		{"kubelet-a-port-forwards-to-b-pod", s.attackKubelet(s.a.KubeletClientCert, s.a.KubeletClientKey, "/portForward/"+bNS+"/"+bPod, http.StatusNotFound, "")},
		{"kubelet-a-names-b-super-namespace", s.attackKubeletFn(func() string { return "/containerLogs/" + s.bSuperNS + "/" + bPod + "/c" }, http.StatusNotFound)},
		{"kubelet-path-dot-dot", s.attackKubelet(s.a.KubeletClientCert, s.a.KubeletClientKey, "/containerLogs/"+aNS+"/../"+bNS+"/"+bPod+"/c", http.StatusNotFound, "")},
		{"kubelet-path-encoded-slash", s.attackKubelet(s.a.KubeletClientCert, s.a.KubeletClientKey, "/containerLogs/"+aNS+"%2F..%2F"+bNS+"/"+bPod+"/c", http.StatusNotFound, "")},
		{"kubelet-path-double-encoded-slash", s.attackKubelet(s.a.KubeletClientCert, s.a.KubeletClientKey, "/containerLogs/"+bNS+"%252F"+bPod+"/"+bPod+"/c", http.StatusNotFound, "")},
		{"kubelet-very-long-pod-name", s.attackKubelet(s.a.KubeletClientCert, s.a.KubeletClientKey, "/containerLogs/"+bNS+"/"+strings.Repeat("a", 300)+"/c", http.StatusNotFound, "")},
	}
}

// attackKubeletFn is attackKubelet with A's kubelet certificate and a path known only once
// the suite is set up.
func (s *suite) attackKubeletFn(path func() string, wantCode int) func(*testing.T) {
	return func(t *testing.T) {
		s.attackKubelet(s.a.KubeletClientCert, s.a.KubeletClientKey, path(), wantCode, "")(t)
	}
}

// attackKubelet sends GET path to the kubelet API with the client certificate cert (nil: none)
// and wants wantCode, no forwarded request of either tenant, no log line in the body, and,
// when wantUnauth is set, vcsyncer_kubelet_unauthenticated_total{reason=wantUnauth} up by one.
func (s *suite) attackKubelet(cert, key []byte, path string, wantCode int, wantUnauth string) func(*testing.T) {
	return func(t *testing.T) {
		if err := s.env.Super.AppendPodLog(kubeletMarker); err != nil {
			t.Fatal(err)
		}
		// Control: B's own kubelet certificate gets B's Pod's log (the wall is not a server
		// that refuses everything).
		itest.Eventually(t, maxWait, "B's kubelet certificate reads B's Pod's log", func(context.Context) error {
			code, body := s.kubeletGet(t, s.b.KubeletClientCert, s.b.KubeletClientKey, "/containerLogs/"+bNS+"/"+bPod+"/c")
			if code != http.StatusOK || !strings.Contains(body, kubeletMarker) {
				return itest.Errorf("control: code %d body %q", code, body)
			}
			return nil
		})
		forwarded := s.kubeletForwarded()
		var unauth float64
		if wantUnauth != "" {
			unauth = metrics.KubeletUnauthenticatedCount(wantUnauth)
		}
		code, body := s.kubeletGet(t, cert, key, path)
		if code != wantCode {
			t.Errorf("code %d, want %d (body %q)", code, wantCode, body)
		}
		if strings.Contains(body, kubeletMarker) {
			t.Errorf("a super Pod's log leaked: %q", body)
		}
		if d := s.kubeletForwarded() - forwarded; d != 0 {
			t.Errorf("forwarded %v requests to the super cluster, want none", d)
		}
		if wantUnauth != "" {
			if d := metrics.KubeletUnauthenticatedCount(wantUnauth) - unauth; d != 1 {
				t.Errorf("vcsyncer_kubelet_unauthenticated_total{reason=%q} rose by %v, want 1", wantUnauth, d)
			}
		}
	}
}

// kubeletForwarded sums the requests forwarded for A and B, every endpoint.
func (s *suite) kubeletForwarded() float64 {
	var n float64
	for _, tn := range []string{s.a.Name, s.b.Name} {
		for _, ep := range []string{"containerLogs", "exec", "attach", "portForward"} {
			n += metrics.KubeletRequests(tn, ep, "forwarded")
		}
	}
	return n
}

// kubeletGet sends GET path, exactly as written (no cleaning, no re-encoding), to the kubelet
// API with the client certificate cert (nil: none) and returns the code and up to 4 KiB of
// the body.
func (s *suite) kubeletGet(t *testing.T, cert, key []byte, path string) (int, string) {
	t.Helper()
	//nolint:gosec // the test trusts the syncer's self-signed serving certificate
	cfg := &tls.Config{InsecureSkipVerify: true}
	if cert != nil {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}, Timeout: 30 * time.Second}
	r, err := http.NewRequest(http.MethodGet, "https://127.0.0.1:"+strconv.Itoa(s.kubeletPort)+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.URL.Opaque = "//127.0.0.1:" + strconv.Itoa(s.kubeletPort) + path
	r.Header.Set("Authorization", "Bearer not-forwarded")
	resp, err := hc.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(body)
}
