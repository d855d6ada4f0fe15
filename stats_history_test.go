package ckpt

import (
	"context"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Growth counts each distinct content once, at the oldest checkpoint
// holding it, in time order.
func TestGrowth(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	clk := testutil.NewClock("2026-04-22T09:00:00Z")
	repo, err := Open(ctx, ws, Options{Store: t.TempDir(), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	save := func(when string, files map[string]string) {
		t.Helper()
		clk.Set(when)
		testutil.WriteFiles(t, ws, files)
		if _, err := repo.Save(ctx, SaveOptions{Message: when}); err != nil {
			t.Fatal(err)
		}
	}
	save("2026-04-22T09:00:00Z", map[string]string{"a.txt": "aaaa", "d/b.txt": "bb"})
	save("2026-04-22T10:00:00Z", map[string]string{"a.txt": "aaaaaaaa"}) // new content, d/ unchanged
	save("2026-04-23T10:00:00Z", map[string]string{"a.txt": "aaaa"})     // back to old content
	got, err := repo.Growth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d points, want 3: %+v", len(got), got)
	}
	want := []struct{ new, content, logical int64 }{{6, 6, 6}, {8, 14, 10}, {0, 14, 6}}
	for i, w := range want {
		p := got[i]
		if p.New != w.new || p.Content != w.content || p.Logical != w.logical || p.Kind != "manual" {
			t.Errorf("point %d: %+v, want new %d content %d logical %d", i, p, w.new, w.content, w.logical)
		}
	}
	if !got[0].Time.Before(got[1].Time) || got[2].Time.Format("2006-01-02") != "2026-04-23" {
		t.Errorf("times: %v %v %v", got[0].Time, got[1].Time, got[2].Time)
	}
}
