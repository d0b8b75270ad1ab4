package isolation

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podAttack runs a Pod attack: tenant A creates p; escaped is checked on its super Pod.
func (s *suite) podAttack(t *testing.T, p *corev1.Pod, rules []string, check func(p *corev1.Pod) error) {
	t.Helper()
	s.run(t, attack{
		kind: "Pod", ns: aNS, names: []string{p.Name}, rules: rules, superPod: p.Name,
		create: func(ctx context.Context) error {
			_, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, p, metav1.CreateOptions{})
			return err
		},
		escaped: s.podEscape(p.Name, func(sp *corev1.Pod) error {
			if err := check(sp); err != nil {
				return err
			}
			// Whatever the attack, A's Pods must not run on B's dedicated Node or a system Node.
			if sp.Spec.NodeName == bNode || sp.Spec.NodeName == systemNode {
				return fmt.Errorf("scheduled onto %s (tenant B's dedicated Node or a control-plane Node)", sp.Spec.NodeName)
			}
			return nil
		}),
	})
}

// inlineVolume returns a Pod volume of type typ (nfs, iscsi, fc, flexVolume).
func inlineVolume(typ string) corev1.VolumeSource {
	switch typ {
	case "nfs":
		return corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.9", Path: "/exports/tenant-b"}}
	case "iscsi":
		return corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "10.0.0.9:3260", IQN: "iqn.2001-04.com.example:storage.b", Lun: 0}}
	case "fc":
		return corev1.VolumeSource{FC: &corev1.FCVolumeSource{TargetWWNs: []string{"500a0982991b8dc5"}, Lun: ptr(int32(0))}}
	case "flexVolume":
		return corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{Driver: "example.com/lvm", Options: map[string]string{"volumeID": "tenant-b-data"}}}
	}
	panic("unknown volume type " + typ)
}

// hasVolume reports whether a volume source is of type typ.
func hasVolume(v corev1.VolumeSource, typ string) bool {
	switch typ {
	case "nfs":
		return v.NFS != nil
	case "iscsi":
		return v.ISCSI != nil
	case "fc":
		return v.FC != nil
	case "flexVolume":
		return v.FlexVolume != nil
	case "csi":
		return v.CSI != nil
	}
	return false
}

// attackInlineVolume: an inline node-level volume (nfs, iscsi, fc, flexVolume; Pod Security
// baseline allows them) must not reach the super Pod: rule volumeType.
func (s *suite) attackInlineVolume(typ string) func(t *testing.T) {
	return func(t *testing.T) {
		p := basePod("inline-" + strings.ToLower(typ))
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: inlineVolume(typ)}}
		s.podAttack(t, p, []string{"volumeType"}, func(sp *corev1.Pod) error {
			for _, v := range sp.Spec.Volumes {
				if hasVolume(v.VolumeSource, typ) {
					return fmt.Errorf("mounts an inline %s volume %s", typ, v.Name)
				}
			}
			return nil
		})
	}
}

// attackInlineCSI: an inline CSI volume with a driver the policy does not name: rule
// csiDriver (volumeType when inline CSI is off altogether).
func (s *suite) attackInlineCSI(t *testing.T) {
	p := basePod("inline-csi")
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
		Driver: "hostpath.csi.example.com", VolumeAttributes: map[string]string{"path": "/var/lib/kubelet"}}}}}
	s.podAttack(t, p, []string{"csiDriver", "volumeType"}, func(sp *corev1.Pod) error {
		for _, v := range sp.Spec.Volumes {
			if v.CSI != nil && v.CSI.Driver == "hostpath.csi.example.com" {
				return fmt.Errorf("mounts an inline CSI volume of driver %s", v.CSI.Driver)
			}
		}
		return nil
	})
}

