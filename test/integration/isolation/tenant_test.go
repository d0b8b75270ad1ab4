package isolation

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1alpha1 "github.com/vcsyncer/syncer/pkg/apis/tenancy/v1alpha1"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// serviceAccountTokenPath is where a Pod's kubelet puts its ServiceAccount token: in the
// syncer's Pod, the syncer's own super-cluster token.
const serviceAccountTokenPath = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// attackKubeconfig registers a third Tenant whose kubeconfig points at a server the tenant
// chose (an HTTPS listener of the test) with user credentials the syncer would resolve on its
// own side: tokenFile = the syncer's ServiceAccount token path, tokenFile = a file readable
// by the syncer, or an exec plugin (a command run by the syncer). Expect: KubeconfigValid=False on the Tenant (the kind's signal) and no
// request at all to the listener, the exec command never run.
func (s *suite) attackKubeconfig(variant string) func(t *testing.T) {
	return func(t *testing.T) {
		ctx := context.Background()
		var mu sync.Mutex
		var hits []string
		ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth := "without credentials"
			if r.Header.Get("Authorization") != "" {
				auth = "WITH an Authorization header"
			}
			hits = append(hits, fmt.Sprintf("%s %s %s", r.Method, r.URL.Path, auth))
			mu.Unlock()
			w.WriteHeader(http.StatusUnauthorized)
		}))
		defer ts.Close()
		marker := filepath.Join(t.TempDir(), "exec-plugin-ran")
		user := &clientcmdapi.AuthInfo{}
		switch variant {
		case "tokenfile-serviceaccount":
			user.TokenFile = serviceAccountTokenPath
		case "tokenfile-local":
			// A file on the syncer's side standing in for any credential it can read.
			f := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(f, []byte("syncer-side-secret"), 0o600); err != nil {
				t.Fatal(err)
			}
			user.TokenFile = f
		case "exec":
			user.Exec = &clientcmdapi.ExecConfig{
				APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh",
				Args:            []string{"-c", "touch " + marker + `; echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-exec"}}'`},
				InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
			}
		}
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["evil"] = &clientcmdapi.Cluster{Server: ts.URL,
			CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})}
		cfg.AuthInfos["evil"] = user
		cfg.Contexts["evil"] = &clientcmdapi.Context{Cluster: "evil", AuthInfo: "evil"}
		cfg.CurrentContext = "evil"
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		name := "evil-" + variant
		before := s.snapshot(t)
		defer s.compare(t, before)
		// Registered by hand, as a super admin would apply the Secret and Tenant (the
		// controller must refuse such a kubeconfig, not only `tenant add`).
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: itest.KubeconfigNS, Name: name + "-kubeconfig"},
			Data: map[string][]byte{"kubeconfig": data}}
		if err := s.c.Create(ctx, sec); err != nil {
			t.Fatal(err)
		}
		tn := &tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenancyv1alpha1.TenantSpec{
			KubeconfigSecretRef: tenancyv1alpha1.SecretKeyRef{Namespace: itest.KubeconfigNS, Name: sec.Name, Key: "kubeconfig"}, Weight: 1}}
		if err := s.c.Create(ctx, tn); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = s.c.Delete(ctx, tn)
			_ = s.c.Delete(ctx, sec)
		}()
		escaped := func() error {
			mu.Lock()
			defer mu.Unlock()
			if len(hits) > 0 {
				return fmt.Errorf("the syncer connected to the tenant-chosen server with a %s kubeconfig: %d requests, first %s", variant, len(hits), hits[0])
			}
			if _, err := os.Stat(marker); err == nil {
				return fmt.Errorf("the syncer ran the tenant's exec plugin")
			}
			return nil
		}
		// The refusal names what is refused (a clear error), not a failure to use it.
		keyword := map[string]string{"tokenfile-serviceaccount": "tokenfile", "tokenfile-local": "tokenfile", "exec": "exec"}[variant]
		invalid := func() (bool, string) {
			got := &tenancyv1alpha1.Tenant{}
			if err := s.c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
				return false, err.Error()
			}
			for _, c := range got.Status.Conditions {
				if c.Type == tenancyv1alpha1.ConditionKubeconfigValid {
					if c.Status == metav1.ConditionFalse {
						if !strings.Contains(strings.ToLower(c.Message), keyword) {
							return false, fmt.Sprintf("KubeconfigValid=False reason %s, but the message %q does not name the refused %s", c.Reason, c.Message, keyword)
						}
						t.Logf("KubeconfigValid=False reason %s: %s", c.Reason, c.Message)
						return true, ""
					}
					return false, fmt.Sprintf("KubeconfigValid=%s reason %s, phase %s", c.Status, c.Reason, got.Status.Phase)
				}
			}
			return false, fmt.Sprintf("no KubeconfigValid condition (phase %q)", got.Status.Phase)
		}
		deadline := time.Now().Add(maxWait)
		for {
			if err := escaped(); err != nil {
				t.Errorf("ATTACK ESCAPED: %v", err)
				if ok, why := invalid(); !ok {
					t.Errorf("and the Tenant is not refused: %s", why)
				}
				return
			}
			ok, why := invalid()
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("Tenant %s not refused within %s: %s", name, maxWait, why)
				return
			}
			time.Sleep(poll)
		}
		end := time.Now().Add(3 * time.Second)
		for time.Now().Before(end) {
			if err := escaped(); err != nil {
				t.Errorf("ATTACK ESCAPED after KubeconfigValid=False: %v", err)
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// attackPDB: a tenant PodDisruptionBudget maxUnavailable: 1 over a Deployment's Pod. Its
// super copy must not block super-cluster evictions (node drains): the super PDB must allow
// as many disruptions as the tenant's, and an eviction of the super Pod through the super
// API must succeed. A translation (or a refusal) needs no signal.
func (s *suite) attackPDB(t *testing.T) {
	ctx := context.Background()
	before := s.snapshot(t)
	defer s.compare(t, before)
	const name = "pdb-app"
	labels := map[string]string{"app": name}
	pod := basePod(name)
	pod.Labels = labels
	one := int32(1)
	if _, err := s.a.Client.AppsV1().Deployments(aNS).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mu := intstr.FromInt32(1)
	if _, err := s.a.Client.PolicyV1().PodDisruptionBudgets(aNS).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &mu, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	itest.Eventually(t, maxWait, "tenant A's PDB allows 1 disruption (its Deployment's Pod Ready)", func(ctx context.Context) error {
		p, err := s.a.Client.PolicyV1().PodDisruptionBudgets(aNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.DisruptionsAllowed != 1 {
			return itest.Errorf("disruptionsAllowed %d (status %+v)", p.Status.DisruptionsAllowed, p.Status)
		}
		return nil
	})
	var superPod string
	itest.Eventually(t, maxWait, "A's super Pod Running", func(ctx context.Context) error {
		pl, err := s.super.CoreV1().Pods(s.aSuperNS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return err
		}
		for _, p := range pl.Items {
			if p.Status.Phase == corev1.PodRunning {
				superPod = p.Name
				return nil
			}
		}
		return itest.Errorf("%d super Pods, none Running", len(pl.Items))
	})
	// The super disruption controller has looked at the super copy (if there is one).
	itest.Eventually(t, maxWait, "super PDB status observed", func(ctx context.Context) error {
		sp, err := s.super.PolicyV1().PodDisruptionBudgets(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if sp.Status.ObservedGeneration != sp.Generation {
			return itest.Errorf("observedGeneration %d of %d", sp.Status.ObservedGeneration, sp.Generation)
		}
		return nil
	})
	if sp, err := s.super.PolicyV1().PodDisruptionBudgets(s.aSuperNS).Get(ctx, name, metav1.GetOptions{}); err == nil && sp.Status.DisruptionsAllowed < 1 {
		t.Errorf("ATTACK ESCAPED: super PDB %s/%s allows %d disruptions while tenant A's allows 1 (conditions %+v): super Node drains are blocked",
			sp.Namespace, sp.Name, sp.Status.DisruptionsAllowed, sp.Status.Conditions)
	}
	// A super admin's eviction (a node drain) goes through.
	var last error
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		last = s.super.PolicyV1().Evictions(s.aSuperNS).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: superPod, Namespace: s.aSuperNS}})
		if last == nil || apierrors.IsNotFound(last) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("ATTACK ESCAPED: the super cluster cannot evict A's super Pod %s/%s: %v", s.aSuperNS, superPod, last)
}

// attackNamespaceCollision: two namespaces of A, one 63 characters long and the other equal to
// its cut super form minus the tenant prefix, map to the same super namespace. No
// create/delete loop: the super namespace keeps its UID for 10 s, and one of the two gets a
// namespaceCollision refusal (or, if the mapping no longer collides, both map to distinct,
// stable super namespaces).
func (s *suite) attackNamespaceCollision(t *testing.T) {
	ctx := context.Background()
	long := "collide-" + strings.Repeat("a", conversion.MaxNamespaceLength-len("collide-"))
	prefix := conversion.SuperNamespacePrefix(s.a.Name, s.aUID)
	s1 := conversion.SuperNamespace(s.a.Name, s.aUID, long)
	if !strings.HasPrefix(s1, prefix) {
		t.Fatalf("super namespace %s of %s lacks the tenant prefix %s", s1, long, prefix)
	}
	cut := s1[len(prefix):]
	s2 := conversion.SuperNamespace(s.a.Name, s.aUID, cut)
	t.Logf("tenant namespaces %s and %s map to %s and %s", long, cut, s1, s2)
	itest.MustCreateNS(t, s.a.Client, long)
	defer func() {
		_ = s.a.Client.CoreV1().Namespaces().Delete(ctx, cut, metav1.DeleteOptions{})
		_ = s.a.Client.CoreV1().Namespaces().Delete(ctx, long, metav1.DeleteOptions{})
	}()
	var uid string
	itest.Eventually(t, maxWait, "super namespace of "+long, func(ctx context.Context) error {
		ns, err := s.super.CoreV1().Namespaces().Get(ctx, s1, metav1.GetOptions{})
		if err != nil {
			return err
		}
		uid = string(ns.UID)
		return nil
	})
	stable := func(ctx context.Context) error {
		ns, err := s.super.CoreV1().Namespaces().Get(ctx, s1, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("super namespace %s of tenant namespace %s: %w (a create/delete loop)", s1, long, err)
		}
		if string(ns.UID) != uid {
			return fmt.Errorf("super namespace %s was deleted and recreated (UID %s → %s): a create/delete loop", s1, uid, ns.UID)
		}
		if !ns.DeletionTimestamp.IsZero() {
			return fmt.Errorf("super namespace %s of tenant namespace %s is being deleted (the other namespace's reconcile): a create/delete loop", s1, long)
		}
		return nil
	}
	start := time.Now()
	if s1 != s2 {
		before := s.snapshot(t)
		defer s.compare(t, before)
		itest.MustCreateNS(t, s.a.Client, cut)
		itest.Eventually(t, maxWait, "super namespace of "+cut, func(ctx context.Context) error {
			_, err := s.super.CoreV1().Namespaces().Get(ctx, s2, metav1.GetOptions{})
			return err
		})
	} else {
		s.run(t, attack{
			kind: "Namespace", names: []string{long, cut}, anyOf: true, rules: []string{"namespaceCollision"},
			create: func(ctx context.Context) error {
				_, err := s.a.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cut}}, metav1.CreateOptions{})
				return err
			},
			escaped: stable,
		})
	}
	for time.Since(start) < 10*time.Second && !t.Failed() {
		if err := stable(ctx); err != nil {
			t.Errorf("ATTACK ESCAPED: %v", err)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// attackObjectSize: a Secret or ConfigMap of about 1 MB (what the apiserver still accepts)
// over the syncer's cap on the bytes of one synced object: rule objectSize, no super copy.
func (s *suite) attackObjectSize(kind string) func(t *testing.T) {
	return func(t *testing.T) {
		name := "big-" + strings.ToLower(kind)
		payload := strings.Repeat("x", 1000*1000)
		s.run(t, attack{
			kind: kind, ns: aNS, names: []string{name}, rules: []string{"objectSize"},
			create: func(ctx context.Context) error {
				var err error
				if kind == "Secret" {
					_, err = s.a.Client.CoreV1().Secrets(aNS).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name},
						Data: map[string][]byte{"blob": []byte(payload)}}, metav1.CreateOptions{})
				} else {
					_, err = s.a.Client.CoreV1().ConfigMaps(aNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
						Data: map[string]string{"blob": payload}}, metav1.CreateOptions{})
				}
				return err
			},
			escaped: func(ctx context.Context) error {
				var err error
				if kind == "Secret" {
					_, err = s.super.CoreV1().Secrets(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
				} else {
					_, err = s.super.CoreV1().ConfigMaps(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
				}
				if err == nil {
					return fmt.Errorf("the 1 MB %s %s was copied to %s", kind, name, s.aSuperNS)
				}
				return nil
			},
		})
	}
}

