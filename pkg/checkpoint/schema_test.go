package checkpoint

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vcsyncer/syncer/pkg/checkpoint/source"
	"github.com/vcsyncer/syncer/pkg/metrics"
)

// schemaCheckpointer returns a Checkpointer of schema with migrations over st.
func schemaCheckpointer(t *testing.T, st Store, schema int, migrations map[int]func(*Checkpoint) error) *Checkpointer {
	t.Helper()
	var log []string
	c, err := New(Options{Store: st, Sources: source.NewRegistry(), Queues: &fakeQueues{log: &log},
		Extras: []Checkpointable{&fakeExtra{log: &log}}, Schema: schema, Migrations: migrations, Config: "c", MaxItems: 10})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writeSchema stores a checkpoint of the given schema and config with queue data q.
func writeSchema(t *testing.T, st *memStore, schema int, config, q string) {
	t.Helper()
	data, err := Encode(&Checkpoint{Format: Format, Schema: schema, Config: config, TakenAt: time.Now(), Queues: []byte(q), QueueItems: 1,
		Sources: []source.State{{ID: "tenant/a/Pod", Acked: map[string]source.ObjectVersion{"ns/p": {UID: "u", ResourceVersion: "7"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	st.data = data
}

// TestSchemaDecidesCompatibility: a checkpoint of the running schema is used; one of an older
// schema is used through the migrations when they reach it, migrated whole; one older than
// they reach, one of a newer schema (a rollback), one whose migration fails and one of other
// options are discarded whole, each counted under its reason.
func TestSchemaDecidesCompatibility(t *testing.T) {
	ctx := context.Background()
	var calls []int
	step := func(from int, q string) func(*Checkpoint) error {
		return func(cp *Checkpoint) error {
			calls = append(calls, from)
			cp.Queues = append(cp.Queues, q...)
			return nil
		}
	}
	migrations := map[int]func(*Checkpoint) error{2: step(2, "+3"), 3: step(3, "+4")}
	cases := map[string]struct {
		schema     int
		config     string
		want       string // the loaded queue data; "" for a discard
		wantReason string
		wantCalls  []int
	}{
		"same schema":                     {schema: 4, config: "c", want: "q"},
		"one schema older, migrated":      {schema: 3, config: "c", want: "q+4", wantCalls: []int{3}},
		"two schemas older, migrated":     {schema: 2, config: "c", want: "q+3+4", wantCalls: []int{2, 3}},
		"older than the migrations reach": {schema: 1, config: "c", wantReason: ReasonSchemaTooOld},
		"written before schemas":          {schema: 0, config: "c", wantReason: ReasonSchemaTooOld},
		"newer schema (rollback)":         {schema: 5, config: "c", wantReason: ReasonSchemaNewer},
		"other options":                   {schema: 4, config: "other", wantReason: "config_changed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			calls = nil
			st := &memStore{}
			writeSchema(t, st, tc.schema, tc.config, "q")
			rise := metrics.CheckpointDiscards(tc.wantReason)
			cp := schemaCheckpointer(t, st, 4, migrations).Load(ctx)
			if tc.want == "" {
				if cp != nil {
					t.Fatalf("a checkpoint of schema %d (config %q) was used by schema 4", tc.schema, tc.config)
				}
				if got := metrics.CheckpointDiscards(tc.wantReason) - rise; got != 1 {
					t.Errorf("discarded_total{reason=%q} rose by %v, want 1", tc.wantReason, got)
				}
				return
			}
			if cp == nil {
				t.Fatalf("a checkpoint of schema %d was not used by schema 4", tc.schema)
			}
			if string(cp.Queues) != tc.want || cp.Schema != 4 || cp.Sources[0].Acked["ns/p"].ResourceVersion != "7" {
				t.Errorf("loaded queues %q schema %d, want %q schema 4", cp.Queues, cp.Schema, tc.want)
			}
			if len(calls) != len(tc.wantCalls) || (len(calls) > 0 && (calls[0] != tc.wantCalls[0] || calls[len(calls)-1] != tc.wantCalls[len(tc.wantCalls)-1])) {
				t.Errorf("migration steps %v, want %v", calls, tc.wantCalls)
			}
		})
	}
}

// TestFailedMigrationDiscardsWhole: a migration step that fails discards the checkpoint; the
// steps before it (which may have changed it) do not leak into a resume.
func TestFailedMigrationDiscardsWhole(t *testing.T) {
	st := &memStore{}
	writeSchema(t, st, 1, "c", "q")
	migrations := map[int]func(*Checkpoint) error{
		1: func(cp *Checkpoint) error { cp.Queues = []byte("half"); return nil },
		2: func(*Checkpoint) error { return errors.New("cannot") },
	}
	rise := metrics.CheckpointDiscards(ReasonMigrationFailed)
	if cp := schemaCheckpointer(t, st, 3, migrations).Load(context.Background()); cp != nil {
		t.Fatalf("a checkpoint whose migration failed was used (queues %q)", cp.Queues)
	}
	if got := metrics.CheckpointDiscards(ReasonMigrationFailed) - rise; got != 1 {
		t.Errorf("discarded_total{reason=migration_failed} rose by %v, want 1", got)
	}
}

// TestSaveStampsSchema: Save and NewCheckpoint write the running schema and options, and New
// refuses a Checkpointer without a schema (0 is the schema of checkpoints written before
// schemas existed).
func TestSaveStampsSchema(t *testing.T) {
	st := &memStore{}
	c := schemaCheckpointer(t, st, 7, nil)
	if err := c.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	cp, err := Decode(st.data)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Schema != 7 || cp.Config != "c" || cp.Format != Format {
		t.Errorf("saved schema %d config %q format %d, want 7, c, %d", cp.Schema, cp.Config, cp.Format, Format)
	}
	if h := c.NewCheckpoint(time.Now()); h.Schema != 7 || h.Config != "c" || h.Format != Format {
		t.Errorf("NewCheckpoint = %+v", h)
	}
	var log []string
	if _, err := New(Options{Store: st, Sources: source.NewRegistry(), Queues: &fakeQueues{log: &log}}); err == nil {
		t.Error("New accepted Options without a Schema")
	}
}
