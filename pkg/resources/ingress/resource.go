// Package ingress syncs Ingresses (networking.k8s.io/v1) downward (spec) and upward
// (status.loadBalancer). It is opt-in: syncer.Options.OptInKinds, flag --opt-in-kinds=Ingress.
//
// # Translation
//
// The spec is copied unchanged: ingressClassName names an IngressClass of the super cluster
// (IngressClasses are cluster-scoped and the super cluster's ingress controllers serve the
// super copy), and backend Services and TLS Secrets are namespace-local references whose
// super copies keep their names in the mapped namespace. The super ingress controller's
// status.loadBalancer is copied into the tenant Ingress.
//
// # Policy
//
// A super ingress controller serves every tenant, so the tenant's policy decides which
// Ingresses get a super copy (policy.CheckIngress): the class (spec.ingressClassName and the
// legacy kubernetes.io/ingress.class annotation) must be in network.allowedIngressClasses and
// one must be set; every host and TLS host must be in network.allowedIngressHosts (a rule
// without host and a defaultBackend claim every host: only "*" allows them); a TLS secretName
// must not name another namespace ("ns/name"); and every annotation must pass the metadata
// allowlist, because an Ingress served without its controller annotations (authentication,
// source ranges) would serve more than the tenant asked (rule ingressSnippet for snippet
// annotations, metadataKey for the others). The built-in policy allows no class: every
// Ingress is refused until an admin allows one.
package ingress

import (
	"context"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vcsyncer/syncer/pkg/policy"
	"github.com/vcsyncer/syncer/pkg/reconcile"
	"github.com/vcsyncer/syncer/pkg/resources"
	"github.com/vcsyncer/syncer/pkg/tenant"
)

// Resource syncs Ingresses.
type Resource struct{}

var (
	_ resources.Resource = Resource{}
	_ resources.Upwarder = Resource{}
)

// Kind implements resources.Resource.
func (Resource) Kind() resources.Kind { return resources.KindIngress }

// TenantInformer implements resources.Resource.
func (Resource) TenantInformer(c *tenant.Cluster) cache.SharedIndexInformer {
	return c.Informers.Networking().V1().Ingresses().Informer()
}

// SuperInformer implements resources.Resource.
func (Resource) SuperInformer(env *resources.Env) cache.SharedIndexInformer {
	return env.SuperInformers.Networking().V1().Ingresses().Informer()
}

// UpwardOnTenantChange implements resources.Upwarder: a new tenant Ingress may find its
// super copy's status already set.
func (Resource) UpwardOnTenantChange() bool { return true }

// Downward implements resources.Resource.
func (Resource) Downward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
	tl := c.Informers.Networking().V1().Ingresses().Lister()
	sl := env.SuperInformers.Networking().V1().Ingresses().Lister()
	return reconcile.Reconcile(ctx, env, c, ns, name, reconcile.Spec[*networkingv1.Ingress]{
		Kind:   resources.KindIngress,
		Tenant: func(ns string) reconcile.Getter[*networkingv1.Ingress] { return tl.Ingresses(ns) },
		Super:  func(ns string) reconcile.Getter[*networkingv1.Ingress] { return sl.Ingresses(ns) },
		Client: func(ns string) reconcile.Writer[*networkingv1.Ingress] { return env.Super.NetworkingV1().Ingresses(ns) },
		Refuse: func(o *networkingv1.Ingress) *policy.Denial { return Refuse(c, o) },
		Desired: func(o *networkingv1.Ingress, superNS string, existing *networkingv1.Ingress, has bool) *networkingv1.Ingress {
			return Desired(c, o, superNS, existing, has)
		},
		Equal: Equal,
	})
}

// Refuse returns why tenant c's policy refuses tenant Ingress o (policy.CheckIngress: class,
// hosts, TLS Secrets, annotations the allowlist leaves out), or nil.
func Refuse(c *tenant.Cluster, o *networkingv1.Ingress) *policy.Denial {
	var dropped []string
	for _, k := range resources.DroppedMetaKeys(c.Policy(), o, Desired(c, o, "", nil, false)) {
		if a, ok := strings.CutPrefix(k, "annotation "); ok {
			dropped = append(dropped, a)
		}
	}
	return policy.CheckIngress(c.Policy().Network(), o, dropped)
}

// Desired returns the super copy of tenant Ingress o in superNS: its spec unchanged, and the
// legacy class annotation (policy.IngressClassAnnotation) kept whatever the metadata allowlist
// says (Refuse has judged its value).
func Desired(c *tenant.Cluster, o *networkingv1.Ingress, superNS string, existing *networkingv1.Ingress, has bool) *networkingv1.Ingress {
	var ex metav1.Object
	if has {
		ex = existing
	}
	return &networkingv1.Ingress{ObjectMeta: resources.DesiredMeta(c, o, superNS, ex, policy.IngressClassAnnotation), Spec: *o.Spec.DeepCopy()}
}

// Equal reports whether the super Ingress has the desired spec and metadata.
func Equal(want, have *networkingv1.Ingress) bool {
	return resources.MetaEqual(want, have) && equality.Semantic.DeepEqual(want.Spec, have.Spec)
}

// Upward implements resources.Resource: it copies the super Ingress's status.loadBalancer
// into the tenant Ingress.
func (Resource) Upward(ctx context.Context, env *resources.Env, c *tenant.Cluster, ns, name string) error {
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
