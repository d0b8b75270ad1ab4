package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// CreatePod creates pod in namespace ns through cs, as cs.CoreV1().Pods(ns).Create does, but
// does not decode the created Pod the apiserver answers with (a whole Pod, about 7 KB and
// 20 KB of allocations for a super Pod): for callers that only need to know whether the create
// succeeded. For an answer other than 2xx the error is what Create would return (an
// *apierrors.StatusError, so apierrors.IsAlreadyExists and the like work); a 2xx answer is
// success whatever its body (read, up to the client's body limit, and dropped), where Create
// would also fail on a body that does not decode. A clientset without a REST client
// (client-go's fake clientsets) goes through the typed client.
func CreatePod(ctx context.Context, cs kubernetes.Interface, ns string, pod *corev1.Pod, opts metav1.CreateOptions) error {
	rc, ok := cs.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, opts)
		return err
	}
	return rc.Post().Namespace(ns).Resource("pods").
		VersionedParams(&opts, scheme.ParameterCodec).Body(pod).Do(ctx).Error()
}

// UpdatePodStatus writes the status of pod, in namespace ns, through cs, as cs.CoreV1().Pods(ns).UpdateStatus does
// (a PUT of the whole Pod to its status subresource, with its resourceVersion as the
// precondition), without decoding the Pod the apiserver answers with. Errors as CreatePod's.
func UpdatePodStatus(ctx context.Context, cs kubernetes.Interface, ns string, pod *corev1.Pod, opts metav1.UpdateOptions) error {
	rc, ok := cs.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		_, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, opts)
		return err
	}
	return rc.Put().Namespace(ns).Resource("pods").Name(pod.Name).SubResource("status").
		VersionedParams(&opts, scheme.ParameterCodec).Body(pod).Do(ctx).Error()
}