// attackProjected: projected podCertificate and clusterTrustBundle sources resolve against
// the super cluster's signers and trust bundles under the super Pod's identity: rule
// credentialSource (or translated into a tenant-side equivalent — either way the super Pod
// must not carry the source).
func (s *suite) attackProjected(src string) func(t *testing.T) {
	return func(t *testing.T) {
		p := basePod("projected-" + strings.ToLower(src))
		var ps corev1.VolumeProjection
		switch src {
		case "podCertificate":
			ps.PodCertificate = &corev1.PodCertificateProjection{SignerName: "kubernetes.io/kube-apiserver-client-pod", KeyType: "ECDSAP256", CredentialBundlePath: "creds.pem"}
		case "clusterTrustBundle":
			ps.ClusterTrustBundle = &corev1.ClusterTrustBundleProjection{SignerName: ptr("example.com/internal-ca"), LabelSelector: &metav1.LabelSelector{}, Path: "ca.pem"}
		}
		p.Spec.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{ps}}}}}
		created := false
		s.run(t, attack{
			kind: "Pod", ns: aNS, names: []string{p.Name}, rules: []string{"credentialSource"}, superPod: p.Name,
			create: func(ctx context.Context) error {
				got, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, p, metav1.CreateOptions{})
				if err == nil {
					src := got.Spec.Volumes[0].Projected.Sources[0]
					created = src.PodCertificate != nil || src.ClusterTrustBundle != nil
					if !created {
						return fmt.Errorf("tenant apiserver dropped the %s source (feature gate off)", p.Name)
					}
				}
				return err
			},
			escaped: s.podEscape(p.Name, func(sp *corev1.Pod) error {
				for _, v := range sp.Spec.Volumes {
					if v.Projected == nil {
						continue
					}
					for _, ps := range v.Projected.Sources {
						if ps.PodCertificate != nil {
							return fmt.Errorf("projects a podCertificate from super-cluster signer %s", ps.PodCertificate.SignerName)
						}
						if ps.ClusterTrustBundle != nil {
							return fmt.Errorf("projects the super cluster's ClusterTrustBundles (signer %v)", ptrString(ps.ClusterTrustBundle.SignerName))
						}
					}
				}
				return nil
			}),
		})
	}
}

func ptrString(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// attackToleration: a toleration outside the allowlist (default: only not-ready/unreachable
// NoExecute). Filtered or refused: either way the super Pod must not carry it; the refusal
// is signalled with rule toleration.
func (s *suite) attackToleration(tol corev1.Toleration) func(t *testing.T) {
	return func(t *testing.T) {
		p := basePod("tolerate-" + strings.ToLower(strings.NewReplacer("/", "-", ".", "-").Replace(tol.Key)))
		p.Spec.Tolerations = []corev1.Toleration{tol}
		s.podAttack(t, p, []string{"toleration"}, func(sp *corev1.Pod) error {
			for _, st := range sp.Spec.Tolerations {
				if st.Key == tol.Key || st.Key == "" && st.Operator == corev1.TolerationOpExists {
					return fmt.Errorf("tolerates %s=%s:%s (%s)", st.Key, st.Value, st.Effect, st.Operator)
				}
			}
			return nil
		})
	}
}

// referencesSystemLabel reports a node selector or node affinity of the super Pod that
// names the control-plane label.
func referencesSystemLabel(sp *corev1.Pod) error {
	if _, ok := sp.Spec.NodeSelector[controlPlane]; ok {
		return fmt.Errorf("nodeSelector %v selects control-plane Nodes", sp.Spec.NodeSelector)
	}
	if a := sp.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		var terms []corev1.NodeSelectorTerm
		if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			terms = append(terms, r.NodeSelectorTerms...)
		}
		for _, p := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, p.Preference)
		}
		for _, term := range terms {
			for _, e := range term.MatchExpressions {
				if e.Key == controlPlane {
					return fmt.Errorf("node affinity on %s %s", e.Key, e.Operator)
				}
			}
			for _, e := range term.MatchFields {
				if e.Key == "metadata.name" {
					return fmt.Errorf("node affinity matchFields metadata.name %s %v", e.Operator, e.Values)
				}
			}
		}
	}
	return nil
}

