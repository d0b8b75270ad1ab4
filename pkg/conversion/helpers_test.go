package conversion

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

type metaObj struct{ metav1.ObjectMeta }
