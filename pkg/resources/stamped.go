package resources

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vcsyncer/syncer/pkg/conversion"
)

// ObjectGetter reads one object by name (a namespaced lister, as reconcile.Getter).
type ObjectGetter[T metav1.Object] interface {
	Get(name string) (T, error)
}

// Stamped wraps a super lister so that objects without complete ownership stamps
// (conversion.OwnerOf false) read as NotFound. Super controllers copy labels, the syncer's
// managed-by label among them, from objects the syncer owns onto objects they write (the
// endpoints and EndpointSlice controllers copy a Service's labels), so the label-filtered super
// cache can hold objects that are not the syncer's; reconcilers of such kinds must not mistake
// them for conflicts or copies. A create at such a name still meets the object and reports a
// conflict (reconcile.Conflict). gr names the resource in the NotFound error.
func Stamped[T metav1.Object](g ObjectGetter[T], gr schema.GroupResource) ObjectGetter[T] {
	return stamped[T]{g: g, gr: gr}
}

type stamped[T metav1.Object] struct {
	g  ObjectGetter[T]
	gr schema.GroupResource
}

func (s stamped[T]) Get(name string) (T, error) {
	o, err := s.g.Get(name)
	if err != nil {
		return o, err
	}
	if _, ok := conversion.OwnerOf(o); !ok {
		var zero T
		return zero, apierrors.NewNotFound(s.gr, name)
	}
	return o, nil
}
