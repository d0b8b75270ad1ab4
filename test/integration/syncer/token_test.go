package syncer_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/pkg/resources/pod"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// testTenantTokens checks that the super copy of tenant Pod ns/name (already Running) mounts a
// service-account token issued by the TENANT apiserver, bound to the tenant Pod, with the
// tenant's CA, and no super-cluster token.
func testTenantTokens(t *testing.T, super kubernetes.Interface, tc *localcluster.ControlPlane, superNS, ns, name string) {
	ctx := context.Background()
	tp, err := tc.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tenantVol string
	for _, v := range tp.Spec.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") {
			tenantVol = v.Name
		}
	}
	if tenantVol == "" {
		t.Fatalf("tenant Pod %s/%s has no kube-api-access volume: %+v", ns, name, tp.Spec.Volumes)
	}
	var sp *corev1.Pod
	itest.Eventually(t, time.Minute, "tokens written", func(ctx context.Context) error {
		sp, err = super.CoreV1().Pods(superNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sp.Annotations[pod.AnnotationTokenRefresh] == "" {
			return itest.Errorf("no %s annotation yet", pod.AnnotationTokenRefresh)
		}
		return nil
	})
	if sp.Annotations[pod.AnnotationTokenSecret] != "" {
		t.Errorf("super Pod names a token Secret %q: the tokens must travel in the Pod itself", sp.Annotations[pod.AnnotationTokenSecret])
	}
	if secrets, err := super.CoreV1().Secrets(superNS).List(ctx, metav1.ListOptions{LabelSelector: pod.LabelTokenSecret}); err != nil || len(secrets.Items) > 0 {
		t.Errorf("token Secrets in %s: %d (%v), want none (no extra super write per Pod)", superNS, len(secrets.Items), err)
	}
	if sp.Spec.AutomountServiceAccountToken == nil || *sp.Spec.AutomountServiceAccountToken {
		t.Errorf("super Pod automountServiceAccountToken = %v, want false", sp.Spec.AutomountServiceAccountToken)
	}
	var vol *corev1.Volume
	for i := range sp.Spec.Volumes {
		if sp.Spec.Volumes[i].Name == tenantVol {
			vol = &sp.Spec.Volumes[i]
		}
		if p := sp.Spec.Volumes[i].Projected; p != nil {
			for _, s := range p.Sources {
				if s.ServiceAccountToken != nil {
					t.Errorf("super Pod volume %s projects a super-cluster token", sp.Spec.Volumes[i].Name)
				}
			}
		}
	}
	if vol == nil || vol.Projected == nil {
		t.Fatalf("super Pod lacks projected volume %s: %+v", tenantVol, sp.Spec.Volumes)
	}
	paths := map[string]string{} // path -> super Pod annotation
	for _, s := range vol.Projected.Sources {
		if s.DownwardAPI != nil {
			for _, it := range s.DownwardAPI.Items {
				k, _ := strings.CutSuffix(strings.TrimPrefix(it.FieldRef.FieldPath, "metadata.annotations['"), "']")
				paths[it.Path] = k
			}
		}
	}
	if paths["token"] == "" || paths["ca.crt"] == "" {
		t.Fatalf("super volume %s does not project token and ca.crt from the Pod's annotations: %+v", tenantVol, vol.Projected.Sources)
	}
	rootCA, err := tc.Client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Annotations[paths["ca.crt"]] != rootCA.Data["ca.crt"] {
		t.Errorf("ca.crt in the super Pod is not the tenant's root CA")
	}
	token := sp.Annotations[paths["token"]]
	review := func(c kubernetes.Interface) *authenticationv1.TokenReview {
		r, err := c.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tr := review(tc.Client)
	wantUser := "system:serviceaccount:" + ns + ":" + tp.Spec.ServiceAccountName
	if !tr.Status.Authenticated || tr.Status.User.Username != wantUser {
		t.Errorf("tenant TokenReview: authenticated %v as %q (%s), want %q", tr.Status.Authenticated, tr.Status.User.Username, tr.Status.Error, wantUser)
	}
	if got := tr.Status.User.Extra["authentication.kubernetes.io/pod-uid"]; len(got) != 1 || got[0] != string(tp.UID) {
		t.Errorf("token is bound to Pod UID %v, want the tenant Pod %s", got, tp.UID)
	}
	if sr := review(super); sr.Status.Authenticated {
		t.Errorf("the super cluster accepts the tenant token as %q", sr.Status.User.Username)
	}
	at, err := time.Parse(time.RFC3339, sp.Annotations[pod.AnnotationTokenRefresh])
	if err != nil || time.Until(at) < 10*time.Minute {
		t.Errorf("next refresh %q (%v): want a time ~80%% of the token lifetime ahead", sp.Annotations[pod.AnnotationTokenRefresh], err)
	}
}

// testDownwardAPIIdentity creates a tenant Pod whose env reads metadata.namespace,
// metadata.uid and a label, and whose downwardAPI volume reads all labels, and checks that its
// super copy reads them from annotations that carry the tenant's values (the super apiserver
// accepts the rewritten references).
func testDownwardAPIIdentity(t *testing.T, super kubernetes.Interface, tc *localcluster.ControlPlane, superNS, ns string) {
	ctx := context.Background()
	ref := func(p string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: p}}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "whoami", Labels: map[string]string{"app": "whoami", "tier": "front"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Env: []corev1.EnvVar{
			{Name: "MY_NAMESPACE", ValueFrom: ref("metadata.namespace")}, {Name: "MY_UID", ValueFrom: ref("metadata.uid")},
			{Name: "MY_APP", ValueFrom: ref("metadata.labels['app']")},
		}}}, Volumes: []corev1.Volume{{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}}}},
	}
	itest.Created(t)(tc.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}))
	itest.Eventually(t, time.Minute, "super Pod whoami", func(ctx context.Context) error {
		sp, err := super.CoreV1().Pods(superNS).Get(ctx, "whoami", metav1.GetOptions{})
		if err != nil {
			return err
		}
		env := sp.Spec.Containers[0].Env
		want := map[string]string{
			"MY_NAMESPACE": "metadata.annotations['" + conversion.AnnotationNamespace + "']",
			"MY_UID":       "metadata.annotations['" + conversion.AnnotationUID + "']",
		}
		for _, e := range env {
			if _, ok := want[e.Name]; !ok {
				continue // the KUBERNETES_* variables of the tenant apiserver
			}
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != want[e.Name] {
				return itest.Errorf("env %s reads %s, want %s", e.Name, e.ValueFrom.FieldRef.FieldPath, want[e.Name])
			}
		}
		tp, err := tc.Client.CoreV1().Pods(ns).Get(ctx, "whoami", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sp.Annotations[conversion.AnnotationNamespace] != ns || sp.Annotations[conversion.AnnotationUID] != string(tp.UID) {
			return itest.Errorf("super annotations %v do not hold the tenant namespace and UID", sp.Annotations)
		}
		// What a kubelet writes for metadata.labels (sorted key="value" lines): the tenant's
		// labels only, not the syncer's ownership labels.
		labelsPath := ""
		for _, v := range sp.Spec.Volumes {
			if v.Name == "info" && v.DownwardAPI != nil {
				labelsPath = v.DownwardAPI.Items[0].FieldRef.FieldPath
			}
		}
		if want := "app=\"whoami\"\ntier=\"front\""; labelsPath != "metadata.annotations['"+pod.AnnotationDownwardLabels+"']" ||
			sp.Annotations[pod.AnnotationDownwardLabels] != want {
			return itest.Errorf("metadata.labels reads %s = %q, want the tenant's %q", labelsPath, sp.Annotations[pod.AnnotationDownwardLabels], want)
		}
		for _, e := range env {
			if e.Name == "MY_APP" {
				k, _ := strings.CutSuffix(strings.TrimPrefix(e.ValueFrom.FieldRef.FieldPath, "metadata.annotations['"), "']")
				if sp.Annotations[k] != "whoami" {
					return itest.Errorf("MY_APP reads %s = %q", e.ValueFrom.FieldRef.FieldPath, sp.Annotations[k])
				}
			}
		}
		return nil
	})
}