// attackManyNodePorts: many NodePort Services would drain the super cluster's shared node
// port range: refused (rule serviceType by default; with NodePort allowed, the super
// namespace's quota caps services.nodeports).
func (s *suite) attackManyNodePorts(t *testing.T) {
	const n = 8
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("np-%d", i))
	}
	s.run(t, attack{
		kind: "Service", ns: aNS, names: names, rules: []string{"serviceType", "objectCount"},
		create: func(ctx context.Context) error {
			for _, name := range names {
				if _, err := s.a.Client.CoreV1().Services(aNS).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "x"}, Ports: []corev1.ServicePort{{Port: 80}}}},
					metav1.CreateOptions{}); err != nil {
					return err
				}
			}
			return nil
		},
		escaped: func(ctx context.Context) error {
			var got []string
			for _, name := range names {
				if ss, err := s.super.CoreV1().Services(s.aSuperNS).Get(ctx, name, metav1.GetOptions{}); err == nil && ss.Spec.Type == corev1.ServiceTypeNodePort {
					got = append(got, fmt.Sprintf("%s:%d", name, ss.Spec.Ports[0].NodePort))
				}
			}
			if len(got) > 0 {
				return fmt.Errorf("%d super NodePort Services took node ports: %v", len(got), got)
			}
			return nil
		},
	})
}

