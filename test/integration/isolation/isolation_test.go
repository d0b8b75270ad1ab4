package isolation

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vcsyncer/syncer/cmd/vc-syncer/app/options"
	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/pkg/localcluster"
	"github.com/vcsyncer/syncer/test/framework"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// unsandboxed is a RuntimeClass of the super cluster meant for the provider's own workloads;
// tenant A creates the same class in its control plane and names it.
const unsandboxed = "runc"

func TestIsolation(t *testing.T) {
	s := setUp(t)
	cases := []attackCase{
		// Storage.
		{"pvc-legacy-class-annotation-binds-other-tenants-pv", s.attackClaimLegacyAnnotation},
		{"ephemeral-legacy-class-annotation-binds-other-tenants-pv", s.attackEphemeralLegacyAnnotation},
		{"ephemeral-template-carries-syncer-stamps", s.attackEphemeralStamps},
		{"pvc-dataSourceRef-names-volume-populator", s.attackDataSourcePopulator},
		{"pvc-dataSourceRef-names-volumesnapshot", s.attackDataSourceRefSnapshot},
		// Node-level volumes.
		{"inline-nfs-volume", s.attackInlineVolume("nfs")},
		{"inline-iscsi-volume", s.attackInlineVolume("iscsi")},
		{"inline-fc-volume", s.attackInlineVolume("fc")},
		{"inline-flexVolume", s.attackInlineVolume("flexVolume")},
		{"inline-csi-volume-driver-not-allowed", s.attackInlineCSI},
		// Credentials from super-cluster signers.
		{"projected-podCertificate", s.attackProjected("podCertificate")},
		{"projected-clusterTrustBundle", s.attackProjected("clusterTrustBundle")},
		// Placement.
		{"toleration-CriticalAddonsOnly", s.attackToleration(corev1.Toleration{Key: criticalAddon, Operator: corev1.TolerationOpExists})},
		{"toleration-node-unschedulable", s.attackToleration(corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})},
		{"toleration-other-tenants-dedicated-nodes", s.attackToleration(corev1.Toleration{Key: dedicated, Operator: corev1.TolerationOpEqual, Value: "tenant-b", Effect: corev1.TaintEffectNoSchedule})},
		{"nodeSelector-system-node-label", s.attackNodeSelector},
		{"nodeAffinity-system-node-label", s.attackNodeAffinity},
		{"nodeAffinity-matchFields-node-outside-pool", s.attackMatchFields},
		{"runtimeClassName-not-allowed", s.attackRuntimeClass},
		{"schedulerName-not-allowed", s.attackSchedulerName},
		{"priorityClassName-system-node-critical", s.attackSystemPriority},
		// The syncer's own credentials.
		{"kubeconfig-tokenFile-serviceaccount-path", s.attackKubeconfig("tokenfile-serviceaccount")},
		{"kubeconfig-tokenFile-local-file", s.attackKubeconfig("tokenfile-local")},
		{"kubeconfig-exec-plugin", s.attackKubeconfig("exec")},
		// Blocking the super cluster.
		{"pdb-maxUnavailable-blocks-super-evictions", s.attackPDB},
		// Aiming Services anywhere.
		{"endpoints-other-tenants-pod-ip", s.attackEndpointsOtherPod},
		{"endpointslice-node-kubelet-ip", s.attackEndpointSliceNode},
		{"endpointslice-super-apiserver-service-ip", s.attackEndpointSliceSuperAPIServer},
		{"ingress-other-tenants-host", s.attackIngressHost},
		{"ingress-class-not-allowed", s.attackIngressClass},
		{"ingress-snippet-annotation", s.attackIngressSnippet},
		{"service-NodePort", s.attackServiceType(corev1.ServiceTypeNodePort)},
		{"service-LoadBalancer", s.attackServiceType(corev1.ServiceTypeLoadBalancer)},
		{"service-ExternalName-into-other-tenant", s.attackServiceType(corev1.ServiceTypeExternalName)},
		{"service-externalTrafficPolicy-Local", s.attackExternalTrafficPolicy},
		{"service-loadBalancerIP", s.attackLoadBalancerIP},
		{"service-loadBalancerClass", s.attackLoadBalancerClass},
		// Controller-domain label and annotation keys.
		{"metadataKey-service-load-balancer-annotations", s.attackServiceMetadataKeys},
		{"metadataKey-pod-istio-kata", s.attackPodMetadataKeys},
		{"metadataKey-serviceaccount-workload-identity", s.attackServiceAccountMetadataKeys},
		// Bounds.
		{"bounds-secret-over-size-cap", s.attackObjectSize("Secret")},
		{"bounds-configmap-over-size-cap", s.attackObjectSize("ConfigMap")},
		{"bounds-many-nodeport-services", s.attackManyNodePorts},
		{"bounds-super-namespace-has-quota-and-limits", s.checkQuotaAndLimits},
		// Namespace mapping.
		{"namespace-cut-form-collision", s.attackNamespaceCollision},
		// Per-tenant policy: B opts in to what A is refused.
		{"tenant-b-opts-in-with-its-own-policy", s.checkTenantOptsIn},
		// The syncer's blast radius and its metrics.
		{"syncer-token-refused-in-kube-system", s.checkSyncerTokenConfined},
		{"metrics-and-status-page-require-authentication", s.checkMetricsAuth},
	}
	// The walls around the super cluster's shared parts, one group per area (walls_*_test.go).
	cases = append(cases, s.podWalls()...)
	cases = append(cases, s.storageWalls()...)
	cases = append(cases, s.networkWalls()...)
	cases = append(cases, s.boundsWalls()...)
	cases = append(cases, s.shareWalls()...)
	cases = append(cases, s.reviewWalls()...)
	cases = append(cases, s.kubeletWalls()...)
	for _, tc := range cases {
		if !t.Run(tc.name, tc.run) {
			t.Logf("FAILED: %s", tc.name)
		}
	}
}

