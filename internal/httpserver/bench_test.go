package httpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// benchCheckpoints is the history BenchmarkListPage pages through.
const benchCheckpoints = 10000

var (
	bigOnce sync.Once
	bigDir  string // removed by TestMain
	bigSrv  *httpserver.Server
	bigIDs  []ckpt.ID // oldest first
	bigErr  error
)

// bigHistory serves a workspace with 10,000 checkpoints, built once per
// test binary: one save through the API, then the rest written to the
// store directly in one transaction (10,000 saves would take a minute),
// as a chain on the branch main, alternating kinds.
func bigHistory(b *testing.B) (*httpserver.Server, []ckpt.ID) {
	bigOnce.Do(func() { bigErr = buildBigHistory() })
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigSrv, bigIDs
}

func buildBigHistory() error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ckpt-bench-serve")
	if err != nil {
		return err
	}
	if bigDir, err = filepath.EvalSymlinks(dir); err != nil {
		return err
	}
	ws, sd := filepath.Join(bigDir, "ws"), filepath.Join(bigDir, "store")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		return err
	}
	r, err := ckpt.Open(ctx, ws, ckpt.Options{Store: sd})
	if err != nil {
		return err
	}
	first, err := r.Save(ctx, ckpt.SaveOptions{Message: "first"})
	r.Close()
	if err != nil {
		return err
	}
	st, err := store.OpenSQLite(ctx, sd, ws)
	if err != nil {
		return err
	}
	bigIDs = []ckpt.ID{first.Checkpoint.ID}
	err = st.Update(ctx, func(tx store.Tx) error {
		prev, t := first.Checkpoint.ID, first.Checkpoint.Time
		for i := 1; i < benchCheckpoints; i++ {
			kind := ckpt.KindTurn
			if i%4 == 0 {
				kind = ckpt.KindManual
			}
			cp := &object.Checkpoint{Tree: first.Checkpoint.Tree, Parents: []object.ID{prev},
				Time: t.Add(time.Duration(i) * time.Second), Kind: kind, Branch: "main",
				Message: fmt.Sprintf("checkpoint %d", i)}
			id, err := tx.PutCheckpoint(cp, store.Stats{Files: 1, Bytes: 4})
			if err != nil {
				return err
			}
			bigIDs, prev = append(bigIDs, id), id
		}
		now := time.Now()
		if err := tx.SetRef(store.Ref{Name: "HEAD", ID: prev, Symbolic: "main", Time: now}); err != nil {
			return err
		}
		return tx.SetRef(store.Ref{Name: "branches/main", ID: prev, Time: now})
	})
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Kept open for the test binary's life, like the server.
	if r, err = ckpt.Open(ctx, ws, ckpt.Options{Store: sd}); err != nil {
		return err
	}
	bigSrv, err = httpserver.New(httpserver.Options{Repo: r, Addr: "127.0.0.1:1"})
	return err
}

// BenchmarkListPage: one page of 50 of a 10,000-checkpoint history,
// through the server's handler (the guard, the token, JSON), at the
// newest end, in the middle and at the oldest end. docs/benchmarks.md
// has the numbers; the target is well under 50 ms a page.
func BenchmarkListPage(b *testing.B) {
	srv, ids := bigHistory(b)
	h := srv.Handler()
	for _, bc := range []struct {
		name, query string
		first       ckpt.ID
	}{
		{"newest", "", ids[len(ids)-1]},
		{"middle", "&before=" + ids[len(ids)/2].String(), ids[len(ids)/2-1]},
		{"oldest", "&before=" + ids[50].String(), ids[49]},
	} {
		b.Run(bc.name, func(b *testing.B) {
			get := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest("GET", "http://127.0.0.1:1/api/checkpoints?limit=50"+bc.query, nil)
				req.Header.Set("Authorization", "Bearer "+srv.Token())
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				return w
			}
			w := get()
			var p httpserver.Page
			if err := json.Unmarshal(w.Body.Bytes(), &p); w.Code != http.StatusOK || err != nil {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if len(p.Checkpoints) != 50 || p.Checkpoints[0].ID != bc.first {
				b.Fatalf("a page of %d from %v, want 50 from %v", len(p.Checkpoints), p.Checkpoints[0].ID, bc.first)
			}
			b.ReportAllocs()
			for b.Loop() {
				if w := get(); w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
