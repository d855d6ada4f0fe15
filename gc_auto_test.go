package ckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// writeConfigs writes store settings (ckpt config KEY VALUE) into dir.
func writeConfigs(t *testing.T, dir string, cfg map[string]string) {
	t.Helper()
	for k, v := range cfg {
		if err := WriteConfig(dir, k, &v); err != nil {
			t.Fatal(err)
		}
	}
}

// clockedRepo opens a workspace holding a.txt ("0") whose store has the
// settings cfg; the repository reads the time from *now, which the test
// sets. It is closed when the test ends.
func clockedRepo(t *testing.T, cfg map[string]string) (r *Repo, ws string, now *time.Time) {
	t.Helper()
	dir, ws := t.TempDir(), t.TempDir()
	writeConfigs(t, dir, cfg)
	writeFile(t, ws, "a.txt", "0")
	r, err := Open(context.Background(), ws, Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	now = new(time.Time)
	r.opts.Now = func() time.Time { return *now }
	return r, ws, now
}

// The count automatic gc looks at first (pastRetentionMaybe) never hides
// a history that reading every checkpoint (pastRetention) finds past its
// retention: random saves on two branches at random times, checked
// against random retention settings after each save.
func TestAutoGCPrecheckSound(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	r, ws, now := clockedRepo(t, map[string]string{"keep": "0", "max_age": "0", "max_size": "0"})
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	*now = base
	mustSave(t, r, "first")
	if _, err := r.CreateBranch(ctx, "side", "HEAD"); err != nil {
		t.Fatal(err)
	}
	skipped, checked := 0, 0
	for i := range 60 {
		if i >= 30 && rng.IntN(8) == 0 { // one branch first: the count is exact
			bs, err := r.Branches(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				if !b.Current {
					if _, err := r.Switch(ctx, b.Name, SwitchOptions{}); err != nil {
						t.Fatal(err)
					}
					break
				}
			}
		}
		*now = base.Add(time.Duration(rng.IntN(24*20)) * time.Hour)
		writeFile(t, ws, "a.txt", fmt.Sprint(i))
		mustSave(t, r, fmt.Sprint(i))
		recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			ret := Retention{Keep: rng.IntN(30), MaxAge: time.Duration(rng.IntN(6)) * 24 * time.Hour, KeepDaily: rng.IntN(3) / 2}
			if rng.IntN(2) == 0 { // near the count's edge
				ret.Keep = max(1, len(recs)-10-rng.IntN(3))
			}
			slack := max(10, ret.Keep/10)
			at := base.Add(time.Duration(rng.IntN(24*30)) * time.Hour)
			full := pastRetention(recs, ret, slack, 24*time.Hour, at)
			maybe := r.pastRetentionMaybe(ctx, ret, slack, 24*time.Hour, at)
			if full && !maybe {
				t.Fatalf("%d checkpoints, %+v at %v: past retention, but the count says none can be", len(recs), ret, at)
			}
			checked++
			if !maybe {
				skipped++
			}
		}
	}
	if skipped == 0 || skipped == checked {
		t.Fatalf("the count ruled out %d of %d checks: it must decide both ways", skipped, checked)
	}
}

// With lag (a client whose save the watcher served), automatic gc waits
// until checkpoints are lag days past max_age, not one: five days past
// it, lag 1 removes them and gcLag does not.
func TestAutoGCAgeGraceUnderLag(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		lag     int
		removes bool
	}{{1, true}, {gcLag, false}} {
		r, ws, now := clockedRepo(t, map[string]string{"keep": "0", "max_age": "1d", "max_size": "0"})
		base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		*now = base
		for i := range 3 {
			writeFile(t, ws, "a.txt", fmt.Sprint(i))
			mustSave(t, r, fmt.Sprint(i))
		}
		*now = base.Add(6 * 24 * time.Hour)
		if w := r.autoGC(ctx, c.lag); w != "" {
			t.Fatalf("lag %d: warning %q", c.lag, w)
		}
		recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if removed := len(recs) < 3; removed != c.removes {
			t.Errorf("lag %d, five days past max_age: %d of 3 checkpoints left, want removed %v", c.lag, len(recs), c.removes)
		}
	}
}