// attackCase is one subtest of TestIsolation.
type attackCase struct {
	name string
	run  func(*testing.T)
}

// setUp starts the environment, the syncer, registers A (tenant-1) and B (tenant-2) and
// creates B's workload and A's attack namespace.
func setUp(t *testing.T) *suite {
	t.Helper()
	ctx := context.Background()
	env := framework.StartT(t, localcluster.SuperOptions{Nodes: 3}, 2)
	port, kubeletPort := itest.FreePort(t), itest.FreePort(t)
	c := itest.StartSyncer(t, env.Super.RESTConfig, func(o *options.Options) {
		o.OptInKinds = []string{"Ingress", "NetworkPolicy", "PodDisruptionBudget"}
		o.MetricsBindAddress = fmt.Sprintf("127.0.0.1:%d", port)
		o.KubeletBindAddress = fmt.Sprintf("127.0.0.1:%d", kubeletPort)
	})
	s := &suite{env: env, c: c, super: env.Super.Client, a: env.Tenants[0], b: env.Tenants[1],
		aNS: aNS, metricsURL: fmt.Sprintf("127.0.0.1:%d", port), kubeletPort: kubeletPort}
	s.superQuiet, s.bQuiet = quietClient(t, env.Super.RESTConfig), quietClient(t, s.b.RESTConfig)
	for _, tc := range []*localcluster.ControlPlane{s.a, s.b} {
		if err := itest.AddTenant(ctx, c, itest.KubeconfigNS, tc, 1); err != nil {
			t.Fatal(err)
		}
	}
	s.setUpNodes(t)
	// A RuntimeClass of the provider's, and the same class in tenant A (the tenant apiserver's
	// RuntimeClass admission wants it to exist).
	for _, cs := range []kubernetes.Interface{s.super, s.a.Client} {
		if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: unsandboxed}, Handler: unsandboxed,
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	itest.WaitRunning(t, c, s.a.Name)
	itest.WaitRunning(t, c, s.b.Name)
	s.aUID, s.bUID = itest.TenantUID(t, c, s.a.Name), itest.TenantUID(t, c, s.b.Name)
	s.aSuperNS = conversion.SuperNamespace(s.a.Name, s.aUID, aNS)
	s.bSuperNS = conversion.SuperNamespace(s.b.Name, s.bUID, bNS)
	itest.MustCreateNS(t, s.a.Client, aNS)
	s.setUpB(t)
	itest.Eventually(t, time.Minute, "A's super namespace", func(ctx context.Context) error {
		_, err := s.super.CoreV1().Namespaces().Get(ctx, s.aSuperNS, metav1.GetOptions{})
		return err
	})
	t.Logf("tenant A = %s (uid %s, super namespace %s), tenant B = %s (uid %s, super namespace %s, Pod IP %s)",
		s.a.Name, s.aUID, s.aSuperNS, s.b.Name, s.bUID, s.bSuperNS, s.bPodIP)
	return s
}

