package httpserver_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// GET /api/stats/history: the growth of the kept checkpoints, oldest
// first; the store's size sampled as it changes; the gc runs this server
// made and those of another handle on the store, each with its drop.
func TestStoreHistory(t *testing.T) {
	cfg := ckpt.DefaultConfig()
	cfg.Keep = 1 // POST /api/gc's retention
	f := newFixtureWith(t, httpserver.Options{}, ckpt.Options{Config: &cfg})
	big := func(int) string {
		b := make([]byte, 300<<10)
		rand.Read(b)
		return string(b)
	}
	for i := range 4 {
		testutil.WriteFiles(t, f.ws, map[string]string{"big.bin": big(i)})
		f.save(fmt.Sprintf("save %d", i))
	}
	var h httpserver.StoreHistory
	f.ok(request{method: "GET", path: "/api/stats/history"}, 0, &h)
	if len(h.Growth) != 4 || h.Since.IsZero() || len(h.Sizes) == 0 || len(h.GC) != 0 {
		t.Fatalf("history: %d points, since %v, %d sizes, %d gc", len(h.Growth), h.Since, len(h.Sizes), len(h.GC))
	}
	for i, p := range h.Growth {
		if p.New < 300<<10 || (i > 0 && p.Content != h.Growth[i-1].Content+p.New) || p.Kind != "manual" {
			t.Errorf("growth %d: %+v", i, p)
		}
	}

	// This server's gc (through its Repo, like POST /api/gc and the
	// automatic gc after a save).
	// Another handle's gc, which the watcher finds.
	other, err := ckpt.Open(context.Background(), f.ws, ckpt.Options{Store: f.store})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	time.Sleep(500 * time.Millisecond) // the watcher (every 50 ms) reads the four first
	if res, err := other.GC(context.Background(), ckpt.GCOptions{Retention: &ckpt.Retention{Keep: 2}}); err != nil || len(res.Removed) != 2 {
		t.Fatal(res, err)
	}
	// A request that samples the size before the watcher finds the gc:
	// the gc's size before is still the one before it ran.
	f.ok(request{method: "GET", path: "/api/stats/history"}, 0, &h)
	deadline := time.Now().Add(5 * time.Second)
	for len(h.GC) < 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		f.ok(request{method: "GET", path: "/api/stats/history"}, 0, &h)
	}
	if len(h.GC) != 1 || len(h.Growth) != 2 {
		t.Fatalf("after another's gc: %d points, gc %+v", len(h.Growth), h.GC)
	}
	if g := h.GC[0]; g.Source != "other" || g.After >= g.Before {
		t.Errorf("another's gc run: %+v", g)
	}

	// This server's gc.
	var res ckpt.GCResult
	if f.ok(request{method: "POST", path: "/api/gc"}, 0, &res); len(res.Removed) != 1 {
		t.Fatalf("POST /api/gc: %+v", res)
	}
	f.ok(request{method: "GET", path: "/api/stats/history"}, 0, &h)
	if len(h.Growth) != 1 || len(h.GC) != 2 {
		t.Fatalf("after gc: %d points, gc %+v", len(h.Growth), h.GC)
	}
	if g := h.GC[1]; g.Source != "server" || g.After >= g.Before || g.Before != h.GC[0].After {
		t.Errorf("gc run: %+v after %+v", g, h.GC[0])
	}
	if last := h.Sizes[len(h.Sizes)-1]; last.Bytes != h.GC[1].After {
		t.Errorf("last size sample %+v, want the gc's after %d", last, h.GC[1].After)
	}
}
