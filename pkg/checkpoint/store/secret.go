package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Labels and annotations on the Secrets of a Secret store.
const (
	// LabelManagedBy marks every Secret the store creates; it never reads, changes or deletes
	// a Secret without it. It is deliberately not the syncer's tenancy.vcsyncer.io/managed-by
	// label, which marks super copies of tenant objects.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy.
	ManagedByValue = "vc-syncer"
	// LabelID holds the store's name (the manifest Secret's name) on the manifest and its chunks.
	LabelID = "checkpoint.tenancy.vcsyncer.io/id"
	// LabelGeneration holds the checkpoint generation (decimal) of a chunk or manifest.
	LabelGeneration = "checkpoint.tenancy.vcsyncer.io/generation"
	// LabelRole is RoleManifest or RoleChunk.
	LabelRole = "checkpoint.tenancy.vcsyncer.io/role"
	// RoleManifest and RoleChunk are the values of LabelRole.
	RoleManifest = "manifest"
	RoleChunk    = "chunk"
	// AnnotationHolder on the manifest names the holder (Options.Holder) of the last commit.
	AnnotationHolder = "checkpoint.tenancy.vcsyncer.io/holder"
)

// ChunkBytes is the largest chunk of compressed checkpoint stored in one Secret (900 KiB),
// below the 1 MiB limit on a Secret's data (k8s.io/api core/v1 MaxSecretSize) with room for
// metadata.
const ChunkBytes = 900 * 1024

const (
	manifestKey    = "manifest" // data key of the manifest Secret
	chunkKey       = "chunk"    // data key of a chunk Secret
	manifestFormat = 1
	// loadAttempts bounds how often Load re-reads a manifest that moved on while its chunks
	// were read (a concurrent Save deletes the previous generation's chunks).
	loadAttempts = 3
)

// manifest is the content of the manifest Secret: it names the chunks of the committed
// generation. It holds checksums and sizes only, never checkpoint contents.
type manifest struct {
	Format     int    `json:"format"`
	Generation int64  `json:"generation"`
	Holder     string `json:"holder,omitempty"`
	// Size is the length of the uncompressed blob in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex sha256 of the whole gzip stream (the chunks concatenated).
	SHA256  string     `json:"sha256"`
	Chunks  []chunkRef `json:"chunks"`
	SavedAt time.Time  `json:"savedAt"`
}

// chunkRef names one chunk Secret and its content's sha256 and length in bytes.
type chunkRef struct {
	Name   string    `json:"name"`
	UID    types.UID `json:"uid"`
	SHA256 string    `json:"sha256"`
	Size   int       `json:"size"`
}

// Secret stores the checkpoint in Secrets of the super cluster, chunked under the 1 MiB
// object limit (design section 4.4):
//
//  1. the blob is gzipped and split into chunks of at most ChunkBytes, each created as an
//     immutable Secret "<name>-g<generation>-<i>";
//  2. the manifest Secret "<name>" is then created, or updated with its resourceVersion as
//     precondition, to name the new generation's chunks with their sha256 — this one write
//     is the commit point;
//  3. the previous generation's chunks, and chunks left by failed saves, are deleted (best
//     effort; leftovers are swept by a later Save).
//
// Load reads the manifest, then its chunks, and verifies every checksum. Every Secret carries
// LabelManagedBy=ManagedByValue and LabelID=name, type Opaque, and Options.Owner as owner
// reference when set; Secrets without these labels are never read, changed or deleted.
//
// Fencing (design R12): Save commits only if the manifest is still the version this store
// last loaded or saved (or a version committed under the same Options.Holder); otherwise it
// returns ErrConflict and adopts the current version, so a later Save can succeed. Two
// concurrent Saves never both commit: the manifest precondition admits one.
//
// The store needs get, list, create, update and delete on Secrets in its namespace. Methods
// are safe for concurrent use; Saves of one Secret are serialised.
type Secret struct {
	client    kubernetes.Interface
	namespace string
	name      string
	opts      Options
	err       error // invalid namespace or name, reported by Load and Save
	chunkSize int

	mu          sync.Mutex // serialises Save; guards the fields below
	view        string     // manifest resourceVersion last loaded or saved; valid if hasView
	hasView     bool
	sweepNeeded bool // list chunks before the next commit and delete stale ones after it

	// afterChunks, if set, runs after all chunks of a Save are created and before the
	// manifest is written. A non-nil error aborts Save as a crash would (no cleanup). Tests only.
	afterChunks func() error
}

var _ Store = (*Secret)(nil)

