package ingress

import (
	"context"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Ingresses: downward as a translated kind (it is also their remediation
// check), and their load-balancer status upward.
var Resource = resource{&reconcile.Descriptor[*networkingv1.Ingress]{
	Name:     resources.KindIngress,
	Resource: networkingv1.Resource("ingresses"),
	Informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Networking().V1().Ingresses().Informer()
	},
	Client: func(env *resources.Env, ns string) reconcile.Writer[*networkingv1.Ingress] {
		return env.Super.NetworkingV1().Ingresses(ns)
	},
	Refuse:  Refuse,
	Desired: Desired,
	Equal:   Equal,
}}

// resource is the Ingress descriptor with its upward path.
type resource struct {
	*reconcile.Descriptor[*networkingv1.Ingress]
}

var _ resources.Upwarder = resource{}

// UpwardOnTenantChange implements resources.Upwarder: a new tenant Ingress may find its
// super copy's status already set.
func (resource) UpwardOnTenantChange() bool { return true }

// Refuse returns why tenant c's policy refuses tenant Ingress o (policy.CheckIngress: class,
// hosts, TLS Secrets, annotations the allowlist leaves out), or nil.
func Refuse(c *tenant.Cluster, o *networkingv1.Ingress) *policy.Denial {
	var dropped []string
	for _, k := range resources.DroppedMetaKeys(c.Policy(), o, Desired(nil, c, o, "", nil)) {
		if a, ok := strings.CutPrefix(k, "annotation "); ok {
			dropped = append(dropped, a)
		}
	}
	return policy.CheckIngress(c.Policy().Network(), o, dropped)
}

// Desired returns the super copy of tenant Ingress o in superNS (existing: the current super
// copy, or nil): its spec unchanged, and the
// legacy class annotation (policy.IngressClassAnnotation) kept whatever the metadata allowlist
// says (Refuse has judged its value).
func Desired(_ *resources.Env, c *tenant.Cluster, o *networkingv1.Ingress, superNS string, existing metav1.Object) *networkingv1.Ingress {
	return &networkingv1.Ingress{ObjectMeta: resources.DesiredMeta(c, o, superNS, existing, policy.IngressClassAnnotation), Spec: *o.Spec.DeepCopy()}
}

// Equal reports whether the super Ingress has the desired spec and metadata.
func Equal(want, have *networkingv1.Ingress) bool {
	return resources.MetaEqual(want, have) && equality.Semantic.DeepEqual(want.Spec, have.Spec)
}

// Upward implements resources.Resource: it copies the super Ingress's status.loadBalancer
// into the tenant Ingress.
func (resource) Upward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	t, s, ok, err := reconcile.UpwardPair[*networkingv1.Ingress](c, c.Informers.Networking().V1().Ingresses().Lister().Ingresses(ns),
		env.SuperInformers.Networking().V1().Ingresses().Lister().Ingresses(resources.SuperNamespace(c, ns)), name)
	if !ok || err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(t.Status.LoadBalancer, s.Status.LoadBalancer) {
		return nil
	}
	u := t.DeepCopy()
	u.Status.LoadBalancer = *s.Status.LoadBalancer.DeepCopy()
	_, err = c.Client.NetworkingV1().Ingresses(ns).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: reconcile.FieldManager})
	return err
}
