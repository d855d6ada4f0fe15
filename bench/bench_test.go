package bench

import (
	"context"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// The Go benchmarks use a generated corpus of CKPT_BENCH_FILES files
// (default 10,000; docs/benchmarks.md uses 100,000) in CKPT_BENCH_DIR
// (default a temporary directory).

var (
	corpusOnce sync.Once
	corpusDir  string
	corpusN    int
	corpusErr  error
)

func corpus(b *testing.B) (string, int) {
	corpusOnce.Do(func() {
		corpusN = 10000
		if v, err := strconv.Atoi(os.Getenv("CKPT_BENCH_FILES")); err == nil && v > 0 {
			corpusN = v
		}
		base := os.Getenv("CKPT_BENCH_DIR")
		if base == "" {
			base, corpusErr = os.MkdirTemp("", "ckpt-bench")
			if corpusErr != nil {
				return
			}
		}
		corpusDir = filepath.Join(base, "corpus-"+strconv.Itoa(corpusN))
		if real, err := filepath.EvalSymlinks(corpusDir); err == nil {
			corpusDir = real
			return
		}
		_, corpusErr = Generate(corpusDir+".tmp", corpusN, 1)
		if corpusErr == nil {
			corpusErr = os.Rename(corpusDir+".tmp", corpusDir)
		}
	})
	if corpusErr != nil {
		b.Fatal(corpusErr)
	}
	return corpusDir, corpusN
}

func open(b *testing.B, dir string) *ckpt.Repo {
	r, err := ckpt.Open(context.Background(), dir, ckpt.Options{Store: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}

// BenchmarkSaveCold: the first checkpoint of the whole corpus.
func BenchmarkSaveCold(b *testing.B) {
	dir, n := corpus(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r := open(b, dir)
		if _, err := r.Save(context.Background(), ckpt.SaveOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "files")
}

// BenchmarkScanUnchanged: a status scan of an unchanged, cached tree.
func BenchmarkScanUnchanged(b *testing.B) {
	dir, _ := corpus(b)
	r := open(b, dir)
	ctx := context.Background()
	r.Save(ctx, ckpt.SaveOptions{})
	r.Save(ctx, ckpt.SaveOptions{AllowEmpty: true}) // cache entries trusted
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, err := r.Diff(ctx, ckpt.DiffOptions{})
		if err != nil || len(d.Files) != 0 {
			b.Fatal(err, len(d.Files))
		}
	}
}

// BenchmarkTurn: checkpoint after a 20-file turn.
func BenchmarkTurn(b *testing.B) {
	dir, n := corpus(b)
	work := copyTree(b, dir)
	r := open(b, work)
	ctx := context.Background()
	r.Save(ctx, ckpt.SaveOptions{})
	r.Save(ctx, ckpt.SaveOptions{AllowEmpty: true})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := Turn(work, n, i+1); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := r.Save(ctx, ckpt.SaveOptions{Kind: ckpt.KindTurn}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestoreTurn: restore the state before a 20-file turn, and back.
func BenchmarkRestoreTurn(b *testing.B) {
	dir, n := corpus(b)
	work := copyTree(b, dir)
	r := open(b, work)
	ctx := context.Background()
	a, _ := r.Save(ctx, ckpt.SaveOptions{})
	Turn(work, n, 1)
	t, _ := r.Save(ctx, ckpt.SaveOptions{})
	ids := []string{a.Checkpoint.ID.String(), t.Checkpoint.ID.String()}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Restore(ctx, ids[i%2], ckpt.RestoreOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiffTurn: diff of a 20-file turn against the working tree.
func BenchmarkDiffTurn(b *testing.B) {
	dir, n := corpus(b)
	work := copyTree(b, dir)
	r := open(b, work)
	ctx := context.Background()
	r.Save(ctx, ckpt.SaveOptions{})
	Turn(work, n, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, err := r.Diff(ctx, ckpt.DiffOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := d.WritePatch(ctx, discard{}); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func copyTree(b *testing.B, src string) string {
	dst := filepath.Join(b.TempDir(), "work")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		t := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(t, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		return os.WriteFile(t, data, fi.Mode().Perm())
	})
	if err != nil {
		b.Fatal(err)
	}
	return dst
}

// TestGenerateAndTurn keeps the generator honest: deterministic, the
// expected shape, and a turn touches 20 files.
func TestGenerateAndTurn(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	ca, err := Generate(a, 500, 7)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := Generate(b, 500, 7)
	if ca != cb || ca.Files != 500 {
		t.Fatalf("corpus %+v vs %+v", ca, cb)
	}
	touched, err := Turn(a, 500, 1)
	if err != nil || len(touched) != TurnFiles {
		t.Fatalf("turn touched %d files (%v)", len(touched), err)
	}
	files, err := Files(b)
	if err != nil || len(files) != 500 {
		t.Fatalf("Files: %d, %v", len(files), err)
	}
	files, err = TurnIn(b, files, 1)
	if err != nil || len(files) != 500 {
		t.Fatalf("TurnIn: %d files, %v", len(files), err)
	}
	again, _ := Files(b)
	if len(again) != len(files) {
		t.Fatalf("TurnIn's list has %d files, the tree %d", len(files), len(again))
	}
}

// watched opens a copy of the corpus with its watcher running in this
// process (NoServe: it only tells saves what changed) and makes the saves
// after which unchanged directories come from the cache.
func watched(b *testing.B, noServe bool) (*ckpt.Repo, string, int) {
	return watchedWith(b, ckpt.WatchOptions{NoServe: noServe})
}

func watchedWith(b *testing.B, opts ckpt.WatchOptions) (*ckpt.Repo, string, int) {
	dir, n := corpus(b)
	work := copyTree(b, dir)
	r := open(b, work)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Watch(ctx, opts) }()
	b.Cleanup(func() { cancel(); <-done })
	for i := 0; ; i++ {
		if _, err := r.WatchStatus(context.Background()); err == nil {
			break
		}
		if i > 500 {
			b.Fatal("the watcher did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 3; i++ {
		if _, err := r.Save(context.Background(), ckpt.SaveOptions{AllowEmpty: true}); err != nil {
			b.Fatal(err)
		}
	}
	return r, work, n
}

func benchWatchTurn(b *testing.B, noServe bool) {
	r, work, n := watched(b, noServe)
	ctx := context.Background()
	profile(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := Turn(work, n, i+1); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := r.Save(ctx, ckpt.SaveOptions{Kind: ckpt.KindTurn})
		if err != nil {
			b.Fatal(err)
		}
		if res.Served == noServe {
			b.Fatalf("served %v with NoServe %v", res.Served, noServe)
		}
	}
}

// BenchmarkTurnWatchServed: checkpoint after a 20-file turn, made by the
// watcher over its socket (the Go API's Save with `ckpt watch` running).
func BenchmarkTurnWatchServed(b *testing.B) { benchWatchTurn(b, false) }

// BenchmarkTurnWatchAsked: the same when the watcher only says which
// directories changed and the caller saves.
func BenchmarkTurnWatchAsked(b *testing.B) { benchWatchTurn(b, true) }

// BenchmarkSaveUnchangedServed: a save of an unchanged tree served by the
// watcher (what a hook pays when nothing changed).
func BenchmarkSaveUnchangedServed(b *testing.B) {
	r, _, _ := watched(b, false)
	ctx := context.Background()
	profile(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := r.Save(ctx, ckpt.SaveOptions{})
		if err != nil || !res.Served || res.Created {
			b.Fatal(err, res)
		}
	}
}

// profile writes a CPU profile of the rest of the benchmark (after its
// setup) to $CKPT_BENCH_CPUPROFILE, if set.
func profile(b *testing.B) {
	p := os.Getenv("CKPT_BENCH_CPUPROFILE")
	if p == "" {
		return
	}
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pprof.StopCPUProfile(); f.Close() })
}

// TestGenerateTiny: the tiny corpus is deterministic, every file 0-200
// bytes, in Generate's layout, and a turn applies to it.
func TestGenerateTiny(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	ca, err := GenerateTiny(a, 1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := GenerateTiny(b, 1000, 3)
	if ca != cb || ca.Files != 1000 {
		t.Fatalf("corpus %+v vs %+v", ca, cb)
	}
	if ca.Bytes > 200*1000 {
		t.Fatalf("corpus of %d bytes, want at most 200 per file", ca.Bytes)
	}
	files, err := Files(a)
	if err != nil || len(files) != 1000 {
		t.Fatalf("Files: %d, %v", len(files), err)
	}
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(a, f))
		if err != nil || fi.Size() > 200 {
			t.Fatalf("%s: %v, %v", f, fi, err)
		}
	}
	if _, err := TurnIn(a, files, 1); err != nil {
		t.Fatalf("TurnIn: %v", err)
	}
}
