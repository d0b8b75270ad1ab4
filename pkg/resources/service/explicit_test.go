package service

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/reconcile"
)

func fields(manager, raw string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(raw)}
}

// The managedFields of a Service as a tenant apiserver records them: kubectl set the nodePort
// of port 80/TCP and the health-check port; the syncer wrote the nodePort of 53/UDP back; port
// 443/TCP's was allocated (no manager owns it).
func TestExplicitFields(t *testing.T) {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		fields("kubectl-client-side-apply", `{"f:spec":{"f:healthCheckNodePort":{},"f:ports":{".":{},`+
			`"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:nodePort":{},"f:port":{}},`+
			`"k:{\"port\":443,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}}`),
		fields(reconcile.FieldManager, `{"f:spec":{"f:ports":{"k:{\"port\":53,\"protocol\":\"UDP\"}":{"f:nodePort":{}}}}}`),
		fields("broken", `{"f:spec":`),
		{Manager: "status-writer", Subresource: "status", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:healthCheckNodePort":{}}}`)},
	}}}
	got := ExplicitFields(s)
	if !got.NodePorts[PortKey{80, corev1.ProtocolTCP}] || got.NodePorts[PortKey{443, corev1.ProtocolTCP}] ||
		got.NodePorts[PortKey{53, corev1.ProtocolUDP}] || len(got.NodePorts) != 1 {
		t.Errorf("NodePorts = %v, want only 80/TCP", got.NodePorts)
	}
	if !got.HealthCheckNodePort {
		t.Error("HealthCheckNodePort set by kubectl not seen")
	}
	s.ManagedFields = s.ManagedFields[1:]
	if got := ExplicitFields(s); len(got.NodePorts) != 0 || got.HealthCheckNodePort {
		t.Errorf("without the tenant's entry: %+v", got)
	}
}
