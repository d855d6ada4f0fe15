//go:build linux

package ckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeOscillating writes directory state k of a workspace whose
// directories go back and forth between a few states: d/ (300 files, so
// its tree is delta-encoded) and d/e/ change with k, d/f/ with k/2.
func writeOscillating(t *testing.T, ws string, k, step int) {
	t.Helper()
	for _, dir := range []string{"d/e", "d/f"} {
		if err := os.MkdirAll(filepath.Join(ws, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 300; i++ {
		p := filepath.Join(ws, "d", fmt.Sprintf("file%04d.go", i))
		if _, err := os.Stat(p); err != nil {
			os.WriteFile(p, []byte(fmt.Sprintf("package d // %d\n", i)), 0o644)
		}
	}
	put := func(rel, content string) {
		p := filepath.Join(ws, rel)
		if old, err := os.ReadFile(p); err == nil && string(old) == content {
			return
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("d/state.txt", fmt.Sprintf("state %d\n", k))
	put("d/e/state.txt", strings.Repeat(fmt.Sprintf("e state %d\n", k), 10))
	put("d/f/state.txt", fmt.Sprintf("f state %d\n", k/2))
	// A file only some states have.
	extra := filepath.Join(ws, "d", "extra.txt")
	if k%3 == 0 {
		put("d/extra.txt", "extra\n")
	} else {
		os.Remove(extra)
	}
	_ = step
}

// Directories going back to earlier states (A -> B -> A ...) across many
// saves, so delta chains run deep and a changed directory's new tree is
// often one the store holds; restores, undos and gc in between put the
// stat cache's trees out of step with the store. Every checkpoint must
// restore exactly and fsck must stay clean, with and without the
// watcher's service.
func TestAttackOscillatingDirectories(t *testing.T) {
	for _, served := range []bool{false, true} {
		t.Run(fmt.Sprint("served=", served), func(t *testing.T) {
			ctx := context.Background()
			rnd := rand.New(rand.NewPCG(7, uint64(len(fmt.Sprint(served)))))
			ws := t.TempDir()
			writeOscillating(t, ws, 0, 0)
			r, err := Open(ctx, ws, Options{Store: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if served {
				startWatcher(t, r)
			}
			steps := 60
			if testing.Short() {
				steps = 35
			}
			nserved := 0
			var log []string
			for step := 1; step <= steps; step++ {
				k := step % 2 // A, B, A, B ...
				if step > steps/2 {
					k = rnd.IntN(4)
				}
				writeOscillating(t, ws, k, step)
				res, err := r.Save(ctx, SaveOptions{AllowEmpty: true, Message: fmt.Sprint("step ", step, " state ", k)})
				if err != nil {
					t.Fatalf("%v: save %d: %v", log, step, err)
				}
				log = append(log, fmt.Sprint("save", k))
				if res.Served {
					nserved++
				}
				if got := fullScanTree(t, r); got != res.Checkpoint.Tree {
					t.Fatalf("%v: save %d recorded tree %s, a full scan sees %s", log, step, res.Checkpoint.Tree, got)
				}
				switch {
				case step%7 == 0:
					cps, err := r.Log(ctx, LogOptions{})
					if err != nil {
						t.Fatal(err)
					}
					target := cps[rnd.IntN(len(cps))]
					if _, err := r.Restore(ctx, target.ID.String(), RestoreOptions{}); err != nil {
						t.Fatalf("%v: restore: %v", log, err)
					}
					log = append(log, "restore")
				case step%11 == 0:
					if _, err := r.Undo(ctx); err != nil {
						log = append(log, "undo: "+err.Error())
					} else {
						log = append(log, "undo")
					}
				case step%13 == 0:
					if _, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 2}}); err != nil {
						t.Fatalf("%v: gc: %v", log, err)
					}
					log = append(log, "gc keep 2")
				}
			}
			if served && nserved == 0 {
				t.Fatal("no save was served: the test did not test")
			}
			attackVerify(t, r, ws)
		})
	}
}
