// Command ckdump prints a summary of a vc-syncer file checkpoint (--checkpoint-store
// file:PATH): when it was taken, by whom, its queue items, and per source its position, cached
// objects and ack entries. Usage: go run ./hack/ckdump PATH
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ckdump CHECKPOINT-FILE")
		os.Exit(2)
	}
	f, err := store.NewFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	b, err := f.Load(context.Background())
	if err != nil {
		panic(err)
	}
	cp, err := checkpoint.Decode(b)
	if err != nil {
		panic(err)
	}
	fmt.Printf("taken %s by %s (code %s), %d queue items, %d bytes\n", cp.TakenAt, cp.Holder, cp.CodeVersion, cp.QueueItems, len(b))
	for _, s := range cp.Sources {
		fmt.Printf("%-40s position=%q objects=%d acked=%d cluster=%q\n", s.ID, s.Position, len(s.Objects), len(s.Acked), s.Identity)
	}
}
