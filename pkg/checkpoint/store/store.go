package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Store persists one checkpoint blob. Save is atomic: a Load sees the old or the new blob,
// never a mix. The blob is opaque to the store; the checkpointer encodes it.
type Store interface {
	// Load returns the last saved blob. It returns (nil, nil) when no checkpoint was saved
	// yet, and an error wrapping ErrCorrupt when the stored data fails its checksum, is not
	// valid gzip, or (Secret store) a chunk is missing; the caller then cold-starts.
	Load(ctx context.Context) ([]byte, error)
	// Save replaces the stored blob with data. It returns an error wrapping ErrConflict when
	// a concurrent writer was fenced off (Secret store: the manifest's resourceVersion
	// precondition failed); the stored blob is then the other writer's.
	Save(ctx context.Context, data []byte) error
	// String names the store for logs and status, e.g. "file:/var/lib/x.ckpt" or
	// "secret:ns/name". It never contains checkpoint contents.
	String() string
}

var (
	// ErrCorrupt is wrapped by Load errors when the stored checkpoint cannot be trusted: a
	// checksum mismatch, invalid gzip, a size mismatch, an unreadable manifest or a missing
	// chunk. The checkpoint design (section 4.4) treats it as "no checkpoint": cold start.
	ErrCorrupt = errors.New("checkpoint is corrupt")
	// ErrConflict is wrapped by Save errors when another writer committed first (the
	// Secret store's manifest resourceVersion precondition failed, or the manifest changed
	// since this store last read or wrote it). It fences a stale leader (design R12).
	ErrConflict = errors.New("checkpoint was written concurrently by another holder")
)

// Options configures a Kubernetes-backed store.
type Options struct {
	// Holder is the identity of the writer (leader identity), recorded in the manifest and
	// used to recognise this writer's own earlier commits. Defaults to "" (not recorded, and
	// every commit by anyone else since the last Load or Save is a conflict).
	Holder string
	// Owner, if set, is added to the ownerReferences of every Secret the store creates
	// (for example the syncer Deployment), so they are garbage-collected with it.
	Owner *metav1.OwnerReference
}

// Parse builds a store from a --checkpoint-store value:
//
//   - "file:PATH": a File at PATH (see NewFile; the directory is created);
//   - "secret:NAMESPACE/NAME": a Secret store in the super cluster (see NewSecret); super
//     must not be nil;
//   - "none": no store; Parse returns (nil, nil).
//
// Anything else, an empty PATH, or an invalid namespace or name is an error.
func Parse(spec string, super kubernetes.Interface, o Options) (Store, error) {
	kind, arg, found := strings.Cut(spec, ":")
	switch {
	case spec == "none":
		return nil, nil
	case !found:
		return nil, fmt.Errorf("invalid checkpoint store %q: want file:PATH, secret:NAMESPACE/NAME or none", spec)
	case kind == "file":
		if arg == "" {
			return nil, fmt.Errorf("invalid checkpoint store %q: file: needs a path", spec)
		}
		return NewFile(arg)
	case kind == "secret":
		ns, name, ok := strings.Cut(arg, "/")
		if !ok {
			return nil, fmt.Errorf("invalid checkpoint store %q: want secret:NAMESPACE/NAME", spec)
		}
		if err := validateSecretRef(ns, name); err != nil {
			return nil, fmt.Errorf("invalid checkpoint store %q: %w", spec, err)
		}
		if super == nil {
			return nil, fmt.Errorf("checkpoint store %q needs a super-cluster client", spec)
		}
		return NewSecret(super, ns, name, o), nil
	default:
		return nil, fmt.Errorf("invalid checkpoint store %q: unknown kind %q, want file:PATH, secret:NAMESPACE/NAME or none", spec, kind)
	}
}
