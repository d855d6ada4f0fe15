//go:build linux

package ckpt

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// startWatcher runs the workspace's watcher until the test ends.
func startWatcher(t *testing.T, r *Repo) {
	t.Helper()
	startWatcherWith(t, r, WatchOptions{})
}

func startWatcherWith(t *testing.T, r *Repo, opts WatchOptions) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Watch(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	for i := 0; i < 200; i++ {
		if _, err := r.WatchStatus(context.Background()); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the watcher did not start")
}

// fullScanTree is the workspace's tree as a scan without cache or watcher
// sees it.
func fullScanTree(t *testing.T, r *Repo) ID {
	t.Helper()
	res, err := scan.Scan(context.Background(), r.scanOptions(context.Background(), nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res.Root
}

func randomDirs(ws string) []string {
	var dirs []string
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != ws {
			if d.Name() == ".git" || strings.HasPrefix(d.Name(), ".ckpt-tmp-") {
				return filepath.SkipDir
			}
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs
}

// TestPropertyWatchSaveMatchesFullScan: with a watcher running, random
// changes — edits, deletions, new files and directories, renamed
// directories, type changes, changed ignore files, edits in the same
// instant as the save before, hard links made to files elsewhere and
// edits through them — are always captured: every save's tree is the tree
// a full scan without cache or watcher finds. And saves do take unchanged
// directories from the cache.
// Saves served by the watcher (the default) and saves that only ask it
// what changed must both record what a full scan sees.
func TestPropertyWatchSaveMatchesFullScan(t *testing.T) {
	t.Run("served", func(t *testing.T) { testWatchSaveMatchesFullScan(t, false) })
	t.Run("asked", func(t *testing.T) { testWatchSaveMatchesFullScan(t, true) })
}

func testWatchSaveMatchesFullScan(t *testing.T, noServe bool) {
	ctx := context.Background()
	reusedSaves, servedSaves, remembered, ignoredReused := 0, 0, 0, 0
	unstated := unstatedEntries.Load()
	for i := 0; i < testutil.Trials(6); i++ {
		seed := uint64(i + 1)
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 99))
			ws := t.TempDir()
			tree := treegen.Random(rnd, treegen.Options{Files: 40 + rnd.IntN(80), Weird: true})
			if err := treegen.Write(ws, tree); err != nil {
				t.Fatal(err)
			}
			r, err := Open(ctx, ws, Options{Store: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// Directories named ign* are ignored whatever .gitignore says.
			if err := os.WriteFile(filepath.Join(ws, ".ckptignore"), []byte("ign*/\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			startWatcherWith(t, r, WatchOptions{NoServe: noServe})
			if _, err := r.Save(ctx, SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			var log, links, ign []string
			// Links go to the root or to hl/, never to a directory an
			// ignore rule may cover (a link there is not seen; see
			// docs/guarantees.md).
			if err := os.Mkdir(filepath.Join(ws, "hl"), 0o755); err != nil {
				t.Fatal(err)
			}
			for step := 0; step < 25; step++ {
				op := rnd.IntN(10)
				switch op {
				case 0, 1:
					if _, err := treegen.Mutate(rnd, ws, snapshot(t, ws), 1+rnd.IntN(4), true); err != nil {
						t.Fatal(err)
					}
					log = append(log, "mutate")
				case 2: // rename a directory
					if dirs := randomDirs(ws); len(dirs) > 0 {
						d := dirs[rnd.IntN(len(dirs))]
						if err := os.Rename(d, d+"-moved"); err == nil {
							log = append(log, "rename "+d[len(ws):])
						}
					}
				case 3: // a new directory tree with files
					d := filepath.Join(ws, fmt.Sprintf("new%d/deep/er", step))
					os.MkdirAll(d, 0o755)
					os.WriteFile(filepath.Join(d, "f.txt"), []byte(fmt.Sprint(step)), 0o644)
					os.WriteFile(filepath.Join(filepath.Dir(d), "g.txt"), []byte("g"), 0o644)
					log = append(log, "mkdir -p")
				case 4: // an ignore file changes what is captured
					os.WriteFile(filepath.Join(ws, ".gitignore"), []byte(fmt.Sprintf("*.%d\nnew%d/\n", rnd.IntN(3), step-1)), 0o644)
					log = append(log, "gitignore")
				case 5: // nothing changed: the save takes everything from the cache
					log = append(log, "nothing")
				case 6: // a hard link to a file elsewhere
					if files, _ := bench(ws); len(files) > 0 {
						src := files[rnd.IntN(len(files))]
						dst := filepath.Join(ws, []string{"", "hl"}[rnd.IntN(2)], fmt.Sprint("link", step))
						if os.Link(src, dst) == nil {
							links = append(links, dst)
							log = append(log, "ln "+src[len(ws):]+" "+dst[len(ws):])
						}
					}
				case 7: // an edit through a link (the mutations edit the other names)
					if len(links) > 0 {
						l := links[rnd.IntN(len(links))]
						if f, err := os.OpenFile(l, os.O_WRONLY|os.O_APPEND, 0); err == nil {
							fmt.Fprintf(f, "through %s at %d\n", l[len(ws):], step)
							f.Close()
							log = append(log, "edit "+l[len(ws):])
						}
					}
				case 8: // an ignored directory tree made (build output), or one removed
					if len(ign) > 0 && rnd.IntN(3) == 0 {
						i := rnd.IntN(len(ign))
						os.RemoveAll(ign[i])
						log = append(log, "rm -r "+ign[i][len(ws):])
						ign = slices.Delete(ign, i, i+1)
						break
					}
					parent := ws
					if dirs := randomDirs(ws); len(dirs) > 0 && rnd.IntN(2) == 0 {
						parent = dirs[rnd.IntN(len(dirs))]
					}
					d := filepath.Join(parent, fmt.Sprint("ign", step))
					os.MkdirAll(filepath.Join(d, "obj"), 0o755)
					os.WriteFile(filepath.Join(d, "obj", "a.o"), []byte(fmt.Sprint(step)), 0o644)
					ign = append(ign, d)
					log = append(log, "mkdir "+d[len(ws):])
				case 9: // an ignored directory renamed, to an ignored name or not
					if len(ign) > 0 {
						i := rnd.IntN(len(ign))
						to := filepath.Join(filepath.Dir(ign[i]), fmt.Sprint([]string{"ign", "out"}[rnd.IntN(2)], "-moved", step))
						if os.Rename(ign[i], to) == nil {
							log = append(log, "mv "+ign[i][len(ws):]+" "+to[len(ws):])
							ign[i] = to
						}
					}
				}
				res, err := r.Save(ctx, SaveOptions{AllowEmpty: true})
				if err != nil {
					t.Fatalf("%v: save: %v", log, err)
				}
				if want := fullScanTree(t, r); res.Checkpoint.Tree != want {
					d, _ := r.Diff(ctx, DiffOptions{From: res.Checkpoint.ID.String()})
					t.Fatalf("%v: the save missed changes a full scan sees: %+v", log, d.Files)
				}
				if res.Created && len(res.Checkpoint.Parents) == 1 && checkRememberedChanges(t, r, res.Checkpoint, log) {
					remembered++
				}
				if res.Scanned < 0 {
					reusedSaves++
					if op == 8 {
						ignoredReused++
					}
				}
				if res.Served {
					servedSaves++
				}
				// Edit right after the save, in the same clock tick.
				if rnd.IntN(3) == 0 {
					if files, _ := bench(ws); len(files) > 0 {
						p := files[rnd.IntN(len(files))]
						os.WriteFile(p, []byte(fmt.Sprint("racy ", step)), 0o644)
						log = append(log, "racy edit")
					}
				}
			}
			if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
				t.Fatalf("fsck: %+v %v", fr, err)
			}
		})
	}
	if reusedSaves == 0 {
		t.Fatal("no save took unchanged directories from the cache: the watcher was not used")
	}
	if unstatedEntries.Load() == unstated {
		t.Fatal("no save took an entry of a directory it read from the cache: the watcher's list of changed entries was not used")
	}
	if ignoredReused == 0 {
		t.Fatal("no save after an ignored directory was made or removed took directories from the cache")
	}
	if noServe && servedSaves > 0 || !noServe && servedSaves == 0 {
		t.Fatalf("%d saves were served by the watcher (NoServe %v)", servedSaves, noServe)
	}
	if remembered == 0 {
		t.Fatal("no save remembered what it changed")
	}
}

// bench lists the regular files of ws (outside .git).
func bench(ws string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// Without a watcher, or with one that cannot vouch (just started), saves
// read everything and stay correct.
func TestWatchFallbacks(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a/b/c.txt": "c\n", "d.txt": "d\n", "x/y/z.txt": "z\n"})
	mustSave(t, r, "no watcher")
	if _, err := r.WatchStatus(ctx); err == nil {
		t.Fatal("a watcher runs before one was started")
	}
	startWatcher(t, r)
	writeFile(t, ws, "a/b/c.txt", "c2\n")
	res, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned < 0 {
		t.Fatal("the first save with a new watcher must read everything (its cache has no token)")
	}
	writeFile(t, ws, "a/b/c.txt", "c3\n")
	res, err = r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned >= 0 || res.Checkpoint.Tree != fullScanTree(t, r) {
		t.Fatalf("second save: scanned %d", res.Scanned)
	}
	st, err := r.WatchStatus(ctx)
	if err != nil || st.Watches < 3 || st.Root != r.Root() {
		t.Fatalf("status %+v %v", st, err)
	}
	if err := r.StopWatch(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	writeFile(t, ws, "d.txt", "d2\n")
	res, err = r.Save(ctx, SaveOptions{})
	if err != nil || res.Scanned < 0 || res.Checkpoint.Tree != fullScanTree(t, r) {
		t.Fatalf("after stop: %v scanned %d", err, res.Scanned)
	}
}