// attackNodeSelector: a nodeSelector on a system Node label: rule nodePlacement.
func (s *suite) attackNodeSelector(t *testing.T) {
	p := basePod("select-system-node")
	p.Spec.NodeSelector = map[string]string{controlPlane: ""}
	s.podAttack(t, p, []string{"nodePlacement"}, referencesSystemLabel)
}

// attackNodeAffinity: required node affinity on a system Node label: rule nodePlacement.
func (s *suite) attackNodeAffinity(t *testing.T) {
	p := basePod("affinity-system-node")
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: controlPlane, Operator: corev1.NodeSelectorOpExists}}}},
	}}}
	s.podAttack(t, p, []string{"nodePlacement"}, referencesSystemLabel)
}

// attackMatchFields: node affinity matchFields metadata.name naming a Node outside A's pool
// (the control-plane Node): rule nodePlacement.
func (s *suite) attackMatchFields(t *testing.T) {
	p := basePod("matchfields-node-name")
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{systemNode}}}}},
	}}}
	s.podAttack(t, p, []string{"nodePlacement"}, referencesSystemLabel)
}

// attackRuntimeClass: runtimeClassName of an unsandboxed class the policy does not allow
// (the class exists in the super cluster for the provider's workloads): rule runtimeClass.
func (s *suite) attackRuntimeClass(t *testing.T) {
	p := basePod("runtime-unsandboxed")
	p.Spec.RuntimeClassName = ptr(unsandboxed)
	s.podAttack(t, p, []string{"runtimeClass"}, func(sp *corev1.Pod) error {
		if sp.Spec.RuntimeClassName != nil && *sp.Spec.RuntimeClassName == unsandboxed {
			return fmt.Errorf("runs with runtimeClassName %s", unsandboxed)
		}
		return nil
	})
}

// attackSchedulerName: a schedulerName other than the allowed ones: rule schedulerName.
func (s *suite) attackSchedulerName(t *testing.T) {
	p := basePod("scheduler-name")
	p.Spec.SchedulerName = "tenant-a-scheduler"
	s.podAttack(t, p, []string{"schedulerName"}, func(sp *corev1.Pod) error {
		if sp.Spec.SchedulerName == "tenant-a-scheduler" {
			return fmt.Errorf("is scheduled by %s", sp.Spec.SchedulerName)
		}
		return nil
	})
}

// attackSystemPriority: priorityClassName system-node-critical would let A preempt every other
// tenant's Pods. Existing behaviour: the class is not copied (the super Pod runs without it),
// or the Pod is refused (PriorityClassNotPublic, or PolicyDenied with rule priorityClass);
// no signal is required, the super Pod must not get the priority.
func (s *suite) attackSystemPriority(t *testing.T) {
	ctx := context.Background()
	before := s.snapshot(t)
	defer s.compare(t, before)
	p := basePod("system-node-critical")
	p.Spec.PriorityClassName = "system-node-critical"
	if _, err := s.a.Client.CoreV1().Pods(aNS).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("tenant A's apiserver refused the attack Pod: %v", err)
	}
	s.settled(t, "Pod", p.Name, func(ctx context.Context) error {
		sp, err := s.super.CoreV1().Pods(s.aSuperNS).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			evs, _ := s.a.Client.CoreV1().Events(aNS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
			for _, e := range evs.Items {
				if e.Reason == "PriorityClassNotPublic" {
					return nil
				}
			}
			return err
		}
		_ = sp
		return nil
	}, s.podEscape(p.Name, func(sp *corev1.Pod) error {
		if sp.Spec.PriorityClassName == "system-node-critical" || (sp.Spec.Priority != nil && *sp.Spec.Priority >= 1_000_000_000) {
			return fmt.Errorf("runs with priority class %q (priority %v)", sp.Spec.PriorityClassName, ptrInt(sp.Spec.Priority))
		}
		return nil
	}))
}

func ptrInt(p *int32) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}
