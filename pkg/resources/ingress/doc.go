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
//
// It sits on floor 6 of the package map in docs/architecture.md and may import packages on floors
// 0–6 only (today: pkg/policy, pkg/reconcile, pkg/resources, pkg/tenant); test/layering checks
// it.
package ingress
