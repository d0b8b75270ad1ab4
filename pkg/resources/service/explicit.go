package service

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vcsyncer/syncer/pkg/reconcile"
)

// PortKey identifies a Service port the way the apiserver's list map of spec.ports does (its
// merge keys: port and protocol).
type PortKey struct {
	Port     int32
	Protocol corev1.Protocol
}

// keyOf returns the PortKey of p; an unset protocol is TCP (the apiserver's default).
func keyOf(p corev1.ServicePort) PortKey {
	proto := p.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	return PortKey{Port: p.Port, Protocol: proto}
}

// Explicit says which node ports of a tenant Service a tenant client asked for.
type Explicit struct {
	// NodePorts holds the ports whose nodePort a client other than the syncer set.
	NodePorts map[PortKey]bool
	// HealthCheckNodePort is true when a client other than the syncer set healthCheckNodePort.
	HealthCheckNodePort bool
}

// ExplicitFields reads from s's managedFields which node ports a client set explicitly. The
// apiserver records in managedFields only the fields a request carried (server-side apply:
// the applied configuration; update and patch: the fields the request changed), computed
// before the Service registry allocates node ports, so a port the tenant apiserver allocated
// is owned by no manager, and one the syncer wrote back (reconcile.FieldManager) is the
// syncer's. Entries of the syncer's own field manager are skipped; an entry that does not
// parse is ignored. s must be read from the apiserver: the tenant caches drop managedFields.
func ExplicitFields(s *corev1.Service) Explicit {
	out := Explicit{NodePorts: map[PortKey]bool{}}
	for _, mf := range s.ManagedFields {
		if mf.Manager == reconcile.FieldManager || mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		var root map[string]json.RawMessage
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &root) != nil {
			continue
		}
		var spec map[string]json.RawMessage
		if json.Unmarshal(root["f:spec"], &spec) != nil {
			continue
		}
		if _, ok := spec["f:healthCheckNodePort"]; ok {
			out.HealthCheckNodePort = true
		}
		var ports map[string]json.RawMessage
		if json.Unmarshal(spec["f:ports"], &ports) != nil {
			continue
		}
		for k, v := range ports {
			key, ok := parsePortKey(k)
			if !ok {
				continue
			}
			var fields map[string]json.RawMessage
			if json.Unmarshal(v, &fields) != nil {
				continue
			}
			if _, ok := fields["f:nodePort"]; ok {
				out.NodePorts[key] = true
			}
		}
	}
	return out
}

// parsePortKey parses a managedFields list-map key of spec.ports, `k:{"port":80,"protocol":"TCP"}`.
func parsePortKey(k string) (PortKey, bool) {
	raw, ok := strings.CutPrefix(k, "k:")
	if !ok {
		return PortKey{}, false
	}
	var v struct {
		Port     int32           `json:"port"`
		Protocol corev1.Protocol `json:"protocol"`
	}
	if json.Unmarshal([]byte(raw), &v) != nil || v.Port == 0 {
		return PortKey{}, false
	}
	if v.Protocol == "" {
		v.Protocol = corev1.ProtocolTCP
	}
	return PortKey{Port: v.Port, Protocol: v.Protocol}, true
}