// NewSecret returns a Secret store whose manifest is the Secret namespace/name in the cluster
// of client (the super cluster). name must be a DNS subdomain of at most 63 characters (it is
// also a label value); an invalid namespace or name makes every Load and Save fail.
func NewSecret(client kubernetes.Interface, namespace, name string, o Options) *Secret {
	return &Secret{
		client:      client,
		namespace:   namespace,
		name:        name,
		opts:        o,
		err:         validateSecretRef(namespace, name),
		chunkSize:   ChunkBytes,
		sweepNeeded: true, // a previous process may have crashed before its commit
	}
}

// validateSecretRef checks a Secret store's namespace (DNS label) and name (DNS subdomain that
// is also a label value).
func validateSecretRef(namespace, name string) error {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return fmt.Errorf("invalid namespace %q: %v", namespace, errs)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("invalid Secret name %q: %v", name, errs)
	}
	if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
		return fmt.Errorf("invalid Secret name %q: %v", name, errs)
	}
	return nil
}

// String returns "secret:" and namespace/name.
func (s *Secret) String() string { return "secret:" + s.namespace + "/" + s.name }

func (s *Secret) secrets() corev1client.SecretInterface {
	return s.client.CoreV1().Secrets(s.namespace)
}

// chunkName returns the name of chunk i of generation gen.
func (s *Secret) chunkName(gen int64, i int) string {
	return s.name + "-g" + strconv.FormatInt(gen, 10) + "-" + strconv.Itoa(i)
}

// chunkNameRE matches the names chunkName produces for this store.
func (s *Secret) chunkNameRE() *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(s.name) + `-g[1-9][0-9]*-(0|[1-9][0-9]*)$`)
}

// owned reports whether obj carries this store's labels with the given role.
func (s *Secret) owned(obj *corev1.Secret, role string) bool {
	l := obj.Labels
	return l[LabelManagedBy] == ManagedByValue && l[LabelID] == s.name && l[LabelRole] == role
}

// labels returns the labels of a Secret with the given role and generation.
func (s *Secret) labels(role string, gen int64) map[string]string {
	return map[string]string{
		LabelManagedBy:  ManagedByValue,
		LabelID:         s.name,
		LabelRole:       role,
		LabelGeneration: strconv.FormatInt(gen, 10),
	}
}

func (s *Secret) ownerRefs() []metav1.OwnerReference {
	if s.opts.Owner == nil {
		return nil
	}
	return []metav1.OwnerReference{*s.opts.Owner}
}

// Load returns the blob of the committed generation, (nil, nil) if the manifest Secret does
// not exist, or an error wrapping ErrCorrupt if the manifest is unreadable, a chunk is missing
// or not this store's, or a checksum or size does not match. When the manifest changed while
// its chunks were read (a concurrent Save committed a newer generation and deleted the old
// chunks), Load starts over with the new manifest instead (up to 3 attempts). It fails without ErrCorrupt when the apiserver cannot be read or the manifest Secret
// exists but is not managed by this store.
func (s *Secret) Load(ctx context.Context) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	for attempt := 1; ; attempt++ {
		cur, err := s.secrets().Get(ctx, s.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read checkpoint manifest %s: %w", s, err)
		}
		if !s.owned(cur, RoleManifest) {
			return nil, fmt.Errorf("checkpoint manifest %s exists but is not managed by %s", s, ManagedByValue)
		}
		data, err := s.loadGeneration(ctx, cur)
		if errors.Is(err, ErrCorrupt) && attempt < loadAttempts {
			now, gerr := s.secrets().Get(ctx, s.name, metav1.GetOptions{})
			if gerr == nil && now.ResourceVersion != cur.ResourceVersion {
				continue // a newer generation was committed meanwhile
			}
		}
		if err != nil {
			return nil, fmt.Errorf("failed to load checkpoint %s: %w", s, err)
		}
		s.mu.Lock()
		s.view, s.hasView = cur.ResourceVersion, true
		s.mu.Unlock()
		return data, nil
	}
}

// chunkGoneError reports a chunk the manifest names but the apiserver does not have.
type chunkGoneError struct{ name string }

func (e *chunkGoneError) Error() string { return fmt.Sprintf("chunk Secret %s is missing", e.name) }
func (e *chunkGoneError) Unwrap() error { return ErrCorrupt }

