package syncer

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// updateFixtures writes the fixtures of CheckpointSchema (make checkpoint-fixtures).
var updateFixtures = flag.Bool("update-checkpoint-fixtures", false,
	"write testdata/checkpoint/schema-<CheckpointSchema>.{golden,ckpt}; refused when that schema's golden exists and differs, unless CHECKPOINT_FIXTURES_SAME_SCHEMA=1")

const fixtureDir = "testdata/checkpoint"

func fixturePath(sv int, ext string) string {
	return filepath.Join(fixtureDir, fmt.Sprintf("schema-%d.%s", sv, ext))
}

// bumpAdvice is what to do when what a checkpoint holds changed.
func bumpAdvice() string {
	return fmt.Sprintf(`What a checkpoint holds changed (a cached form, a key, a saved structure or the options digest; diff
above, -golden +now), but CheckpointSchema is still %d (pkg/syncer/checkpoint.go). A checkpoint
written by the previous version would be resumed by this one with the old meaning.
  - Bump CheckpointSchema to %d; if the old checkpoints can be converted, add
    checkpointMigrations[%d] (otherwise they start cold, counted in
    vcsyncer_checkpoint_discarded_total{reason="schema_too_old"}).
  - Then run: make checkpoint-fixtures   (it writes %s and %s, and keeps the
    fixtures of earlier schemas, which TestCheckpointFixturesResume resumes or discards).
  - Only if an old checkpoint means exactly the same to this code (say why in the commit):
    CHECKPOINT_FIXTURES_SAME_SCHEMA=1 make checkpoint-fixtures`,
		CheckpointSchema, CheckpointSchema+1, CheckpointSchema, fixturePath(CheckpointSchema+1, "golden"), fixturePath(CheckpointSchema+1, "ckpt"))
}

// TestCheckpointSchemaGuard fails when what a checkpoint holds — the objects' cached forms
// (the informers' transforms, run on one fixed object of every resumable kind through the
// informers themselves, and the tenant informers' held-out stub), the Source IDs, ack map keys
// and entries, the queue items, the extra state, the shapes of the saved structs, the options
// digest — differs from the golden of the running CheckpointSchema: such a change needs a
// schema bump (and fixtures, make checkpoint-fixtures). With -update-checkpoint-fixtures it
// writes that schema's golden and checkpoint fixture.
func TestCheckpointSchemaGuard(t *testing.T) {
	cp := fxCheckpoint(t)
	now := describe(t, cp) + fxStubDescription(t)
	golden := fixturePath(CheckpointSchema, "golden")
	old, err := os.ReadFile(golden)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if *updateFixtures {
		if err == nil && string(old) != now && os.Getenv("CHECKPOINT_FIXTURES_SAME_SCHEMA") != "1" {
			t.Fatalf("refusing to rewrite the fixtures of schema %d:\n%s\n\n%s", CheckpointSchema, lineDiff(string(old), now), bumpAdvice())
		}
		if _, statErr := os.Stat(fixturePath(CheckpointSchema, "ckpt")); err == nil && string(old) == now && statErr == nil {
			t.Logf("the fixtures of schema %d hold this state already; not rewritten", CheckpointSchema)
			return // the encoding's map order would change the bytes, not the state
		}
		writeFixtures(t, cp, now)
		return
	}
	if err != nil {
		t.Fatalf("no fixtures for checkpoint schema %d (%s): run make checkpoint-fixtures", CheckpointSchema, golden)
	}
	if string(old) != now {
		t.Fatalf("%s\n\n%s", lineDiff(string(old), now), bumpAdvice())
	}
	// The committed checkpoint of this schema holds the golden state (it was not edited apart).
	fixture := loadFixture(t, CheckpointSchema)
	if got := describe(t, fixture) + fxStubDescription(t); got != now {
		t.Fatalf("%s does not hold the state of %s (-fixture +golden):\n%s\nrun make checkpoint-fixtures",
			fixturePath(CheckpointSchema, "ckpt"), golden, lineDiff(got, now))
	}
}

// lineDiff returns the line diff of a and b.
func lineDiff(a, b string) string {
	return cmp.Diff(strings.Split(a, "\n"), strings.Split(b, "\n"))
}

