package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app"
	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
)

// identityKinds are the kinds of the chart that give the syncer its identity and its limits in
// the super cluster: applied for real by applyIdentity.
var identityKinds = map[string]bool{
	"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
}

// applyIdentity applies the chart's ServiceAccount, RBAC and admission policy (rendered with
// every opt-in kind and the extra --set values) to the super cluster, waits until the policy
// is enforced, and returns a rest.Config with a 1-hour token of the ServiceAccount.
func applyIdentity(t *testing.T, env *localcluster.Environment, k func([]byte, ...string) ([]byte, error), set ...string) *rest.Config {
	t.Helper()
	objs := parse(t, helmTemplate(t, false, append([]string{"optInKinds={" + strings.Join(allOptIn, ",") + "}"}, set...)...))
	var docs [][]byte
	var keys []string
	for key, u := range objs {
		if identityKinds[u.GetKind()] {
			y, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, y)
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	want := []string{
		"ClusterRole//" + releaseName, "ClusterRole//" + releaseName + "-metrics-reader", "ClusterRoleBinding//" + releaseName,
		"Role/" + releaseNamespace + "/" + releaseName, "RoleBinding/" + releaseNamespace + "/" + releaseName,
		"Role/default/" + releaseName + "-tenant-events", "RoleBinding/default/" + releaseName + "-tenant-events",
		"ServiceAccount/" + releaseNamespace + "/" + releaseName,
		"ValidatingAdmissionPolicy//" + releaseName + "-confine", "ValidatingAdmissionPolicyBinding//" + releaseName + "-confine",
	}
	for _, w := range want {
		if objs[w] == nil {
			t.Errorf("the chart renders no %s (identity objects: %v)", w, keys)
		}
	}
	if out, err := k(bytes.Join(docs, []byte("\n---\n")), "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tr, err := env.Super.Client.CoreV1().ServiceAccounts(releaseNamespace).CreateToken(t.Context(), releaseName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(env.Super.RESTConfig)
	cfg.BearerToken = tr.Status.Token
	waitEnforced(t, cfg)
	return cfg
}

// waitEnforced waits (up to 1 minute) until the super apiserver refuses, through the admission
// policy, a dry-run creation of a Secret in kube-system by the client of cfg: RBAC allows it,
// and a new policy takes effect once the apiserver's policy informer has it. It reports an
// error (and returns) when that never happens.
func waitEnforced(t *testing.T, cfg *rest.Config) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	var last error
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		_, last = cs.CoreV1().Secrets(metav1.NamespaceSystem).Create(t.Context(),
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vc-syncer-policy-probe"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if byPolicy(last) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Errorf("the syncer's ServiceAccount may still create a Secret in kube-system after 1m (last answer: %v); the admission policy is not enforced", last)
}

// byPolicy reports whether err is the super apiserver refusing a request through a
// ValidatingAdmissionPolicy's validation (403, not RBAC's 403, and not a policy expression
// that failed to evaluate, which failurePolicy Fail also turns into a refusal).
func byPolicy(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy") &&
		!strings.Contains(err.Error(), "resulted in error") && !strings.Contains(err.Error(), "fails to evaluate")
}

// testConfinement applies the chart's ServiceAccount, RBAC and admission policy and checks,
// with a token of that ServiceAccount (what a stolen token or a syncer bug could do), that the
// super apiserver refuses every write outside the namespaces the syncer created and its own
// namespace, refuses labelling a namespace as the syncer's, and allows what the syncer does.
func testConfinement(t *testing.T, env *localcluster.Environment, k func([]byte, ...string) ([]byte, error)) {
	ctx := t.Context()
	admin := env.Super.Client
	adminC, err := client.New(env.Super.RESTConfig, client.Options{Scheme: app.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// The kubelet API with node stats: the grant (nodes/proxy get) whose use through the super
	// apiserver the policy confines to resource metrics.
	cfg := applyIdentity(t, env, k, "kubeletAPI.enabled=true", "replicaCount=1", "kubeletAPI.advertiseAddress=10.96.0.50", "kubeletAPI.nodeStats=true")
	sa := kubernetes.NewForConfigOrDie(cfg)
	saC, err := client.New(cfg, client.Options{Scheme: app.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		switch {
		case err == nil:
			t.Errorf("%s: allowed; want refused by the admission policy", what)
		case !byPolicy(err):
			t.Errorf("%s: %v; want 403 from the admission policy", what, err)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v; want allowed", what, err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	managed := map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue}
	const (
		managedNS = "confine-managed"
		plainNS   = "confine-plain"
		tenant    = "confine"
	)

	// What the super cluster's admins have: a Secret and a Pod in kube-system, a namespace the
	// syncer created (by its label) and one it did not, a Tenant and its kubeconfig Secret.
	_, err = admin.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "victim"},
		StringData: map[string]string{"token": "admin"}}, metav1.CreateOptions{})
	must(err)
	victimPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "victim"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	_, err = admin.CoreV1().Pods(metav1.NamespaceSystem).Create(ctx, victimPod, metav1.CreateOptions{})
	must(err)
	for name, labels := range map[string]map[string]string{managedNS: managed, plainNS: nil} {
		_, err = admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
		must(err)
	}
	_, err = admin.CoreV1().Secrets(releaseNamespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: tenant + "-kubeconfig"},
		StringData: map[string]string{"kubeconfig": "not used"}}, metav1.CreateOptions{})
	must(err)
	must(adminC.Create(ctx, &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: tenant},
		Spec: tenancyv1alpha1.TenantSpec{KubeconfigSecretRef: tenancyv1alpha1.SecretKeyRef{Namespace: releaseNamespace, Name: tenant + "-kubeconfig"}}}))
	t.Cleanup(func() {
		ctx := context.Background()
		var tn tenancyv1alpha1.Tenant
		if adminC.Get(ctx, client.ObjectKey{Name: tenant}, &tn) == nil {
			tn.Finalizers = nil
			_ = adminC.Update(ctx, &tn)
			_ = adminC.Delete(ctx, &tn)
		}
		for _, ns := range []string{managedNS, plainNS} {
			_ = admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		}
		_ = admin.CoreV1().Secrets(releaseNamespace).Delete(ctx, tenant+"-kubeconfig", metav1.DeleteOptions{})
	})
	secret := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, StringData: map[string]string{"k": "v"}}
	}
	event := func(ns string, about corev1.ObjectReference) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "confine-test", Namespace: ns}, InvolvedObject: about,
			Reason: "Test", Message: "test", Type: corev1.EventTypeNormal}
	}
	labelPatch := []byte(`{"metadata":{"labels":{"stolen":"token"}}}`)

	t.Run("kube-system: Secrets and Pods are not created, changed or deleted", func(t *testing.T) {
		_, err := sa.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, secret("planted", nil), metav1.CreateOptions{})
		refused("create Secret kube-system/planted", err)
		t.Logf("the refusal: %v", err)
		s, err := admin.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "victim", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.StringData = map[string]string{"token": "attacker"}
		_, err = sa.CoreV1().Secrets(metav1.NamespaceSystem).Update(ctx, s, metav1.UpdateOptions{})
		refused("update Secret kube-system/victim", err)
		refused("delete Secret kube-system/victim", sa.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, "victim", metav1.DeleteOptions{}))
		p := victimPod.DeepCopy()
		p.Name = "planted"
		_, err = sa.CoreV1().Pods(metav1.NamespaceSystem).Create(ctx, p, metav1.CreateOptions{})
		refused("create Pod kube-system/planted", err)
		_, err = sa.CoreV1().Pods(metav1.NamespaceSystem).Patch(ctx, "victim", types.MergePatchType, labelPatch, metav1.PatchOptions{})
		refused("patch Pod kube-system/victim", err)
		refused("delete Pod kube-system/victim", sa.CoreV1().Pods(metav1.NamespaceSystem).Delete(ctx, "victim", metav1.DeleteOptions{}))
		if _, err := admin.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "victim", metav1.GetOptions{}); err != nil {
			t.Errorf("kube-system/victim Secret: %v", err)
		}
		// Reads never pass admission: RBAC alone limits them, and it grants the synced kinds in
		// every namespace (documented).
		if _, err := sa.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "victim", metav1.GetOptions{}); err != nil {
			t.Logf("reading kube-system/victim with the syncer's token: %v", err)
		} else {
			t.Log("the syncer's token can read Secrets in kube-system: reads are limited by RBAC only")
		}
	})

	t.Run("kube-system is not labelled as the syncer's namespace", func(t *testing.T) {
		ns, err := admin.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns.Labels[conversion.LabelManagedBy] = conversion.ManagedByValue
		_, err = sa.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
		refused("label namespace kube-system managed-by", err)
		ns, err = admin.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
		if err != nil || ns.Labels[conversion.LabelManagedBy] != "" {
			t.Errorf("kube-system labels %v (err %v)", ns.Labels, err)
		}
	})

	t.Run("namespaces the syncer did not create", func(t *testing.T) {
		_, err := sa.CoreV1().Secrets(plainNS).Create(ctx, secret("planted", nil), metav1.CreateOptions{})
		refused("create Secret in an unlabelled namespace", err)
		_, err = sa.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "confine-unlabelled"}}, metav1.CreateOptions{})
		refused("create an unlabelled Namespace", err)
		refused("delete an unlabelled Namespace", sa.CoreV1().Namespaces().Delete(ctx, plainNS, metav1.DeleteOptions{}))
		_, err = sa.CoreV1().ConfigMaps(releaseNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "planted"}}, metav1.CreateOptions{})
		refused("create ConfigMap in the release namespace", err)
	})

	t.Run("namespaces the syncer created: its kinds are written", func(t *testing.T) {
		s, err := sa.CoreV1().Secrets(managedNS).Create(ctx, secret("copy", nil), metav1.CreateOptions{})
		allowed("create Secret in a managed namespace", err)
		if err == nil {
			s.StringData = map[string]string{"k": "v2"}
			_, err = sa.CoreV1().Secrets(managedNS).Update(ctx, s, metav1.UpdateOptions{})
			allowed("update Secret in a managed namespace", err)
			allowed("delete Secret in a managed namespace", sa.CoreV1().Secrets(managedNS).Delete(ctx, "copy", metav1.DeleteOptions{}))
		}
		p := victimPod.DeepCopy()
		p.Name = "copy"
		_, err = sa.CoreV1().Pods(managedNS).Create(ctx, p, metav1.CreateOptions{})
		allowed("create Pod in a managed namespace", err)
		_, err = sa.CoreV1().Pods(managedNS).Patch(ctx, "copy", types.MergePatchType, labelPatch, metav1.PatchOptions{})
		allowed("patch Pod in a managed namespace", err)
		allowed("delete Pod in a managed namespace", sa.CoreV1().Pods(managedNS).Delete(ctx, "copy", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}))
	})

	t.Run("Namespaces: only the syncer's, with the chart's Pod Security level", func(t *testing.T) {
		psa := "pod-security.kubernetes.io/enforce"
		nsWith := func(name string, labels map[string]string) *corev1.Namespace {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		}
		_, err := sa.CoreV1().Namespaces().Create(ctx, nsWith("confine-privileged", map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue, psa: "privileged"}), metav1.CreateOptions{})
		refused("create a managed Namespace with Pod Security privileged", err)
		_, err = sa.CoreV1().Namespaces().Create(ctx, nsWith("confine-no-psa", managed), metav1.CreateOptions{})
		refused("create a managed Namespace without the Pod Security label", err)
		_, err = sa.CoreV1().Namespaces().Create(ctx, nsWith("confine-new", map[string]string{conversion.LabelManagedBy: conversion.ManagedByValue, psa: "baseline"}), metav1.CreateOptions{})
		allowed("create a managed Namespace with Pod Security baseline", err)
		if err == nil {
			n, err := sa.CoreV1().Namespaces().Get(ctx, "confine-new", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n.Labels["team"] = "a"
			n, err = sa.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{})
			allowed("update a managed Namespace's labels", err)
			if err == nil {
				weak := n.DeepCopy()
				weak.Labels[psa] = "privileged"
				_, err = sa.CoreV1().Namespaces().Update(ctx, weak, metav1.UpdateOptions{})
				refused("change the Pod Security label of a managed Namespace", err)
				unlabel := n.DeepCopy()
				delete(unlabel.Labels, conversion.LabelManagedBy)
				_, err = sa.CoreV1().Namespaces().Update(ctx, unlabel, metav1.UpdateOptions{})
				refused("remove the managed-by label of a managed Namespace", err)
			}
			allowed("delete a managed Namespace", sa.CoreV1().Namespaces().Delete(ctx, "confine-new", metav1.DeleteOptions{}))
		}
		// vc-syncer run creates its own namespace when it is missing.
		_, err = sa.CoreV1().Namespaces().Create(ctx, nsWith(releaseNamespace, nil), metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			t.Errorf("create the release namespace (exists): %v; want AlreadyExists", err)
		}
	})

	t.Run("the release namespace: Leases, Events and checkpoint Secrets only", func(t *testing.T) {
		ckpt := map[string]string{store.LabelID: "confine-test"}
		s, err := sa.CoreV1().Secrets(releaseNamespace).Create(ctx, secret("confine-test", ckpt), metav1.CreateOptions{})
		allowed("create a checkpoint Secret", err)
		if err == nil {
			s.StringData = map[string]string{"k": "v2"}
			_, err = sa.CoreV1().Secrets(releaseNamespace).Update(ctx, s, metav1.UpdateOptions{})
			allowed("update a checkpoint Secret", err)
			allowed("delete a checkpoint Secret", sa.CoreV1().Secrets(releaseNamespace).Delete(ctx, "confine-test", metav1.DeleteOptions{}))
		}
		_, err = sa.CoreV1().Secrets(releaseNamespace).Create(ctx, secret("planted", nil), metav1.CreateOptions{})
		refused("create a Secret without the checkpoint label in the release namespace", err)
		kc, err := admin.CoreV1().Secrets(releaseNamespace).Get(ctx, tenant+"-kubeconfig", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kc.StringData = map[string]string{"kubeconfig": "attacker"}
		_, err = sa.CoreV1().Secrets(releaseNamespace).Update(ctx, kc, metav1.UpdateOptions{})
		refused("update a tenant kubeconfig Secret", err)
		kc.Labels = ckpt
		_, err = sa.CoreV1().Secrets(releaseNamespace).Update(ctx, kc, metav1.UpdateOptions{})
		refused("label a tenant kubeconfig Secret as a checkpoint", err)
		refused("delete a tenant kubeconfig Secret", sa.CoreV1().Secrets(releaseNamespace).Delete(ctx, tenant+"-kubeconfig", metav1.DeleteOptions{}))
		_, err = sa.CoordinationV1().Leases(releaseNamespace).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "confine-test"}}, metav1.CreateOptions{})
		allowed("create a Lease", err)
		lease := corev1.ObjectReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Namespace: releaseNamespace, Name: "confine-test"}
		_, err = sa.CoreV1().Events(releaseNamespace).Create(ctx, event(releaseNamespace, lease), metav1.CreateOptions{})
		allowed("create an Event in the release namespace", err)
	})

	t.Run("default: Events about Tenants only", func(t *testing.T) {
		about := corev1.ObjectReference{APIVersion: tenancyv1alpha1.GroupVersion.String(), Kind: "Tenant", Name: tenant}
		_, err := sa.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, event(metav1.NamespaceDefault, about), metav1.CreateOptions{})
		allowed("create an Event about a Tenant in default", err)
		if err == nil {
			_, err = sa.CoreV1().Events(metav1.NamespaceDefault).Patch(ctx, "confine-test", types.MergePatchType, []byte(`{"count":2}`), metav1.PatchOptions{})
			allowed("patch an Event about a Tenant in default", err)
		}
		pod := corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: metav1.NamespaceDefault, Name: "web"}
		forged := event(metav1.NamespaceDefault, pod)
		forged.Name = "confine-forged"
		_, err = sa.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, forged, metav1.CreateOptions{})
		refused("create an Event about a Pod in default", err)
		_, err = sa.CoreV1().Secrets(metav1.NamespaceDefault).Create(ctx, secret("planted", nil), metav1.CreateOptions{})
		refused("create a Secret in default", err)
	})

	t.Run("Tenants: finalizers and status, never the spec", func(t *testing.T) {
		var tn tenancyv1alpha1.Tenant
		if err := saC.Get(ctx, client.ObjectKey{Name: tenant}, &tn); err != nil {
			t.Fatal(err)
		}
		tn.Finalizers = append(tn.Finalizers, "tenancy.vcsyncer.io/cleanup")
		allowed("add a finalizer to a Tenant", saC.Update(ctx, &tn))
		tn.Status.Phase = tenancyv1alpha1.TenantPending
		allowed("update a Tenant's status", saC.Status().Update(ctx, &tn))
		weak := tn.DeepCopy()
		weak.Spec.Weight = 1000
		refused("change a Tenant's weight", saC.Update(ctx, weak))
		other := tn.DeepCopy()
		other.Spec.KubeconfigSecretRef.Name = "another-tenants-kubeconfig"
		refused("point a Tenant at another kubeconfig Secret", saC.Update(ctx, other))
	})

	t.Run("metrics authentication: TokenReviews and SubjectAccessReviews", func(t *testing.T) {
		_, err := sa.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: cfg.BearerToken}}, metav1.CreateOptions{})
		allowed("create a TokenReview", err)
		_, err = sa.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "someone", NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}},
			metav1.CreateOptions{})
		allowed("create a SubjectAccessReview", err)
	})

	t.Run("nodes/proxy: a kubelet's resource metrics only", func(t *testing.T) {
		// RBAC grants nodes/proxy get for the vNodes' stats/summary and metrics/resource; any
		// other kubelet path (node-wide stats, logs and exec of every Pod) is the policy's to refuse.
		for path, ok := range map[string]bool{
			"metrics/resource": true, "metrics/nodes/kwok-node-0/metrics/resource": true,
			"stats/summary": false, "pods": false, "runningpods/": false, "metrics/cadvisor": false, "configz": false,
			"exec/kube-system/victim/c": false, "containerLogs/kube-system/victim/c": false, "metrics/resource/x": false,
		} {
			// A proxy's error body is not decoded into the error: read its Status.
			raw, err := sa.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/kwok-node-0/proxy/" + path).DoRaw(ctx)
			var st metav1.Status
			_ = json.Unmarshal(raw, &st)
			byPolicy := err != nil && st.Code == http.StatusForbidden && strings.Contains(st.Message, "ValidatingAdmissionPolicy") &&
				!strings.Contains(st.Message, "fails to evaluate") && !strings.Contains(st.Message, "resulted in error")
			switch {
			case !ok && !byPolicy:
				t.Errorf("GET nodes/kwok-node-0/proxy/%s: %v %s; want 403 from the admission policy", path, err, raw)
			case ok && st.Code == http.StatusForbidden:
				// Past admission the apiserver refuses kwok's loopback address (400): not a 403.
				t.Errorf("GET nodes/kwok-node-0/proxy/%s: %v %s; want allowed by RBAC and the admission policy", path, err, raw)
			}
		}
	})

	// Everything the admins had is unchanged.
	if err := checkUntouched(ctx, admin); err != nil {
		t.Error(err)
	}
}

// checkUntouched returns an error when the admins' kube-system Secret or Pod of testConfinement
// was changed or deleted.
func checkUntouched(ctx context.Context, admin kubernetes.Interface) error {
	var errs []error
	s, err := admin.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "victim", metav1.GetOptions{})
	if err != nil || string(s.Data["token"]) != "admin" {
		errs = append(errs, fmt.Errorf("kube-system/victim Secret changed (err %w)", err))
	}
	p, err := admin.CoreV1().Pods(metav1.NamespaceSystem).Get(ctx, "victim", metav1.GetOptions{})
	if err != nil || p.Labels["stolen"] != "" || !p.DeletionTimestamp.IsZero() {
		errs = append(errs, fmt.Errorf("kube-system/victim Pod changed (err %w)", err))
	}
	return errors.Join(errs...)
}