// checkQuotaAndLimits: every super namespace the syncer creates has a ResourceQuota (node
// ports, load balancers, storage) as a backstop of the tenant-wide budget, with no compute key
// that would make every container set requests or limits and no pods key (the budget alone
// counts Pods; with pods, the super apiserver writes the quota's status for every super Pod),
// and no LimitRange of the syncer's (it would change the tenant's Pods).
func (s *suite) checkQuotaAndLimits(t *testing.T) {
	for _, ns := range []string{s.aSuperNS, s.bSuperNS} {
		itest.Eventually(t, maxWait, "ResourceQuota and no LimitRange in "+ns, func(ctx context.Context) error {
			rq, err := s.super.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			lr, err := s.super.CoreV1().LimitRanges(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(rq.Items) == 0 {
				return itest.Errorf("no ResourceQuota: a tenant's object counts in the super cluster are unbounded")
			}
			if len(lr.Items) != 0 {
				return itest.Errorf("%d LimitRanges (%s): they change the tenant's Pods", len(lr.Items), lr.Items[0].Name)
			}
			for _, q := range rq.Items {
				for _, k := range []corev1.ResourceName{corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory} {
					if _, ok := q.Spec.Hard[k]; ok {
						return itest.Errorf("ResourceQuota %s has %s: every container would have to set it", q.Name, k)
					}
				}
				for _, k := range []corev1.ResourceName{corev1.ResourcePods, "count/pods"} {
					if _, ok := q.Spec.Hard[k]; ok {
						return itest.Errorf("ResourceQuota %s has %s: the super apiserver would write its status for every super Pod", q.Name, k)
					}
				}
			}
			hard := corev1.ResourceList{}
			for _, q := range rq.Items {
				for k, v := range q.Spec.Hard {
					hard[k] = v
				}
			}
			var missing []string
			for _, k := range []corev1.ResourceName{corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers, corev1.ResourceRequestsStorage} {
				if _, ok := hard[k]; !ok {
					missing = append(missing, string(k))
				}
			}
			if len(missing) > 0 {
				return itest.Errorf("the ResourceQuotas do not bound %v (hard %v)", missing, hard)
			}
			return nil
		})
	}
}
