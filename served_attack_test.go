//go:build linux

package ckpt

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// Served saves under churn, with a second Repo on the same store (as
// another process would be) restoring, undoing, collecting garbage and
// saving without the watcher (or with other scan settings) in between:
// every save must record what a full scan without cache sees, whoever
// made it, and the store must stay whole.
func TestPropertyServedSavesWithOtherWriters(t *testing.T) {
	ctx := context.Background()
	served, others := 0, 0
	for i := 0; i < testutil.Trials(5); i++ {
		seed := uint64(i + 1)
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 18))
			ws := t.TempDir()
			tree := treegen.Random(rnd, treegen.Options{Files: 40 + rnd.IntN(60), Weird: true})
			if err := treegen.Write(ws, tree); err != nil {
				t.Fatal(err)
			}
			store := t.TempDir()
			r, err := Open(ctx, ws, Options{Store: store})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			other, err := Open(ctx, ws, Options{Store: store})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			small, err := Open(ctx, ws, Options{Store: store, MaxFileSize: 1500})
			if err != nil {
				t.Fatal(err)
			}
			defer small.Close()
			startWatcher(t, r)
			if _, err := r.Save(ctx, SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			var log []string
			check := func(who *Repo, res *SaveResult, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%v: save: %v", log, err)
				}
				if want := fullScanTree(t, who); res.Checkpoint.Tree != want {
					d, _ := who.Diff(ctx, DiffOptions{From: res.Checkpoint.ID.String()})
					var files []string
					if d != nil {
						for _, f := range d.Files {
							files = append(files, string(f.Path))
						}
					}
					t.Fatalf("%v: the save (served %v, scanned %d) differs from a full scan at %q", log, res.Served, res.Scanned, files)
				}
				if res.Served {
					served++
				}
			}
			for step := 0; step < 30; step++ {
				switch rnd.IntN(10) {
				case 0, 1, 2:
					if _, err := treegen.Mutate(rnd, ws, snapshot(t, ws), 1+rnd.IntN(4), true); err != nil {
						t.Fatal(err)
					}
					log = append(log, "mutate")
				case 3:
					if dirs := randomDirs(ws); len(dirs) > 0 {
						d := dirs[rnd.IntN(len(dirs))]
						if os.Rename(d, d+"-mv") == nil {
							log = append(log, "rename")
						}
					}
				case 4:
					os.WriteFile(filepath.Join(ws, ".gitignore"), []byte(fmt.Sprintf("*.%d\n", rnd.IntN(3))), 0o644)
					log = append(log, "gitignore")
				case 5: // another process restores an earlier checkpoint
					cps, err := other.Log(ctx, LogOptions{})
					if err != nil {
						t.Fatal(err)
					}
					target := cps[rnd.IntN(len(cps))]
					if _, err := other.Restore(ctx, target.ID.String(), RestoreOptions{}); err != nil {
						t.Fatalf("%v: restore: %v", log, err)
					}
					log = append(log, "other restore")
					others++
				case 6: // ... undoes
					if _, err := other.Undo(ctx); err != nil {
						log = append(log, "other undo: "+err.Error())
					} else {
						log = append(log, "other undo")
					}
					others++
				case 7: // ... collects garbage down to one checkpoint
					if _, err := other.GC(ctx, GCOptions{Retention: &Retention{Keep: 1}}); err != nil {
						t.Fatalf("%v: gc: %v", log, err)
					}
					log = append(log, "other gc keep 1")
					others++
				case 8: // ... saves without the watcher's service
					os.Setenv("CKPT_WATCH_SERVE", "0")
					res, err := other.Save(ctx, SaveOptions{AllowEmpty: true})
					os.Unsetenv("CKPT_WATCH_SERVE")
					log = append(log, "other save unserved")
					check(other, res, err)
					others++
				case 9: // ... saves with other scan settings
					res, err := small.Save(ctx, SaveOptions{AllowEmpty: true})
					log = append(log, "other save max 1500")
					check(small, res, err)
					others++
				}
				res, err := r.Save(ctx, SaveOptions{AllowEmpty: true})
				log = append(log, "save")
				check(r, res, err)
				if rnd.IntN(3) == 0 {
					if files, _ := bench(ws); len(files) > 0 {
						os.WriteFile(files[rnd.IntN(len(files))], []byte(fmt.Sprint("racy ", step)), 0o644)
						log = append(log, "racy edit")
					}
				}
			}
			if fr, err := other.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
				t.Fatalf("%v: fsck: %+v %v", log, fr, err)
			}
		})
	}
	if served == 0 || others == 0 {
		t.Fatalf("%d served saves, %d operations by others: the test did not test", served, others)
	}
}

// servedSaveRequest is the request a client sends r's watcher for a save
// of its workspace on top of HEAD, for a test to change and send.
func servedSaveRequest(t *testing.T, r *Repo) servedRequest {
	t.Helper()
	ctx := context.Background()
	info, err := r.st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, head, err := r.head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := servedRequest{Op: "save", Instance: info.Instance, Backend: BackendSQLite, Settings: r.scanSettings(), Exclude: r.exclude}
	if head != nil {
		req.Head = head.ID.String()
	}
	return req
}

// A process holding the store's lock may send the watcher any request;
// what the watcher records must still be a checkpoint ckpt would make:
// a kind the client would have refused is refused by the watcher too.
func TestServedRequestWithUnknownKind(t *testing.T) {
	ctx := context.Background()
	r, _ := openTest(t, map[string]string{"a.txt": "a"})
	startWatcher(t, r)
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := servedSaveRequest(t, r)
	req.Kind, req.AllowEmpty = "no such kind", true
	body, _ := json.Marshal(req)
	raw, err := watch.Serve(ctx, r.WatchSocket(), body, nil, nil)
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	var rep servedReply
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Refused == "" {
		t.Errorf("the watcher recorded checkpoint %.12s of kind %q; it should refuse", rep.Checkpoint, "no such kind")
	}
	if _, err := r.Log(ctx, LogOptions{}); err != nil {
		t.Errorf("log: %v", err)
	}
}

// A store deleted while this process still has it open (a watcher's
// Repo, an MCP server's) and made again: Open went through the registry
// of open databases to the deleted file's path, let SQLite create an
// empty file there and called it "corrupt database: ... not a ckpt store
// database"; that empty ckpt.db then broke every other process too.
func TestOpenAgainAfterStoreDeleted(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "f"), []byte("1"), 0o644)
	store := filepath.Join(t.TempDir(), "store")
	r, err := Open(ctx, ws, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(ctx, ws, Options{Store: store})
	if err != nil {
		fi, _ := os.Stat(filepath.Join(store, "ckpt.db"))
		t.Fatalf("open the store made again: %v (left %v)", err, fi)
	}
	defer fresh.Close()
	if _, err := fresh.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
}
