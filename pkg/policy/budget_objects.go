package policy

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// storageClassSuffix joins a StorageClass name and a claim key in a ResourceQuota key
// (gold.storageclass.storage.k8s.io/requests.storage).
const storageClassSuffix = ".storageclass.storage.k8s.io/"

// objectCountNames are the object-count keys of each kind the syncer copies down besides Pods:
// count/<resource>[.<group>] and, for the core kinds that have one, the legacy name.
var objectCountNames = map[string][]corev1.ResourceName{
	"ConfigMap":             {corev1.ResourceConfigMaps, "count/configmaps"},
	"Secret":                {corev1.ResourceSecrets, "count/secrets"},
	"Service":               {corev1.ResourceServices, "count/services"},
	"PersistentVolumeClaim": {corev1.ResourcePersistentVolumeClaims, "count/persistentvolumeclaims"},
	"ServiceAccount":        {"count/serviceaccounts"},
	"Endpoints":             {"count/endpoints"},
	"EndpointSlice":         {"count/endpointslices.discovery.k8s.io"},
	"Ingress":               {"count/ingresses.networking.k8s.io"},
	"NetworkPolicy":         {"count/networkpolicies.networking.k8s.io"},
	"PodDisruptionBudget":   {"count/poddisruptionbudgets.policy"},
}

// ChargedKind reports whether kind (a kind name: "ConfigMap") is one the budget charges
// besides Pods (ObjectCharge).
func ChargedKind(kind string) bool {
	_, ok := objectCountNames[kind]
	return ok
}

// ObjectCharge returns what super object obj (of a kind the syncer copies down, Pods aside:
// PodCharge) costs in its tenant's budget, as the super cluster's quota admission counts it
// (kubernetes pkg/quota/v1/evaluator/core): one of each of its kind's object-count keys; for a
// Service of type NodePort its ports under services.nodeports, of type LoadBalancer one
// services.loadbalancers and its node ports (only the ports that name one when
// allocateLoadBalancerNodePorts is false); for a claim its storage request, rounded up to a
// whole byte, under requests.storage (the larger of spec and status.allocatedResources), and
// under its StorageClass's keys (<class>.storageclass.storage.k8s.io/requests.storage and
// /persistentvolumeclaims) when it names one. It returns nil for any other object.
func ObjectCharge(obj runtime.Object) corev1.ResourceList {
	kind := objectKind(obj)
	names, ok := objectCountNames[kind]
	if !ok {
		return nil
	}
	one := resource.MustParse("1")
	out := make(corev1.ResourceList, len(names)+2)
	for _, n := range names {
		out[n] = one
	}
	switch o := obj.(type) {
	case *corev1.Service:
		serviceCharge(o, out)
	case *corev1.PersistentVolumeClaim:
		claimCharge(o, out)
	}
	return out
}

// objectKind returns the kind name of obj's Go type (its TypeMeta is empty in an informer's
// cache).
func objectKind(obj runtime.Object) string {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	case *corev1.Service:
		return "Service"
	case *corev1.PersistentVolumeClaim:
		return "PersistentVolumeClaim"
	case *corev1.ServiceAccount:
		return "ServiceAccount"
	case *corev1.Endpoints:
		return "Endpoints"
	case *discoveryv1.EndpointSlice:
		return "EndpointSlice"
	case *networkingv1.Ingress:
		return "Ingress"
	case *networkingv1.NetworkPolicy:
		return "NetworkPolicy"
	case *policyv1.PodDisruptionBudget:
		return "PodDisruptionBudget"
	}
	return ""
}

func serviceCharge(s *corev1.Service, out corev1.ResourceList) {
	ports := int64(len(s.Spec.Ports))
	switch s.Spec.Type {
	case corev1.ServiceTypeNodePort:
		out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		if a := s.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			ports = 0
			for _, p := range s.Spec.Ports {
				if p.NodePort != 0 {
					ports++
				}
			}
		}
		if ports > 0 {
			out[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		}
		out[corev1.ResourceServicesLoadBalancers] = resource.MustParse("1")
	}
}

func claimCharge(c *corev1.PersistentVolumeClaim, out corev1.ResourceList) {
	class, hasClass := c.Annotations[corev1.BetaStorageClassAnnotation]
	if !hasClass && c.Spec.StorageClassName != nil {
		class = *c.Spec.StorageClassName
	}
	if class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = resource.MustParse("1")
	}
	q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]
	if a, has := c.Status.AllocatedResources[corev1.ResourceStorage]; has && (!ok || a.Cmp(q) > 0) {
		q, ok = a, true
	}
	if !ok {
		return
	}
	q = q.DeepCopy()
	q.RoundUp(0)
	out[corev1.ResourceRequestsStorage] = q
	if class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = q.DeepCopy()
	}
}
