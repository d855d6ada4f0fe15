//go:build linux

package bench

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// BenchmarkTurnAfterQuietSpell: a 20-file turn saved by the watcher after
// a quiet spell longer than the watcher's backstop (MaxTrust, the time
// after which a save reads the whole tree; shortened here to
// CKPT_BENCH_TRUST seconds, default 2). With the watcher's idle check the
// save stays incremental; with CKPT_WATCH_IDLE_CHECK=0 it reads
// everything, as every save did before the check. Each iteration sleeps
// (untimed) through the spell, so keep -benchtime small (10x).
func BenchmarkTurnAfterQuietSpell(b *testing.B) {
	m := watch.MaxTrust
	b.Cleanup(func() { watch.MaxTrust = m })
	watch.MaxTrust = 2 * time.Second
	if s, err := strconv.ParseFloat(os.Getenv("CKPT_BENCH_TRUST"), 64); err == nil && s > 0 {
		watch.MaxTrust = time.Duration(s * float64(time.Second))
	}
	// The watcher's log says how long each idle check read.
	var mu sync.Mutex
	var checks []time.Duration
	logf := func(line string) {
		d, ok := strings.CutPrefix(line, "idle check (")
		if d, _, ok2 := strings.Cut(d, ")"); ok && ok2 {
			if v, err := time.ParseDuration(d); err == nil {
				mu.Lock()
				checks = append(checks, v)
				mu.Unlock()
			}
		}
	}
	r, work, n := watchedWith(b, ckpt.WatchOptions{Log: logf})
	ctx := context.Background()
	full := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		time.Sleep(watch.MaxTrust + 1500*time.Millisecond)
		if _, err := Turn(work, n, i+1); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := r.Save(ctx, ckpt.SaveOptions{Kind: ckpt.KindTurn})
		if err != nil || !res.Served {
			b.Fatal(err, res)
		}
		if res.Scanned >= 0 {
			full++
		}
	}
	b.ReportMetric(float64(full)/float64(b.N), "full/op")
	mu.Lock()
	defer mu.Unlock()
	if len(checks) > 0 {
		slices.Sort(checks)
		b.ReportMetric(float64(checks[len(checks)/2])/float64(time.Millisecond), "check-ms")
	}
}
