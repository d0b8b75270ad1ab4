package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
)

// Example saves and loads a checkpoint through a store built from a --checkpoint-store value,
// the way the checkpointer does: a missing checkpoint and a corrupt one both mean cold start.
func Example() {
	dir, err := os.MkdirTemp("", "ckpt")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	st, err := store.Parse("file:"+filepath.Join(dir, "sync.ckpt"), nil, store.Options{})
	if err != nil {
		panic(err)
	}
	blob, err := st.Load(ctx)
	fmt.Printf("before the first save: %v, %v\n", blob, err)

	if err := st.Save(ctx, []byte("encoded checkpoint")); err != nil {
		panic(err)
	}
	blob, err = st.Load(ctx)
	switch {
	case errors.Is(err, store.ErrCorrupt):
		fmt.Println("corrupt: cold start")
	case err != nil:
		panic(err)
	default:
		fmt.Printf("loaded %q\n", blob)
	}

	none, err := store.Parse("none", nil, store.Options{})
	fmt.Println("none:", none, err)
	// Output:
	// before the first save: [], <nil>
	// loaded "encoded checkpoint"
	// none: <nil> <nil>
}