func writeFixtures(t *testing.T, cp *checkpoint.Checkpoint, desc string) {
	t.Helper()
	if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := checkpoint.Encode(cp)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewFile(fixturePath(CheckpointSchema, "ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(fixturePath(CheckpointSchema, "ckpt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fixturePath(CheckpointSchema, "golden"), []byte(desc), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s and %s", fixturePath(CheckpointSchema, "ckpt"), fixturePath(CheckpointSchema, "golden"))
}

// loadFixture decodes the committed checkpoint of schema (without migrating it).
func loadFixture(t *testing.T, sv int) *checkpoint.Checkpoint {
	t.Helper()
	st, err := store.NewFile(copyFixture(t, sv))
	if err != nil {
		t.Fatal(err)
	}
	data, err := st.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cp, err := checkpoint.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// copyFixture copies the committed checkpoint of schema into a temporary directory (a File
// store sweeps and writes its directory) and returns its path there.
func copyFixture(t *testing.T, sv int) string {
	t.Helper()
	b, err := os.ReadFile(fixturePath(sv, "ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ckpt")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fixtureSchemas returns the schemas of the committed checkpoint fixtures, ascending.
func fixtureSchemas(t *testing.T) []int {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "schema-*.ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`schema-(\d+)\.ckpt$`)
	var out []int
	for _, p := range paths {
		if m := re.FindStringSubmatch(p); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// lists returns the LIST requests cs received of the resumable kinds (those of
// pkg/checkpoint/source; Events, ResourceQuotas and LimitRanges have informers of their own,
// which always list), by resource.
func lists(cs *fake.Clientset) map[string]int {
	resumable := map[string]bool{}
	for kind := range fxNewObjects {
		plural, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Kind: kind})
		resumable[plural.Resource] = true
	}
	out := map[string]int{}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "list" && resumable[a.GetResource().Resource] {
			out[a.GetResource().Resource]++
		}
	}
	return out
}

// resumeFrom starts the fixtures' syncer and tenant over a File store at path, on fake
// clientsets holding the fixtures' objects, and returns them once every cache has synced.
func resumeFrom(t *testing.T, ctx context.Context, path string) *fxEnv {
	t.Helper()
	st, err := store.NewFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := newFxEnv(t, st)
	e.start(t, ctx)
	return e
}

// parkedItems returns the number of requests parked for the fixtures' tenant.
func (e *fxEnv) parkedItems() int { return e.s.resume.ParkedCount(fxTenant) }

// modes returns the resume mode of every Source.
func (e *fxEnv) modes() map[string]string { return e.s.sources.Modes() }

// TestCheckpointFixturesResume resumes every committed checkpoint fixture (testdata/checkpoint,
// one per schema, kept across schema bumps) on fake control planes holding the fixtures'
// objects: a fixture this version reads (its schema, or an older one the migrations reach) is
// resumed with no LIST of any resumable kind, every cache serving the saved objects, its queue
// items parked for the tenant and its vNode bindings restored; a fixture of a schema it does
// not read is discarded whole (counted by reason): every cache lists, nothing is parked.
func TestCheckpointFixturesResume(t *testing.T) {
	schemas := fixtureSchemas(t)
	if len(schemas) == 0 || schemas[len(schemas)-1] != CheckpointSchema {
		t.Fatalf("fixture schemas %v: the running schema %d has no fixture; run make checkpoint-fixtures", schemas, CheckpointSchema)
	}
	oldest := CheckpointSchema
	for oldest > 0 && checkpointMigrations[oldest-1] != nil {
		oldest--
	}
	for _, sv := range schemas {
		t.Run(fmt.Sprintf("schema-%d", sv), func(t *testing.T) {
			if sv < oldest {
				expectDiscarded(t, copyFixture(t, sv), checkpoint.ReasonSchemaTooOld)
				return
			}
			expectResumed(t, copyFixture(t, sv))
		})
	}
	// A rollback: the running version finds a checkpoint of a newer schema.
	t.Run("newer-schema", func(t *testing.T) {
		expectDiscarded(t, rewriteFixture(t, func(cp *checkpoint.Checkpoint) []byte {
			cp.Schema = CheckpointSchema + 1
			data, err := checkpoint.Encode(cp)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}), checkpoint.ReasonSchemaNewer)
	})
	// An upgrade from a version before schemas: it saved a build hash (CodeVersion) and no
	// schema. Same content, struct of that version.
	t.Run("before-schemas", func(t *testing.T) {
		expectDiscarded(t, rewriteFixture(t, func(cp *checkpoint.Checkpoint) []byte {
			var buf bytes.Buffer
			if err := gob.NewEncoder(&buf).Encode(&legacyCheckpoint{Format: cp.Format, CodeVersion: "beddf0a51c98a856",
				Holder: cp.Holder, TakenAt: cp.TakenAt, Sources: cp.Sources, Queues: cp.Queues, QueueItems: cp.QueueItems,
				Extras: cp.Extras, LeftOut: cp.LeftOut}); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}), checkpoint.ReasonSchemaTooOld)
	})
}

// legacyCheckpoint is checkpoint.Checkpoint as versions before schemas saved it.
type legacyCheckpoint struct {
	Format      int
	CodeVersion string
	Holder      string
	TakenAt     time.Time
	Sources     []source.State
	Queues      []byte
	QueueItems  int
	Extras      map[string][]byte
	LeftOut     []string
}

// rewriteFixture writes the running schema's fixture, changed by edit (which returns the new
// encoded checkpoint), to a temporary File store and returns its path.
func rewriteFixture(t *testing.T, edit func(cp *checkpoint.Checkpoint) []byte) string {
	t.Helper()
	data := edit(loadFixture(t, CheckpointSchema))
	path := filepath.Join(t.TempDir(), "ckpt")
	st, err := store.NewFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(context.Background(), data); err != nil {
		t.Fatal(err)
	}
	return path
}

func expectResumed(t *testing.T, path string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := resumeFrom(t, ctx, path)
	if e.s.resume.ResumedFrom().IsZero() {
		t.Fatal("the checkpoint was not resumed from")
	}
	if l := lists(e.superCS); len(l) != 0 {
		t.Errorf("super LISTs on resume: %v, want none", l)
	}
	if l := lists(e.tenantCS); len(l) != 0 {
		t.Errorf("tenant LISTs on resume: %v, want none", l)
	}
	for id, mode := range e.modes() {
		if mode != source.ModeWatch {
			t.Errorf("source %s resumed in mode %q, want %q", id, mode, source.ModeWatch)
		}
	}
	for i, inf := range e.tenants {
		if src := e.s.tenantSource(e.c, sortedKinds(e.s)[i]); src != nil && len(inf.GetStore().List()) == 0 {
			t.Errorf("tenant cache of %s is empty after the resume", sortedKinds(e.s)[i])
		}
	}
	if n := e.parkedItems(); n != len(fxQueueItems()) {
		t.Errorf("%d requests parked for the tenant, want %d", n, len(fxQueueItems()))
	}
	if pods, _, _, ok := e.s.vnodes.Bindings().Get(fxTenant, "node-1"); !ok || pods != 1 {
		t.Errorf("vNode binding of node-1: %d Pods (found %v), want 1", pods, ok)
	}
}

func expectDiscarded(t *testing.T, path, reason string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rise := metrics.CheckpointDiscards(reason)
	e := resumeFrom(t, ctx, path)
	if got := metrics.CheckpointDiscards(reason) - rise; got != 1 {
		t.Errorf("vcsyncer_checkpoint_discarded_total{reason=%q} rose by %v, want 1", reason, got)
	}
	if !e.s.resume.ResumedFrom().IsZero() {
		t.Error("a checkpoint that must be discarded was resumed from")
	}
	for id, mode := range e.modes() {
		if mode != source.ModeCold {
			t.Errorf("source %s started in mode %q after a discarded checkpoint, want %q (nothing half-resumed)", id, mode, source.ModeCold)
		}
	}
	if l := lists(e.tenantCS); len(l) == 0 {
		t.Error("the tenant's caches did not list after a discarded checkpoint")
	}
	if n := e.parkedItems(); n != 0 {
		t.Errorf("%d requests of a discarded checkpoint were parked", n)
	}
	if _, _, _, ok := e.s.vnodes.Bindings().Get(fxTenant, "node-1"); ok {
		t.Error("the vNode bindings of a discarded checkpoint were restored")
	}
	if !strings.Contains(reason, "schema") {
		t.Fatalf("unexpected reason %q", reason)
	}
}
