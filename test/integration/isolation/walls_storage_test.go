package isolation

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vcsyncer/syncer/pkg/conversion"
	"github.com/vcsyncer/syncer/test/integration/itest"
)

// hiddenProvisioningClass is a super StorageClass that provisions but is not public (the
// local super cluster's "fast"); hiddenStaticClass is one the suite creates: not public,
// provisioner kubernetes.io/no-provisioner, binding mode Immediate.
const (
	hiddenProvisioningClass = "fast"
	hiddenStaticClass       = "hidden-local"
)

// storageWalls returns the attacks on claims, ephemeral claim templates, namespace and object metadata.
func (s *suite) storageWalls() []attackCase {
	return []attackCase{
		{"pvc-hidden-provisioning-class-binds-other-tenants-pv", s.attackHiddenClass(hiddenProvisioningClass)},
		{"pvc-hidden-static-class-binds-other-tenants-pv", s.attackHiddenClass(hiddenStaticClass)},
		{"pvc-volumeName-of-other-tenants-pv", s.attackVolumeNameOfB},
		{"pvc-empty-class-binds-other-tenants-pv", s.attackEmptyClass},
		{"ephemeral-hidden-provisioning-class-binds-other-tenants-pv", s.attackEphemeralHiddenClass},
		{"ephemeral-template-metadata-outside-allowlist", s.attackEphemeralMetadata},
		{"namespace-plain-labels-reach-super-namespace", s.attackNamespaceLabels},
		{"metadataKey-pod-provider-tool-annotations", s.attackProviderToolAnnotations},
	}
}

// baitPV creates, in the super cluster, an Available static PV labelled for tenant B in class
// (creating class first when it is hiddenStaticClass) and returns its name.
func (s *suite) baitPV(t *testing.T, name, class string) string {
	t.Helper()
	ctx := context.Background()
	if class == hiddenStaticClass {
		immediate := storagev1.VolumeBindingImmediate
		_, err := s.super.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: hiddenStaticClass}, Provisioner: conversion.NoProvisioner, VolumeBindingMode: &immediate,
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	pv := s.staticPV(name, s.bUID)
	pv.Spec.StorageClassName = class
	if _, err := s.super.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pv.Name
}

// attackHiddenClass: a claim names a super StorageClass that is not public (the tenant does
// not have its copy; A's apiserver takes any class name) and binds an Available static PV
// that the provider made for tenant B in that class (labelled with B's UID). A claim may name
// only public classes and those its policy allows: rule storageClass.
func (s *suite) attackHiddenClass(class string) func(t *testing.T) {
	return func(t *testing.T) {
		bait := s.baitPV(t, "bait-"+class, class)
		name := "hidden-class-" + class
		s.run(t, attack{
			kind: "PersistentVolumeClaim", ns: aNS, names: []string{name}, rules: []string{"storageClass"},
			create: func(ctx context.Context) error {
				cl := class
				_, err := s.a.Client.CoreV1().PersistentVolumeClaims(aNS).Create(ctx, &corev1.PersistentVolumeClaim{
					ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: claimSpec(&cl)}, metav1.CreateOptions{})
				return err
			},
			escaped: s.baitEscape(bait),
		})
	}
}

// attackVolumeNameOfB: a claim presets spec.volumeName to the super name of B's Available
// static PV (class ""). The name is mapped into A's part of the PV name space, so the claim
// waits for a PV that does not exist (no signal needed: a translation).
func (s *suite) attackVolumeNameOfB(t *testing.T) {
	ctx := context.Background()
	bait := s.baitPV(t, "bait-volume-name", "")
	before := s.snapshot(t)
	defer s.compare(t, before)
	const name = "volume-name-of-b"
	spec := claimSpec(ptr(""))
	spec.VolumeName = bait
	if _, err := s.a.Client.CoreV1().PersistentVolumeClaims(aNS).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("tenant A's apiserver refused the attack claim: %v", err)
	}
	s.settled(t, "PersistentVolumeClaim", name, func(ctx context.Context) error {
		c, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Spec.VolumeName == bait {
			return fmt.Errorf("super claim %s/%s names B's volume %s", c.Namespace, c.Name, bait)
		}
		return nil
	}, s.baitEscape(bait))
}

// attackEmptyClass: a claim of class "" (static binding) must bind only PVs labelled for A,
// never B's Available one: the super claim is confined by a selector (a translation, no
// signal).
func (s *suite) attackEmptyClass(t *testing.T) {
	ctx := context.Background()
	bait := s.baitPV(t, "bait-empty-class", "")
	before := s.snapshot(t)
	defer s.compare(t, before)
	const name = "empty-class"
	if _, err := s.a.Client.CoreV1().PersistentVolumeClaims(aNS).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: claimSpec(ptr(""))}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("tenant A's apiserver refused the attack claim: %v", err)
	}
	s.settled(t, "PersistentVolumeClaim", name, func(ctx context.Context) error {
		_, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(ctx, name, metav1.GetOptions{})
		return err
	}, s.baitEscape(bait))
}

// attackEphemeralHiddenClass: a generic ephemeral volume whose template names the hidden
// provisioning class binds B's Available PV of that class through the super cluster's
// ephemeral-volume controller. The Pod is refused: rule storageClass.
func (s *suite) attackEphemeralHiddenClass(t *testing.T) {
	bait := s.baitPV(t, "bait-ephemeral-hidden", hiddenProvisioningClass)
	class := hiddenProvisioningClass
	p := basePod("eph-hidden-class")
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: claimSpec(&class)}}}}}
	escapeBait := s.baitEscape(bait)
	s.podAttack(t, p, []string{"storageClass"}, func(sp *corev1.Pod) error {
		return escapeBait(context.Background())
	})
}