// loadGeneration reads and verifies the chunks named by the manifest Secret m.
func (s *Secret) loadGeneration(ctx context.Context, m *corev1.Secret) ([]byte, error) {
	man, err := parseManifest(m.Data[manifestKey])
	if err != nil {
		return nil, err
	}
	nameRE := s.chunkNameRE()
	var gz []byte
	for i, ref := range man.Chunks {
		if ref.Name != s.chunkName(man.Generation, i) || !nameRE.MatchString(ref.Name) {
			return nil, fmt.Errorf("%w: manifest names an unexpected chunk %q", ErrCorrupt, ref.Name)
		}
		c, err := s.secrets().Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, &chunkGoneError{name: ref.Name}
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read chunk Secret %s: %w", ref.Name, err)
		}
		if !s.owned(c, RoleChunk) || c.Labels[LabelGeneration] != strconv.FormatInt(man.Generation, 10) || (ref.UID != "" && c.UID != ref.UID) {
			return nil, fmt.Errorf("%w: chunk Secret %s does not belong to generation %d", ErrCorrupt, ref.Name, man.Generation)
		}
		b := c.Data[chunkKey]
		if len(b) != ref.Size || hexSum(b) != ref.SHA256 {
			return nil, fmt.Errorf("%w: chunk Secret %s fails its sha256", ErrCorrupt, ref.Name)
		}
		gz = append(gz, b...)
	}
	if hexSum(gz) != man.SHA256 {
		return nil, fmt.Errorf("%w: sha256 of generation %d does not match its manifest", ErrCorrupt, man.Generation)
	}
	data, err := decompress(gz, man.Size)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != man.Size {
		return nil, fmt.Errorf("%w: generation %d has %d bytes, manifest says %d", ErrCorrupt, man.Generation, len(data), man.Size)
	}
	return data, nil
}

// parseManifest decodes and checks a manifest; every error wraps ErrCorrupt.
func parseManifest(b []byte) (*manifest, error) {
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: unreadable manifest: %w", ErrCorrupt, err)
	}
	switch {
	case m.Format != manifestFormat:
		return nil, fmt.Errorf("%w: unknown manifest format %d", ErrCorrupt, m.Format)
	case m.Generation < 1:
		return nil, fmt.Errorf("%w: invalid manifest generation %d", ErrCorrupt, m.Generation)
	case m.Size < 0 || m.Size > maxBlobBytes:
		return nil, fmt.Errorf("%w: invalid manifest size %d", ErrCorrupt, m.Size)
	case len(m.Chunks) == 0:
		return nil, fmt.Errorf("%w: manifest names no chunks", ErrCorrupt)
	}
	return &m, nil
}

func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Save commits data as a new generation (see Secret). It returns an error wrapping
// ErrConflict when the manifest changed since this store last loaded or saved it (under a
// different holder), when another writer is creating the same generation, or when the
// manifest precondition fails; the chunks of a refused Save are deleted. Other errors leave
// the previous checkpoint committed (or, when the manifest update's outcome is unknown, maybe
// the new one); their leftovers are swept by a later Save. Data larger than 1 GiB is refused.
func (s *Secret) Save(ctx context.Context, data []byte) error {
	if s.err != nil {
		return s.err
	}
	if len(data) > maxBlobBytes {
		return fmt.Errorf("checkpoint of %d bytes exceeds the limit of %d bytes", len(data), maxBlobBytes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	cur, err := s.secrets().Get(ctx, s.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cur = nil
	case err != nil:
		return fmt.Errorf("failed to read checkpoint manifest %s: %w", s, err)
	case !s.owned(cur, RoleManifest):
		return fmt.Errorf("checkpoint manifest %s exists but is not managed by %s", s, ManagedByValue)
	}
	var prev *manifest
	var gen int64 = 1
	if cur != nil {
		holder := cur.Annotations[AnnotationHolder]
		if s.hasView && cur.ResourceVersion != s.view && (s.opts.Holder == "" || holder != s.opts.Holder) {
			s.view = cur.ResourceVersion
			return fmt.Errorf("%w: %s was committed by %q since this writer last read it", ErrConflict, s, holder)
		}
		if prev, err = parseManifest(cur.Data[manifestKey]); err == nil {
			gen = prev.Generation + 1
		} else {
			prev = nil
			s.sweepNeeded = true // generation unknown: look at the chunks
			if g, perr := strconv.ParseInt(cur.Labels[LabelGeneration], 10, 64); perr == nil && g > 0 {
				gen = g + 1
			}
		}
	}

	// Chunks present before this commit, found by the label sweep; stale after it.
	var stale []corev1.Secret
	sweeping := s.sweepNeeded
	if sweeping {
		list, err := s.secrets().List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{
			LabelManagedBy: ManagedByValue, LabelID: s.name, LabelRole: RoleChunk,
		}).String()})
		if err != nil {
			return fmt.Errorf("failed to list chunk Secrets of %s: %w", s, err)
		}
		for _, c := range list.Items {
			g, perr := strconv.ParseInt(c.Labels[LabelGeneration], 10, 64)
			if perr != nil {
				continue
			}
			if g >= gen {
				gen = g + 1 // never reuse the generation of a failed or concurrent save
			}
			stale = append(stale, c)
		}
	}

	gz := compress(data)
	man := manifest{
		Format: manifestFormat, Generation: gen, Holder: s.opts.Holder,
		Size: int64(len(data)), SHA256: hexSum(gz), SavedAt: time.Now().UTC(),
	}
	for i, off := 0, 0; off < len(gz); i, off = i+1, off+s.chunkSize {
		part := gz[off:min(off+s.chunkSize, len(gz))]
		immutable := true
		c, err := s.secrets().Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: s.chunkName(gen, i), Namespace: s.namespace,
				Labels: s.labels(RoleChunk, gen), OwnerReferences: s.ownerRefs(),
			},
			Type:      corev1.SecretTypeOpaque,
			Immutable: &immutable,
			Data:      map[string][]byte{chunkKey: part},
		}, metav1.CreateOptions{})
		if err != nil {
			s.deleteChunks(ctx, man.Chunks)
			s.sweepNeeded = true
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%w: another writer is saving generation %d of %s", ErrConflict, gen, s)
			}
			return fmt.Errorf("failed to create chunk Secret %s: %w", s.chunkName(gen, i), err)
		}
		man.Chunks = append(man.Chunks, chunkRef{Name: c.Name, UID: c.UID, SHA256: hexSum(part), Size: len(part)})
	}
	if s.afterChunks != nil {
		if err := s.afterChunks(); err != nil {
			return err // simulated crash: chunks stay behind as orphans
		}
	}

	committed, err := s.commit(ctx, cur, &man)
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			// The write certainly did not happen: our chunks are garbage.
			s.deleteChunks(ctx, man.Chunks)
			s.hasView = false // re-read on the next Save
			return fmt.Errorf("%w: %s was committed by another writer first", ErrConflict, s)
		}
		// The update may have been applied with its response lost: keep the chunks; the
		// next Save recognises its own holder or sweeps them.
		s.sweepNeeded = true
		return fmt.Errorf("failed to commit checkpoint manifest %s: %w", s, err)
	}
	s.view, s.hasView = committed.ResourceVersion, true

	// Delete what this commit superseded: the previous generation and, after a sweep,
	// every chunk of an older generation (failed or refused saves).
	ok := true
	if prev != nil && prev.Generation != gen {
		ok = s.deleteChunks(ctx, prev.Chunks)
	}
	if sweeping {
		for i := range stale {
			c := &stale[i]
			g, _ := strconv.ParseInt(c.Labels[LabelGeneration], 10, 64)
			if g < gen && !s.deleteChunk(ctx, c.Name, c.UID) {
				ok = false
			}
		}
	}
	s.sweepNeeded = !ok
	return nil
}

