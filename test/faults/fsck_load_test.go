//go:build unix

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
)

// Class 9: fsck under load. fsck reads the store in one consistent
// snapshot, so saves committing while it runs never make a healthy store
// look corrupt.

// TestFsckBetweenTables: a save commits at each point where fsck has read
// one table and not yet the next; fsck still finds nothing wrong, and
// checks the store as it was when it began.
func TestFsckBetweenTables(t *testing.T) {
	for _, table := range []string{"chunks", "blobs", "trees", "checkpoints", "refs"} {
		t.Run(table, func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{"a.txt": "a", "d/b.txt": "b"})
			r := e.Open(ckpt.Options{})
			if _, err := r.Save(context.Background(), ckpt.SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			writer := e.Open(ckpt.Options{})
			var once sync.Once
			saved := false
			disarm := failpoint.Set("fsck/between("+table+")", func(string) error {
				once.Do(func() {
					// New blobs, a new tree, a checkpoint, refs and an op.
					e.Write(map[string]string{"a.txt": "a2", "d/c.txt": "c", "e/f.txt": "f"})
					if _, err := writer.Save(context.Background(), ckpt.SaveOptions{Message: "during fsck"}); err != nil {
						t.Error(err)
						return
					}
					if _, err := writer.GC(context.Background(), ckpt.GCOptions{Retention: &ckpt.Retention{Keep: 1}, NoCompact: true}); err != nil {
						t.Error(err)
					}
					saved = true
				})
				return nil
			})
			defer disarm()
			res, err := r.Fsck(context.Background())
			if !saved {
				t.Fatalf("the failpoint fsck/between(%s) was not reached", table)
			}
			if err != nil {
				t.Fatalf("fsck with a save committed after it read %s: %v (problems: %v)", table, err, res.Problems)
			}
			disarm()
			// A second fsck sees the new state, also clean.
			if _, err := r.Fsck(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFsckUnderLoad: fsck runs again and again while another process-like
// writer (its own connection pool and lock) saves random edits; it never
// reports a problem.
func TestFsckUnderLoad(t *testing.T) {
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a"})
	r := e.Open(ckpt.Options{})
	writer := e.Open(ckpt.Options{})
	if _, err := writer.Save(context.Background(), ckpt.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	committed := make(chan struct{}, 1)
	go func() {
		rnd := rand.New(rand.NewPCG(9, 9))
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			files := map[string]string{}
			for range 1 + rnd.IntN(5) {
				files[fmt.Sprintf("d%d/f%d.txt", rnd.IntN(4), rnd.IntN(20))] = fmt.Sprint(i, rnd.Int())
			}
			e.Write(files)
			if _, err := writer.Save(context.Background(), ckpt.SaveOptions{Message: fmt.Sprint(i)}); err != nil {
				done <- err
				return
			}
			select {
			case committed <- struct{}{}:
			default:
			}
			if i%7 == 6 {
				if _, err := writer.GC(context.Background(), ckpt.GCOptions{Retention: &ckpt.Retention{Keep: 3}, NoCompact: true}); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	// Each fsck waits for the writer to commit at least once meanwhile.
	bad := 0
	for range rounds {
		select {
		case <-committed:
		case err := <-done:
			t.Fatalf("the writer stopped: %v", err)
		}
		res, err := r.Fsck(context.Background())
		if err != nil {
			bad++
			t.Errorf("fsck under load: %v (problems: %v)", err, res.Problems)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if bad > 0 {
		t.Fatalf("%d of %d fsck runs reported a healthy store corrupt", bad, rounds)
	}
}