// ephemeralKeys are label and annotation keys that super-cluster controllers act on when they
// find them on a claim: a provisioner's templated secret references, backup selection, a
// load-balancer pool.
var ephemeralKeys = []string{"example.com/provisioner-secret-namespace", "backup.velero.io/backup-volumes",
	"metallb.universe.tf/address-pool", "velero.io/exclude-from-backup"}

// attackEphemeralMetadata: a generic ephemeral volume's claim template carries keys outside
// the metadata allowlist; the super cluster's ephemeral-volume controller would copy them onto
// the super claim. Templates go through the same allowlist as claims: rule metadataKey (the
// Pod is synced without them).
func (s *suite) attackEphemeralMetadata(t *testing.T) {
	class := "standard"
	p := basePod("eph-metadata")
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{
				Labels: map[string]string{ephemeralKeys[3]: "true", "tier": "db"},
				Annotations: map[string]string{ephemeralKeys[0]: "kube-system", ephemeralKeys[1]: "data",
					ephemeralKeys[2]: "provider-pool"},
			},
			Spec: claimSpec(&class),
		}}}}}
	claim := p.Name + "-data"
	s.podAttack(t, p, []string{"metadataKey"}, func(sp *corev1.Pod) error {
		for _, v := range sp.Spec.Volumes {
			if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
				if err := forbiddenKeys("claim template labels", e.VolumeClaimTemplate.Labels, ephemeralKeys); err != nil {
					return err
				}
				if err := forbiddenKeys("claim template annotations", e.VolumeClaimTemplate.Annotations, ephemeralKeys); err != nil {
					return err
				}
			}
		}
		c, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(context.Background(), claim, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		if err := forbiddenKeys("super claim "+claim+" labels", c.Labels, ephemeralKeys); err != nil {
			return err
		}
		return forbiddenKeys("super claim "+claim+" annotations", c.Annotations, ephemeralKeys)
	})
	// Allowed keys still reach the super claim.
	itest.Eventually(t, maxWait, "allowed label tier=db on the super claim "+claim, func(ctx context.Context) error {
		c, err := s.super.CoreV1().PersistentVolumeClaims(s.aSuperNS).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.Labels["tier"] != "db" {
			return itest.Errorf("labels %v", c.Labels)
		}
		return nil
	})
}

// mappedNSLabelDomain is the prefix under which tenant namespace labels reach super
// namespaces ("team" → ns.tenancy.vcsyncer.io/team).
const mappedNSLabelDomain = "ns." + conversion.Domain

// nsKeys are plain label keys that super-cluster policies and webhooks select namespaces by.
var nsKeys = []string{"name", "istio-injection"}

// attackNamespaceLabels: a tenant namespace labelled name=kube-system and
// istio-injection=enabled. Super NetworkPolicies selecting namespaces by "name" and the
// mesh's injection webhook would act on its super namespace. Tenant namespace labels reach
// the super namespace only under the syncer's mapped keys (a translation, no signal).
func (s *suite) attackNamespaceLabels(t *testing.T) {
	ctx := context.Background()
	before := s.snapshot(t)
	defer s.compare(t, before)
	const ns = "attack-ns-labels"
	if _, err := s.a.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{nsKeys[0]: "kube-system", nsKeys[1]: "enabled"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	superNS := s.superNSOf(ns)
	s.settled(t, "Namespace", ns, func(ctx context.Context) error {
		sns, err := s.super.CoreV1().Namespaces().Get(ctx, superNS, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if k := mappedNSLabelDomain + "/name"; sns.Labels[k] != "kube-system" {
			return itest.Errorf("super namespace %s has no mapped label %s=kube-system: labels %v", superNS, k, sns.Labels)
		}
		return nil
	}, func(ctx context.Context) error {
		sns, err := s.super.CoreV1().Namespaces().Get(ctx, superNS, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		if err := forbiddenKeys("labels", sns.Labels, nsKeys); err != nil {
			return fmt.Errorf("super namespace %s: %w", superNS, err)
		}
		return nil
	})
}

// toolKeys are annotations that the super cluster's own tools act on: Prometheus scrape
// configuration, Helm's release ownership, Argo CD's and Helm's instance tracking.
var toolKeys = []string{"prometheus.io/scrape", "prometheus.io/port", "meta.helm.sh/release-name",
	"meta.helm.sh/release-namespace", "app.kubernetes.io/instance"}

// attackProviderToolAnnotations: a Pod annotated for the super cluster's Prometheus and Helm
// (scrape it, count it as part of a provider's release). Those annotations are not in the
// built-in allowlist: rule metadataKey (the Pod is synced without them). The label
// app.kubernetes.io/instance, which Service selectors use, still reaches the super Pod.
func (s *suite) attackProviderToolAnnotations(t *testing.T) {
	p := basePod("tool-annotations")
	p.Labels["app.kubernetes.io/instance"] = "web"
	p.Annotations = map[string]string{toolKeys[0]: "true", toolKeys[1]: "10250", toolKeys[2]: "ingress-nginx",
		toolKeys[3]: "ingress-nginx", toolKeys[4]: "provider-release"}
	s.podAttack(t, p, []string{"metadataKey"}, func(sp *corev1.Pod) error {
		return forbiddenKeys("annotations", sp.Annotations, toolKeys)
	})
	itest.Eventually(t, maxWait, "label app.kubernetes.io/instance on the super Pod", func(ctx context.Context) error {
		sp, err := s.super.CoreV1().Pods(s.aSuperNS).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sp.Labels["app.kubernetes.io/instance"] != "web" {
			return itest.Errorf("labels %v", sp.Labels)
		}
		return nil
	})
}
