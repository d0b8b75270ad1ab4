package localcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Storage of the local super cluster. A real super cluster has a CSI driver and its external
// provisioner; the local one gets StorageClasses served by Provisioner, a goroutine that stands
// in for an external provisioner (volume provisioning is out of kube-controller-manager's
// hands for any non-in-tree provisioner name).
const (
	// Provisioner is the provisioner name of the super cluster's StorageClasses.
	Provisioner = "local.vcsyncer.io/hostpath"
	// DefaultStorageClass is the super cluster's default StorageClass (annotated
	// storageclass.kubernetes.io/is-default-class=true and public).
	DefaultStorageClass = "standard"
	// LabelPublic marks StorageClasses the syncer copies into every tenant (the value of
	// conversion.LabelPublic; not imported so the framework stays independent of the syncer).
	LabelPublic = "tenancy.vcsyncer.io/public"
	// hostPathRoot is where the (never mounted: kwok runs no containers) host paths would be.
	hostPathRoot = "/tmp/vc-syncer-pv/"
)

// SuperStorageClasses are the StorageClasses StartSuper creates, all with binding mode
// Immediate and reclaim policy Delete, served by Provisioner: "standard" (default, public),
// the GKE names "standard-rwo" and "premium-rwo" (public) used by real-world manifests, and
// "fast" (not public: the Cassandra example creates a tenant StorageClass of that name
// itself, which a public copy would collide with; the built-in tenant policy refuses claims
// naming it, rule storageClass, unless a TenantPolicy's storage.allowedStorageClassNames lists it).
var SuperStorageClasses = map[string]bool{ // name → public
	DefaultStorageClass: true, "standard-rwo": true, "premium-rwo": true, "fast": false,
}

// createStorageClasses creates SuperStorageClasses.
func createStorageClasses(ctx context.Context, client kubernetes.Interface) error {
	immediate := storagev1.VolumeBindingImmediate
	del := corev1.PersistentVolumeReclaimDelete
	for name, public := range SuperStorageClasses {
		sc := &storagev1.StorageClass{
			ObjectMeta:        metav1.ObjectMeta{Name: name},
			Provisioner:       Provisioner,
			ReclaimPolicy:     &del,
			VolumeBindingMode: &immediate,
		}
		if public {
			sc.Labels = map[string]string{LabelPublic: "true"}
		}
		if name == DefaultStorageClass {
			sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
		}
		if _, err := client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create StorageClass %s: %w", name, err)
		}
	}
	return nil
}

// runProvisioner provisions a hostPath PersistentVolume "pvc-<claim UID>" for every pending
// claim that the super cluster's PV controller hands to Provisioner (annotation
// volume.kubernetes.io/storage-provisioner), pre-bound to the claim, and deletes Released
// PVs it provisioned whose reclaim policy is Delete. It runs until ctx is done.
func runProvisioner(ctx context.Context, client kubernetes.Interface) error {
	f := informers.NewSharedInformerFactory(client, 0)
	claims := f.Core().V1().PersistentVolumeClaims().Informer()
	volumes := f.Core().V1().PersistentVolumes().Informer()
	work := make(chan any, 1024)
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { work <- o },
		UpdateFunc: func(_, n any) { work <- n },
	}
	if _, err := claims.AddEventHandler(handler); err != nil {
		return err
	}
	if _, err := volumes.AddEventHandler(handler); err != nil {
		return err
	}
	f.Start(ctx.Done())
	go func() {
		defer f.Shutdown()
		retry := time.NewTicker(2 * time.Second)
		defer retry.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case o := <-work:
				provisionStep(ctx, client, o)
			case <-retry.C: // claims whose PV create failed earlier
				for _, o := range claims.GetStore().List() {
					provisionStep(ctx, client, o)
				}
			}
		}
	}()
	return nil
}

func provisionStep(ctx context.Context, client kubernetes.Interface, obj any) {
	switch o := obj.(type) {
	case *corev1.PersistentVolumeClaim:
		if o.Spec.VolumeName != "" || o.Status.Phase != corev1.ClaimPending || !o.DeletionTimestamp.IsZero() ||
			o.Annotations["volume.kubernetes.io/storage-provisioner"] != Provisioner {
			return
		}
		_, err := client.CoreV1().PersistentVolumes().Create(ctx, provisionedVolume(ctx, client, o), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
			fmt.Printf("framework provisioner: failed to provision claim %s/%s: %v\n", o.Namespace, o.Name, err)
		}
	case *corev1.PersistentVolume:
		if o.Status.Phase != corev1.VolumeReleased || o.Annotations["pv.kubernetes.io/provisioned-by"] != Provisioner ||
			o.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || !o.DeletionTimestamp.IsZero() {
			return
		}
		uid := o.UID
		_ = client.CoreV1().PersistentVolumes().Delete(ctx, o.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	}
}

// provisionedVolume returns the PV for claim c: its requested size, access modes, volume mode
// and class, the class's reclaim policy, pre-bound to the claim.
func provisionedVolume(ctx context.Context, client kubernetes.Interface, c *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	class := c.Annotations["volume.beta.kubernetes.io/storage-class"]
	if c.Spec.StorageClassName != nil {
		class = *c.Spec.StorageClassName
	}
	policy := corev1.PersistentVolumeReclaimDelete
	if sc, err := client.StorageV1().StorageClasses().Get(ctx, class, metav1.GetOptions{}); err == nil && sc.ReclaimPolicy != nil {
		policy = *sc.ReclaimPolicy
	}
	name := "pvc-" + string(c.UID)
	hostPathType := corev1.HostPathDirectoryOrCreate
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": Provisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: c.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes: c.Spec.AccessModes,
			VolumeMode:  c.Spec.VolumeMode,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: hostPathRoot + name, Type: &hostPathType},
			},
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: c.UID,
			},
			PersistentVolumeReclaimPolicy: policy,
			StorageClassName:              class,
		},
	}
}