// testTenantAPIAccess checks that a super Pod reaches its tenant's apiserver (KUBERNETES_*
// variables, kubernetes host aliases) and the tenant's DNS through the super copy of its
// kube-system/kube-dns Service (framework tenants have one, as kubeadm clusters do).
func testTenantAPIAccess(t *testing.T, super kubernetes.Interface, tc *localcluster.ControlPlane, superNS, dnsNS, ns string) {
	ctx := context.Background()
	if _, err := tc.Client.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{}); err != nil {
		t.Fatalf("tenant %s has no kube-system/kube-dns: %v", tc.Name, err)
	}
	itest.Created(t)(tc.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "dns-check"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{}))
	u, err := url.Parse(tc.RESTConfig.Host)
	if err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, time.Minute, "super Pod dns-check with the tenant's DNS and apiserver", func(ctx context.Context) error {
		sp, err := super.CoreV1().Pods(superNS).Get(ctx, "dns-check", metav1.GetOptions{})
		if err != nil {
			return err
		}
		dns, err := super.CoreV1().Services(dnsNS).Get(ctx, "kube-dns", metav1.GetOptions{})
		if err != nil {
			return itest.Errorf("super copy of kube-dns in %s: %v", dnsNS, err)
		}
		if sp.Spec.DNSPolicy != corev1.DNSNone || sp.Spec.DNSConfig == nil || len(sp.Spec.DNSConfig.Nameservers) == 0 ||
			sp.Spec.DNSConfig.Nameservers[0] != dns.Spec.ClusterIP || sp.Spec.DNSConfig.Searches[0] != ns+".svc.cluster.local" {
			return itest.Errorf("dnsPolicy %q dnsConfig %+v, want nameserver %s", sp.Spec.DNSPolicy, sp.Spec.DNSConfig, dns.Spec.ClusterIP)
		}
		env := map[string]string{}
		for _, e := range sp.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		if env["KUBERNETES_SERVICE_HOST"] != u.Hostname() || env["KUBERNETES_SERVICE_PORT"] != u.Port() {
			return itest.Errorf("KUBERNETES_SERVICE_HOST/PORT = %s:%s, want the tenant apiserver %s", env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"], u.Host)
		}
		if len(sp.Spec.HostAliases) != 1 || sp.Spec.HostAliases[0].IP != u.Hostname() {
			return itest.Errorf("hostAliases %+v, want kubernetes -> %s", sp.Spec.HostAliases, u.Hostname())
		}
		return nil
	})
}
