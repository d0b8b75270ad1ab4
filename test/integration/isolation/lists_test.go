package isolation

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// object is one listed object and its kind.
type object struct {
	kind string
	obj  metav1.Object
}

// objs returns pointers to the items of a list as metav1.Objects.
func objs[T any, PT interface {
	*T
	metav1.Object
}](kind string, items []T) []object {
	out := make([]object, len(items))
	for i := range items {
		out[i] = object{kind, PT(&items[i])}
	}
	return out
}

// listNamespaced lists, in namespace ns ("" = all), the namespaced kinds an attack could
// reach: workloads and their configuration, Services and endpoints, storage claims, the
// opt-in kinds, quotas, limits and RBAC. Events and Leases change by design and are left out.
func listNamespaced(ctx context.Context, c kubernetes.Interface, ns string) ([]object, error) {
	o := metav1.ListOptions{}
	var out []object
	steps := []func() error{
		func() error {
			l, err := c.CoreV1().Pods(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("Pod", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.CoreV1().Secrets(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("Secret", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.CoreV1().ConfigMaps(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("ConfigMap", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.CoreV1().Services(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("Service", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.CoreV1().Endpoints(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("Endpoints", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("EndpointSlice", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.CoreV1().ServiceAccounts(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("ServiceAccount", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("PersistentVolumeClaim", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("PodDisruptionBudget", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.NetworkingV1().Ingresses(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("Ingress", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.NetworkingV1().NetworkPolicies(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("NetworkPolicy", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.CoreV1().ResourceQuotas(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("ResourceQuota", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.CoreV1().LimitRanges(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("LimitRange", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.RbacV1().Roles(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("Role", l.Items)...)
			}
			return err
		},
		func() error {
			l, err := c.RbacV1().RoleBindings(ns).List(ctx, o)
			if err == nil {
				out = append(out, objs("RoleBinding", l.Items)...)
			}
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// listClusterClasses lists the super cluster's cluster-scoped classes a tenant's objects refer
// to: StorageClasses, PriorityClasses, RuntimeClasses and IngressClasses.
func listClusterClasses(ctx context.Context, c kubernetes.Interface) ([]object, error) {
	o := metav1.ListOptions{}
	var out []object
	sc, err := c.StorageV1().StorageClasses().List(ctx, o)
	if err != nil {
		return nil, err
	}
	out = append(out, objs("StorageClass", sc.Items)...)
	pc, err := c.SchedulingV1().PriorityClasses().List(ctx, o)
	if err != nil {
		return nil, err
	}
	out = append(out, objs("PriorityClass", pc.Items)...)
	rc, err := c.NodeV1().RuntimeClasses().List(ctx, o)
	if err != nil {
		return nil, err
	}
	out = append(out, objs("RuntimeClass", rc.Items)...)
	ic, err := c.NetworkingV1().IngressClasses().List(ctx, o)
	if err != nil {
		return nil, err
	}
	out = append(out, objs("IngressClass", ic.Items)...)
	return out, nil
}
