package kubeletproxy

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Endpoints of the kubelet API the server answers (the first path segment).
const (
	EndpointContainerLogs = "containerLogs"
	EndpointExec          = "exec"
	EndpointAttach        = "attach"
	EndpointPortForward   = "portForward"
)

// Refusal reasons: the result label of vcsyncer_kubelet_requests_total besides "forwarded".
const (
	resultForwarded    = "forwarded"
	reasonBadPath      = "bad_path"
	reasonNotFound     = "pod_not_found"
	reasonNoContainer  = "container_not_declared"
	reasonNotSynced    = "not_synced"
	reasonNotOwned     = "not_owned"
	reasonBadMethod    = "bad_method"
	reasonNotConnected = "tenant_not_synced"
	// reasonTooManyStreams: the tenant already has Options.MaxStreamsPerTenant open (429).
	reasonTooManyStreams = "too_many_streams"
	// reasonBadQuery: an allowlisted query parameter with a value the kubelet would not
	// accept (400).
	reasonBadQuery = "bad_query"
	// reasonPolicyForbidden: the tenant's TenantPolicy switches the endpoint off
	// (kubelet.allowExec, allowAttach, allowPortForward; 403).
	reasonPolicyForbidden = "policy_forbidden"
)

// policyField names the TenantPolicy field that switches endpoint off.
var policyField = map[string]string{
	EndpointExec: "kubelet.allowExec", EndpointAttach: "kubelet.allowAttach", EndpointPortForward: "kubelet.allowPortForward",
}

// target is a parsed kubelet API request: endpoint, tenant namespace, Pod and container
// (empty for portForward).
type target struct {
	endpoint, namespace, pod, container string
}

// parseTarget parses the escaped path of a kubelet API request. It accepts only
// /containerLogs|exec|attach/<namespace>/<pod>/<container> and /portForward/<namespace>/<pod>,
// each name valid as Kubernetes validates it (namespace and container: DNS labels, Pod: a
// DNS subdomain), so it refuses every percent-encoding (an encoded or double-encoded slash or
// dot), "." and ".." segments, empty segments, trailing slashes and over-long names without
// decoding anything. ok is false for any other path (the caller answers 404).
func parseTarget(escapedPath string) (t target, ok bool) {
	if strings.ContainsAny(escapedPath, "%\\") || len(escapedPath) > 1024 {
		return target{}, false
	}
	parts := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	if len(parts) == 0 {
		return target{}, false
	}
	t.endpoint = parts[0]
	switch t.endpoint {
	case EndpointContainerLogs, EndpointExec, EndpointAttach:
		if len(parts) != 4 {
			return target{}, false
		}
		t.namespace, t.pod, t.container = parts[1], parts[2], parts[3]
		if len(validation.IsDNS1123Label(t.container)) > 0 {
			return target{}, false
		}
	case EndpointPortForward:
		if len(parts) != 3 {
			return target{}, false
		}
		t.namespace, t.pod = parts[1], parts[2]
	default:
		return target{}, false
	}
	if len(validation.IsDNS1123Label(t.namespace)) > 0 || len(validation.IsDNS1123Subdomain(t.pod)) > 0 {
		return target{}, false
	}
	return t, true
}

// methodAllowed reports whether method is one the kubelet accepts for endpoint: GET for logs;
// GET and POST for the streaming endpoints (SPDY upgrades use POST, WebSockets GET).
func methodAllowed(endpoint, method string) bool {
	if endpoint == EndpointContainerLogs {
		return method == http.MethodGet
	}
	return method == http.MethodGet || method == http.MethodPost
}

// queryAllowlist is, per endpoint, the query parameters passed on to the super apiserver's
// subresource, by their kubelet name, with their apiserver name: an apiserver asks a kubelet
// for exec and attach streams with input/output/error=1, where its own API says
// stdin/stdout/stderr=true. Others are dropped. The container is passed separately.
var queryAllowlist = map[string]map[string]string{
	EndpointContainerLogs: {"follow": "follow", "previous": "previous", "sinceSeconds": "sinceSeconds", "sinceTime": "sinceTime",
		"timestamps": "timestamps", "tailLines": "tailLines", "limitBytes": "limitBytes"},
	EndpointExec: {"command": "command", "input": "stdin", "output": "stdout", "error": "stderr", "tty": "tty",
		"stdin": "stdin", "stdout": "stdout", "stderr": "stderr"},
	EndpointAttach: {"input": "stdin", "output": "stdout", "error": "stderr", "tty": "tty",
		"stdin": "stdin", "stdout": "stdout", "stderr": "stderr"},
	// A tenant apiserver sends port=<p1>,<p2> (api.PortHeader); the super apiserver reads
	// ports=<p>, once per port (forwardQuery splits the list).
	EndpointPortForward: {"port": "ports", "ports": "ports"},
}

// boolParams are the flags, sent on as "true" or "false".
var boolParams = map[string]bool{"stdin": true, "stdout": true, "stderr": true, "tty": true,
	"follow": true, "previous": true, "timestamps": true}

// logParamMin is, for each numeric log parameter, its least valid value (as the apiserver
// validates PodLogOptions).
var logParamMin = map[string]int64{"tailLines": 0, "limitBytes": 1, "sinceSeconds": 1}

// portList returns the ports of the port-forward parameters of q (port and ports, each a
// comma-separated list), each checked to be 1–65535.
func portList(q url.Values) ([]string, error) {
	var out []string
	for _, name := range []string{"port", "ports"} {
		for _, v := range q[name] {
			for _, p := range strings.Split(v, ",") {
				n, err := strconv.ParseUint(p, 10, 16)
				if err != nil || n == 0 {
					return nil, fmt.Errorf("%s=%q is not a list of ports 1-65535", name, v)
				}
				out = append(out, strconv.FormatUint(n, 10))
			}
		}
	}
	return out, nil
}

// checkLogQuery checks the values of the allowlisted log parameters of q: each at most once;
// follow, previous and timestamps booleans; tailLines, limitBytes and sinceSeconds integers
// within range; sinceTime RFC 3339. The error names the first invalid one.
func checkLogQuery(q url.Values) error {
	for name := range queryAllowlist[EndpointContainerLogs] {
		vs, ok := q[name]
		if !ok {
			continue
		}
		if len(vs) != 1 {
			return fmt.Errorf("%s given %d times", name, len(vs))
		}
		v := vs[0]
		switch {
		case boolParams[name]:
			if _, err := strconv.ParseBool(v); err != nil {
				return fmt.Errorf("%s=%q is not a boolean", name, v)
			}
		case name == "sinceTime":
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				return fmt.Errorf("sinceTime=%q is not an RFC 3339 time", v)
			}
		default:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < logParamMin[name] {
				return fmt.Errorf("%s=%q is not an integer of at least %d", name, v, logParamMin[name])
			}
		}
	}
	return nil
}

// subresource is the super Pod subresource that serves endpoint.
var subresource = map[string]string{
	EndpointContainerLogs: "log",
	EndpointExec:          "exec",
	EndpointAttach:        "attach",
	EndpointPortForward:   "portforward",
}

// forwardedHeaders are the request headers passed on to the super apiserver: those a
// streaming upgrade (SPDY or WebSocket) needs. Authorization, cookies, impersonation and
// every other header of the caller are dropped.
var forwardedHeaders = []string{
	"Connection", "Upgrade", "X-Stream-Protocol-Version",
	"Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Protocol", "Sec-Websocket-Extensions",
	"Accept",
}
