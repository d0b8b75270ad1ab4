package main

import (
	"context"
	"fmt"
	"os"

	"github.com/vcsyncer/syncer/pkg/checkpoint"
	"github.com/vcsyncer/syncer/pkg/checkpoint/store"
)

func main() {
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
	fmt.Println(cp.TakenAt, cp.Holder, cp.QueueItems)
	for _, s := range cp.Sources {
		fmt.Printf("%-40s pos=%q objs=%d nil=%v acked=%d id=%q\n", s.ID, s.Position, len(s.Objects), s.Objects == nil, len(s.Acked), s.Identity)
	}
}
