// Command profturn profiles ckpt's per-turn save and restore on an existing
// workspace (e.g. the one bench/compare.sh leaves in $BENCH_DIR/work):
//
//	go run ./bench/profturn -ws /tmp/ckpt-bench/work -store /tmp/ckpt-bench/ckpt-store
//
// It applies agent turns, times each save and restore, and writes CPU and
// heap profiles of just those operations.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/bench"
)

func main() {
	ws := flag.String("ws", "", "workspace")
	store := flag.String("store", "", "store directory")
	turns := flag.Int("turns", 10, "turns")
	first := flag.Int("first-turn", 1000, "number of the first turn (turns differ by number)")
	cpu := flag.String("cpuprofile", "/tmp/turn.cpu", "CPU profile")
	mem := flag.String("memprofile", "/tmp/turn.mem", "heap profile (after the last save)")
	blk := flag.String("blockprofile", "", "block profile")
	flag.Parse()
	ctx := context.Background()
	r, err := ckpt.Open(ctx, *ws, ckpt.Options{Store: *store})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	r.Save(ctx, ckpt.SaveOptions{})
	list, err := bench.Files(*ws)
	if err != nil {
		log.Fatal(err)
	}
	f, _ := os.Create(*cpu)
	var saves, restores []time.Duration
	for t := *first; t < *first+*turns; t++ {
		if list, err = bench.TurnIn(*ws, list, t); err != nil {
			log.Fatal(err)
		}
		if t == *first {
			pprof.StartCPUProfile(f)
			if *blk != "" {
				runtime.SetBlockProfileRate(1000)
			}
		}
		start := time.Now()
		res, err := r.Save(ctx, ckpt.SaveOptions{Kind: ckpt.KindTurn})
		if err != nil {
			log.Fatal(err)
		}
		saves = append(saves, time.Since(start))
		start = time.Now()
		if _, err := r.Restore(ctx, "HEAD~1", ckpt.RestoreOptions{}); err != nil {
			log.Fatal(err)
		}
		restores = append(restores, time.Since(start))
		if _, err := r.Restore(ctx, res.Checkpoint.ID.String(), ckpt.RestoreOptions{}); err != nil {
			log.Fatal(err)
		}
	}
	pprof.StopCPUProfile()
	if *blk != "" {
		bf, _ := os.Create(*blk)
		pprof.Lookup("block").WriteTo(bf, 0)
		bf.Close()
	}
	runtime.GC()
	mf, _ := os.Create(*mem)
	pprof.WriteHeapProfile(mf)
	mf.Close()
	med := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	fmt.Printf("save median %v, restore median %v (%d turns)\n", med(saves), med(restores), *turns)
}