// setUpNodes makes kwok-node-1 tenant B's dedicated Node (label and NoSchedule taint
// dedicated=tenant-b) and kwok-node-2 a control-plane Node (label
// node-role.kubernetes.io/control-plane, taints for it and CriticalAddonsOnly).
func (s *suite) setUpNodes(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for name, f := range map[string]func(n *corev1.Node){
		bNode: func(n *corev1.Node) {
			n.Labels[dedicated] = "tenant-b"
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: dedicated, Value: "tenant-b", Effect: corev1.TaintEffectNoSchedule})
		},
		systemNode: func(n *corev1.Node) {
			n.Labels[controlPlane] = ""
			n.Spec.Taints = append(n.Spec.Taints,
				corev1.Taint{Key: controlPlane, Effect: corev1.TaintEffectNoSchedule},
				corev1.Taint{Key: criticalAddon, Value: "true", Effect: corev1.TaintEffectNoSchedule})
		},
	} {
		itest.Eventually(t, maxWait, "label and taint Node "+name, func(ctx context.Context) error {
			n, err := s.super.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			f(n)
			_, err = s.super.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		})
	}
	_ = ctx
}

// setUpB creates tenant B's workload: a static PV labelled for B (made by the super admin), a
// claim bound to it, a Secret, a ConfigMap, a Pod with a Service and an Ingress; and waits
// until the claim is bound and the Pod runs in the super cluster.
func (s *suite) setUpB(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	itest.MustCreateNS(t, s.b.Client, bNS)
	if _, err := s.super.CoreV1().PersistentVolumes().Create(ctx, s.staticPV("b-disk", s.bUID), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := s.b.Client
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.CoreV1().PersistentVolumeClaims(bNS).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: bClaim},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr(""),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{}))
	must(b.CoreV1().Secrets(bNS).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bSecret},
		Data:       map[string][]byte{"password": []byte("tenant-b-secret")},
	}, metav1.CreateOptions{}))
	must(b.CoreV1().ConfigMaps(bNS).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: bConfig}, Data: map[string]string{"mode": "prod"},
	}, metav1.CreateOptions{}))
	p := basePod(bPod)
	p.Labels = map[string]string{"app": bPod}
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: bClaim}}}}
	must(b.CoreV1().Pods(bNS).Create(ctx, p, metav1.CreateOptions{}))
	must(b.CoreV1().Services(bNS).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: bService},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": bPod}, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}))
	must(b.NetworkingV1().Ingresses(bNS).Create(ctx, ingress(bService, bHost, nil), metav1.CreateOptions{}))

	itest.Eventually(t, 2*time.Minute, "B's claim bound to B's volume", func(ctx context.Context) error {
		c, err := b.CoreV1().PersistentVolumeClaims(bNS).Get(ctx, bClaim, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Status.Phase != corev1.ClaimBound {
			return itest.Errorf("phase %s", c.Status.Phase)
		}
		s.bClaimUID = string(c.UID)
		return nil
	})
	itest.Eventually(t, 2*time.Minute, "B's Pod running in the super cluster", func(ctx context.Context) error {
		sp, err := s.super.CoreV1().Pods(s.bSuperNS).Get(ctx, bPod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sp.Status.Phase != corev1.PodRunning || sp.Status.PodIP == "" {
			return itest.Errorf("phase %s IP %q", sp.Status.Phase, sp.Status.PodIP)
		}
		s.bPodIP = sp.Status.PodIP
		tp, err := b.CoreV1().Pods(bNS).Get(ctx, bPod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if tp.Status.Phase != corev1.PodRunning {
			return itest.Errorf("tenant Pod phase %s", tp.Status.Phase)
		}
		return nil
	})
	// Let B's status updates settle before the first snapshot.
	itest.Eventually(t, maxWait, "B's super Service has its endpoints", func(ctx context.Context) error {
		sl, err := s.super.DiscoveryV1().EndpointSlices(s.bSuperNS).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + bService})
		if err != nil {
			return err
		}
		if len(sl.Items) == 0 || len(sl.Items[0].Endpoints) == 0 {
			return itest.Errorf("no endpoints yet")
		}
		return nil
	})
}

// staticPV returns a super PersistentVolume for static binding (no class, 1Gi, RWO, an NFS
// source as a super admin would give) named SuperVolumeName of the owner's tenant and
// labelled LabelTenantUID=ownerUID.
func (s *suite) staticPV(name, ownerUID string) *corev1.PersistentVolume {
	tenantName := s.b.Name
	if ownerUID == s.aUID {
		tenantName = s.a.Name
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:   conversion.SuperVolumeName(tenantName, ownerUID, name),
			Labels: map[string]string{conversion.LabelTenantUID: ownerUID},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.3", Path: "/" + name}},
		},
	}
}

// ingress returns an Ingress name with one rule for host to Service name port 80.
func ingress(name, host string, class *string) *networkingv1.Ingress {
	pt := networkingv1.PathTypePrefix
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.IngressSpec{
			IngressClassName: class,
			Rules: []networkingv1.IngressRule{{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pt, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
			}}}},
		},
	}
}

// quietClient returns a clientset for cfg that drops API warnings.
func quietClient(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
