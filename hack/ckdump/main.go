package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ckdump CHECKPOINT-FILE")
		os.Exit(2)
	}
	// Read a copy: NewFile sweeps leftover temporary files next to its path, which must not
	// touch a running syncer's directory.
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	tmp, err := os.MkdirTemp("", "ckdump-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	cp := filepath.Join(tmp, "checkpoint")
	if err := os.WriteFile(cp, data, 0o600); err != nil {
		panic(err)
	}
	f, err := store.NewFile(cp)
	if err != nil {
		panic(err)
	}
	b, err := f.Load(context.Background())
	if err != nil {
		panic(err)
	}
	ck, err := checkpoint.Decode(b)
	if err != nil {
		panic(err)
	}
	fmt.Printf("taken %s by %s (schema %d, config %s), %d queue items, %d bytes\n", ck.TakenAt, ck.Holder, ck.Schema, ck.Config, ck.QueueItems, len(b))
	for _, s := range ck.Sources {
		fmt.Printf("%-40s position=%q objects=%d acked=%d cluster=%q\n", s.ID, s.Position, len(s.Objects), len(s.Acked), s.Identity)
	}
}