// commit writes the manifest for man: Create when cur is nil, otherwise Update with cur's
// resourceVersion as precondition. It returns the written Secret.
func (s *Secret) commit(ctx context.Context, cur *corev1.Secret, man *manifest) (*corev1.Secret, error) {
	b, err := json.Marshal(man)
	if err != nil {
		return nil, fmt.Errorf("failed to encode checkpoint manifest: %w", err)
	}
	if cur == nil {
		return s.secrets().Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: s.name, Namespace: s.namespace,
				Labels:          s.labels(RoleManifest, man.Generation),
				Annotations:     map[string]string{AnnotationHolder: man.Holder},
				OwnerReferences: s.ownerRefs(),
			},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{manifestKey: b},
		}, metav1.CreateOptions{})
	}
	upd := cur.DeepCopy() // keeps cur.ResourceVersion: the optimistic-concurrency precondition
	for k, v := range s.labels(RoleManifest, man.Generation) {
		upd.Labels[k] = v
	}
	if upd.Annotations == nil {
		upd.Annotations = map[string]string{}
	}
	upd.Annotations[AnnotationHolder] = man.Holder
	if o := s.opts.Owner; o != nil && !hasOwner(upd.OwnerReferences, o.UID) {
		upd.OwnerReferences = append(upd.OwnerReferences, *o)
	}
	upd.Data = map[string][]byte{manifestKey: b}
	upd.StringData = nil
	return s.secrets().Update(ctx, upd, metav1.UpdateOptions{})
}

func hasOwner(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// deleteChunks deletes the chunk Secrets refs names (only names this store generates, with
// their UID as precondition when known). It reports whether all are gone.
func (s *Secret) deleteChunks(ctx context.Context, refs []chunkRef) bool {
	ok := true
	nameRE := s.chunkNameRE()
	for _, r := range refs {
		if !nameRE.MatchString(r.Name) {
			continue
		}
		if !s.deleteChunk(ctx, r.Name, r.UID) {
			ok = false
		}
	}
	return ok
}

// deleteChunk deletes one chunk Secret, with uid as precondition when not empty, so that only
// the Secret this store created is deleted. NotFound and a failed precondition count as gone.
func (s *Secret) deleteChunk(ctx context.Context, name string, uid types.UID) bool {
	opts := metav1.DeleteOptions{}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := s.secrets().Delete(ctx, name, opts)
	return err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err)
}
