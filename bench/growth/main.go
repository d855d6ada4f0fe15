// Command growth measures how a store grows over many small agent turns and
// how gc brings it back under a size limit (docs/benchmarks.md):
//
//	go run ./bench/growth                       # 500 turns on a copy of $GOROOT/src
//	go run ./bench/growth -turns 100 -corpus gen -files 10000
//
// Phase 1 saves every turn with retention off and records the store's size.
// Phase 2 runs `gc --max-size` (limit: -limit, default half the growth) on
// that store. Phase 3 repeats the turns on a fresh store whose max_size is
// the limit, so the automatic gc after saves keeps it bounded, and records
// the largest size seen and the slowest save.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/bench"
)

var (
	corpus = flag.String("corpus", "gosrc", "gosrc (a copy of $GOROOT/src) or gen (generated)")
	files  = flag.Int("files", 10000, "files of a generated corpus")
	turns  = flag.Int("turns", 500, "agent turns (20 files each)")
	dir    = flag.String("dir", filepath.Join(os.TempDir(), "ckpt-growth"), "work directory")
	limit  = flag.String("limit", "", "size limit for gc (default: the initial size plus half the growth)")
	every  = flag.Int("every", 50, "print the store size every N turns")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "growth:", err)
		os.Exit(1)
	}
}

func prepare(work string) ([]string, error) {
	os.RemoveAll(work)
	switch *corpus {
	case "gosrc":
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return nil, err
		}
		src := filepath.Join(strings.TrimSpace(string(out)), "src")
		if err := exec.Command("cp", "-a", src, work).Run(); err != nil {
			return nil, fmt.Errorf("copy %s: %w", src, err)
		}
	case "gen":
		if _, err := bench.Generate(work, *files, 1); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown corpus %q", *corpus)
	}
	return bench.Files(work)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// size is the store's data in use (what max_size limits; the file may
// also hold free pages until gc compacts it).
func size(ctx context.Context, r *ckpt.Repo) int64 {
	s, err := r.Stats(ctx)
	if err != nil {
		return -1
	}
	return s.Used
}

func run() error {
	ctx := context.Background()
	os.MkdirAll(*dir, 0o755)
	work := filepath.Join(*dir, "work")
	list, err := prepare(work)
	if err != nil {
		return err
	}
	var bytes int64
	filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				bytes += fi.Size()
			}
		}
		return nil
	})
	fmt.Printf("corpus %s: %d files, %s; %d turns of %d files\n\n", *corpus, len(list), mib(bytes), *turns, bench.TurnFiles)

	// Phase 1: growth with retention off.
	off := ckpt.DefaultConfig()
	off.Keep, off.MaxAge, off.MaxSize = 1<<30, 0, 0
	store1 := filepath.Join(*dir, "store-growth")
	os.RemoveAll(store1)
	r, err := ckpt.Open(ctx, work, ckpt.Options{Store: store1, Config: &off})
	if err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "initial"}); err != nil {
		return err
	}
	fmt.Printf("initial save: %v, store %s\n", time.Since(t0).Round(time.Millisecond), mib(size(ctx, r)))
	base := size(ctx, r)
	var saves []time.Duration
	fmt.Printf("\n| turns | store size | growth per turn (avg) |\n|---:|---:|---:|\n")
	orig := slices.Clone(list)
	for t := 1; t <= *turns; t++ {
		if list, err = bench.TurnIn(work, list, t); err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := r.Save(ctx, ckpt.SaveOptions{Kind: ckpt.KindTurn, Message: fmt.Sprintf("turn %d", t)}); err != nil {
			return err
		}
		saves = append(saves, time.Since(t0))
		if t%*every == 0 || t == *turns {
			s := size(ctx, r)
			fmt.Printf("| %d | %s | %.1f KiB |\n", t, mib(s), float64(s-base)/float64(t)/1024)
		}
	}
	grown := size(ctx, r)
	slices.Sort(saves)
	fmt.Printf("\nsave per turn: median %v, max %v\n", saves[len(saves)/2].Round(time.Millisecond), saves[len(saves)-1].Round(time.Millisecond))

	// Phase 2: gc under a limit.
	lim := base + (grown-base)/2
	if *limit != "" {
		if lim, err = ckpt.ParseSize(*limit); err != nil {
			return err
		}
	}
	ret := ckpt.Retention{Keep: 1 << 30, MaxSize: lim}
	t0 = time.Now()
	res, err := r.GC(ctx, ckpt.GCOptions{Retention: &ret})
	if err != nil {
		return err
	}
	fmt.Printf("\ngc --max-size %s: data %s -> %s (file %s -> %s) in %v; removed %d checkpoint(s), kept %d\n",
		mib(lim), mib(grown), mib(size(ctx, r)), mib(res.SizeBefore), mib(res.SizeAfter), time.Since(t0).Round(time.Millisecond), len(res.Removed), res.Kept)
	fsck, err := r.Fsck(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("fsck after gc: %d objects, %d problem(s)\n", fsck.Checked, len(fsck.Problems))
	r.Close()

	// Phase 3: the same turns with max_size set: automatic gc keeps it bounded.
	if list, err = prepare(work); err != nil {
		return err
	}
	_ = orig
	capped := ckpt.DefaultConfig()
	capped.Keep, capped.MaxAge, capped.MaxSize = 1<<30, 0, lim
	store2 := filepath.Join(*dir, "store-capped")
	os.RemoveAll(store2)
	r, err = ckpt.Open(ctx, work, ckpt.Options{Store: store2, Config: &capped})
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "initial"}); err != nil {
		return err
	}
	var largest int64
	saves = saves[:0]
	for t := 1; t <= *turns; t++ {
		if list, err = bench.TurnIn(work, list, t); err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := r.Save(ctx, ckpt.SaveOptions{Kind: ckpt.KindTurn, Message: fmt.Sprintf("turn %d", t)}); err != nil {
			return err
		}
		saves = append(saves, time.Since(t0))
		largest = max(largest, size(ctx, r))
	}
	n, _ := r.List(ctx, ckpt.ListOptions{})
	slices.Sort(saves)
	fmt.Printf("\nwith max_size %s: largest store seen %s, final %s, %d checkpoint(s) kept; save per turn median %v, slowest (with automatic gc) %v\n",
		mib(lim), mib(largest), mib(size(ctx, r)), len(n), saves[len(saves)/2].Round(time.Millisecond), saves[len(saves)-1].Round(time.Millisecond))
	return nil
}
