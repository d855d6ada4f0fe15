// Command profturn profiles ckpt's per-turn save and restore on an existing
// workspace (e.g. the one bench/compare.sh leaves in $BENCH_DIR/work):
//
//	go run ./bench/profturn -ws /tmp/ckpt-bench/work -store /tmp/ckpt-bench/ckpt-store
//
// It applies agent turns, times each save and restore, and writes CPU and
// heap profiles of just those operations. With -watch a watcher runs in the
// same process and serves the saves (no restores): what an agent's turn
// costs in watch mode, including the automatic gc a save may run, on a
// tree that is kept between runs (a million files take minutes to copy and
// save cold; this times the turns alone):
//
//	go run ./bench/profturn -watch -turns 60 -ws /tmp/ws1m -store /tmp/ws1m.store
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
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
	trc := flag.String("trace", "", "execution trace of the saves (go tool trace FILE): where a save waits, step by step")
	watch := flag.Bool("watch", false, "serve the saves by a watcher in this process (no restores)")
	flag.Parse()
	ctx := context.Background()
	r, err := ckpt.Open(ctx, *ws, ckpt.Options{Store: *store})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	if *watch {
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- r.Watch(wctx, ckpt.WatchOptions{Log: func(s string) {
				fmt.Fprintln(os.Stderr, time.Now().Format("15:04:05.000"), "watcher:", s)
			}})
		}()
		defer func() { cancel(); <-done }()
		for i := 0; ; i++ {
			if _, err := r.WatchStatus(ctx); err == nil {
				break
			}
			if i > 1000 {
				log.Fatal("the watcher did not start")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// The first save reads everything (the watcher just started);
		// the next ones are what a turn sees.
		for i := 0; i < 2; i++ {
			if _, err := r.Save(ctx, ckpt.SaveOptions{AllowEmpty: true}); err != nil {
				log.Fatal(err)
			}
		}
	} else {
		r.Save(ctx, ckpt.SaveOptions{})
	}
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
			if *trc != "" {
				tf, err := os.Create(*trc)
				if err != nil {
					log.Fatal(err)
				}
				if err := trace.Start(tf); err != nil {
					log.Fatal(err)
				}
				defer tf.Close()
			}
		}
		start := time.Now()
		res, err := r.Save(ctx, ckpt.SaveOptions{Kind: ckpt.KindTurn})
		if err != nil {
			log.Fatal(err)
		}
		saves = append(saves, time.Since(start))
		if *watch {
			if !res.Served {
				log.Fatalf("turn %d: the save was not served by the watcher", t)
			}
			if d := time.Since(start); d > time.Second {
				// Scanned -1: the watcher vouched for what it did not read.
				fmt.Fprintf(os.Stderr, "turn %d took %v: scanned %d, hashed %d\n", t, d.Round(time.Millisecond), res.Scanned, res.Hashed)
			}
			continue
		}
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
	if *trc != "" {
		trace.Stop()
	}
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
		if len(d) == 0 {
			return 0
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	if *watch {
		m := med(saves)
		fmt.Printf("served save median %v, 90th percentile %v, slowest %v (%d turns)\n", m, saves[len(saves)*9/10], saves[len(saves)-1], *turns)
		return
	}
	fmt.Printf("save median %v, restore median %v (%d turns)\n", med(saves), med(restores), *turns)
}
