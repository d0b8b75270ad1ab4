package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

// The marks of the load's objects: every object it creates carries LabelLoad=ValueLoad and
// lives in a Namespace named NamespacePrefix*; the settled invariants look at those only.
const (
	LabelLoad       = "chaos"
	ValueLoad       = "obj"
	LabelGen        = "chaos-gen"
	AnnotationNote  = "chaos-note" // a plain key: the built-in metadata allowlist copies it
	NamespacePrefix = "chaos-"
)

// lister lists the objects of one namespaced kind in every namespace.
type lister struct {
	kind string
	list func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]Obj, error)
}

func objOf(kind string, m metav1.ObjectMeta, content string) Obj {
	return Obj{Kind: kind, Namespace: m.Namespace, Name: m.Name, UID: string(m.UID), Labels: m.Labels, Annotations: m.Annotations,
		Content: content, Deleting: !m.DeletionTimestamp.IsZero(), Created: m.CreationTimestamp.Time}
}

// listers are the load's kinds.
var listers = []lister{
	{"ConfigMap", func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]Obj, error) {
		l, err := cs.CoreV1().ConfigMaps("").List(ctx, o)
		if err != nil {
			return nil, err
		}
		out := make([]Obj, 0, len(l.Items))
		for _, x := range l.Items {
			out = append(out, objOf("ConfigMap", x.ObjectMeta, fmt.Sprint(x.Data, x.BinaryData)))
		}
		return out, nil
	}},
	{"Secret", func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]Obj, error) {
		l, err := cs.CoreV1().Secrets("").List(ctx, o)
		if err != nil {
			return nil, err
		}
		out := make([]Obj, 0, len(l.Items))
		for _, x := range l.Items {
			data := map[string]string{}
			for k, v := range x.Data {
				data[k] = string(v)
			}
			out = append(out, objOf("Secret", x.ObjectMeta, fmt.Sprint(x.Type, data)))
		}
		return out, nil
	}},
	{"Service", func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]Obj, error) {
		l, err := cs.CoreV1().Services("").List(ctx, o)
		if err != nil {
			return nil, err
		}
		out := make([]Obj, 0, len(l.Items))
		for _, x := range l.Items {
			var ports []string
			for _, p := range x.Spec.Ports {
				ports = append(ports, fmt.Sprintf("%s/%d/%s/%s", p.Name, p.Port, p.Protocol, p.TargetPort.String()))
			}
			out = append(out, objOf("Service", x.ObjectMeta, fmt.Sprint(x.Spec.Type, " ", x.Spec.Selector, " ", ports)))
		}
		return out, nil
	}},
	{"Pod", func(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]Obj, error) {
		l, err := cs.CoreV1().Pods("").List(ctx, o)
		if err != nil {
			return nil, err
		}
		out := make([]Obj, 0, len(l.Items))
		for _, x := range l.Items {
			var images []string
			for _, c := range x.Spec.Containers {
				images = append(images, c.Name+"="+c.Image)
			}
			ob := objOf("Pod", x.ObjectMeta, fmt.Sprint(images))
			ob.Phase, ob.NodeName = string(x.Status.Phase), x.Spec.NodeName
			for _, c := range x.Status.Conditions {
				if c.Type == corev1.PodReady {
					ob.Ready = string(c.Status)
				}
			}
			out = append(out, ob)
		}
		return out, nil
	}},
}

func listNamespaces(ctx context.Context, cs kubernetes.Interface, o metav1.ListOptions) ([]Obj, error) {
	l, err := cs.CoreV1().Namespaces().List(ctx, o)
	if err != nil {
		return nil, err
	}
	out := make([]Obj, 0, len(l.Items))
	for _, x := range l.Items {
		out = append(out, objOf("Namespace", x.ObjectMeta, ""))
	}
	return out, nil
}

// superObjects lists every object of the load's kinds (and every Namespace) the syncer manages
// in the super cluster, optionally only those of one tenant UID.
func superObjects(ctx context.Context, super kubernetes.Interface, tenantUID string) ([]Obj, error) {
	sel := conversion.LabelManagedBy + "=" + conversion.ManagedByValue
	if tenantUID != "" {
		sel += "," + conversion.LabelTenantUID + "=" + tenantUID
	}
	o := metav1.ListOptions{LabelSelector: sel}
	out, err := listNamespaces(ctx, super, o)
	if err != nil {
		return nil, fmt.Errorf("super Namespaces: %w", err)
	}
	for _, l := range listers {
		objs, err := l.list(ctx, super, o)
		if err != nil {
			return nil, fmt.Errorf("super %ss: %w", l.kind, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// tenantObjects lists the load's objects and Namespaces in one tenant.
func tenantObjects(ctx context.Context, cs kubernetes.Interface) ([]Obj, error) {
	nss, err := listNamespaces(ctx, cs, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("Namespaces: %w", err)
	}
	var out []Obj
	for _, ns := range nss {
		if strings.HasPrefix(ns.Name, NamespacePrefix) {
			out = append(out, ns)
		}
	}
	for _, l := range listers {
		objs, err := l.list(ctx, cs, metav1.ListOptions{LabelSelector: LabelLoad + "=" + ValueLoad})
		if err != nil {
			return nil, fmt.Errorf("%ss: %w", l.kind, err)
		}
		for _, o := range objs {
			if strings.HasPrefix(o.Namespace, NamespacePrefix) {
				out = append(out, o)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, nil
}
