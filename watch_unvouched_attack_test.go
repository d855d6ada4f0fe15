//go:build linux

package ckpt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
)

// linkWrite makes a hard link of the workspace file from at link, appends
// s through it and removes the link again.
func linkWrite(t *testing.T, ws, from, link, s string) {
	t.Helper()
	if err := os.Link(filepath.Join(ws, from), filepath.Join(ws, link)); err != nil {
		t.Error(err)
		return
	}
	f, err := os.OpenFile(filepath.Join(ws, link), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Error(err)
		return
	}
	f.WriteString(s)
	f.Close()
	if err := os.Remove(filepath.Join(ws, link)); err != nil {
		t.Error(err)
	}
}

// A new directory a save reads, in which, before the watcher watches it,
// a hard link to its parent's .gitignore is made and written through:
// the rule added there leaves the new directory out by the time the save
// checks it, though it was one a save reads when a link to a file
// elsewhere was made, written through and removed in it. The save must
// not take that file's directory from the cache.
func TestWatchUnvouchedRulesChangedThroughLink(t *testing.T) {
	for _, noServe := range []bool{false, true} {
		t.Run(map[bool]string{false: "served", true: "asked"}[noServe], func(t *testing.T) {
			r, ws := openTest(t, map[string]string{"a/f.txt": "v1\n", "src/.gitignore": "*.o\n", "src/a.go": "package a\n"})
			startWatcherWith(t, r, WatchOptions{NoServe: noServe})
			saveMatchesFull(t, r, "first save")
			saveMatchesFull(t, r, "second save")
			saveExpect(t, r, "nothing changed", true)
			var once sync.Once
			disarm := failpoint.Set("watch/event(src/new)", func(string) error {
				once.Do(func() {
					linkWrite(t, ws, "src/.gitignore", "src/new/l1", "new/\n")
					linkWrite(t, ws, "a/f.txt", "src/new/l2", "written through a link in src/new\n")
				})
				return nil
			})
			defer disarm()
			if err := os.Mkdir(filepath.Join(ws, "src/new"), 0o755); err != nil {
				t.Fatal(err)
			}
			saveMatchesFull(t, r, "a link made, written through and removed in src/new")
		})
	}
}

// New directories a save reads, each with a hard link to a/f.txt made,
// written through and removed in it before the watcher watches it (at the
// moment the watcher handles its creation), then renamed, removed or
// left: the rules around (negations, directory-only patterns,
// .git/info/exclude, odd names) never make the save take a/ from the
// cache. Each save equals a full scan.
func TestWatchUnvouchedRulesCorners(t *testing.T) {
	type tc struct {
		name, mk string          // the directory made (a link made in it at its event)
		then     func(ws string) // right after the link, at the same event
	}
	mv := func(from, to string) func(string) {
		return func(ws string) { os.Rename(filepath.Join(ws, from), filepath.Join(ws, to)) }
	}
	cases := []tc{
		{name: "renamed to an ignored name", mk: "src/n1", then: mv("src/n1", "src/n1.cache")},
		{name: "renamed below an ignored directory", mk: "src/n2", then: mv("src/n2", "build/n2")},
		{name: "removed", mk: "src/n3", then: func(ws string) { os.Remove(filepath.Join(ws, "src/n3")) }},
		{name: "negated", mk: "keep.cache"},
		{name: "directory-only negation", mk: "gen"},
		{name: "non-UTF-8", mk: "src/n\xff"},
		{name: "newline and spaces", mk: "src/a b\nc "},
		{name: "parent renamed", mk: "src/p/n4", then: mv("src/p", "src/p2")},
		{name: "parent renamed to an ignored name", mk: "src/q/n5", then: mv("src/q", "src/q.cache")},
		{name: "replaced by a file", mk: "src/n6", then: func(ws string) {
			os.Remove(filepath.Join(ws, "src/n6"))
			os.WriteFile(filepath.Join(ws, "src/n6"), []byte("now a file\n"), 0o644)
		}},
		{name: "replaced by a symlink to an ignored one", mk: "src/n7", then: func(ws string) {
			os.Remove(filepath.Join(ws, "src/n7"))
			os.Symlink("build", filepath.Join(ws, "src/n7"))
		}},
	}
	for _, noServe := range []bool{false, true} {
		t.Run(map[bool]string{false: "served", true: "asked"}[noServe], func(t *testing.T) {
			r, ws := openTest(t, map[string]string{
				"a/f.txt":    "v1\n",
				".gitignore": "*.cache/\n!keep.cache/\nbuild/\ngen\n!gen/\nxfile\n",
				"src/a.go":   "package a\n", "src/p/x.go": "x\n", "src/q/y.go": "y\n",
				".git/info/exclude": "excl/\n",
			})
			startWatcherWith(t, r, WatchOptions{NoServe: noServe})
			saveMatchesFull(t, r, "first save")
			saveMatchesFull(t, r, "second save")
			saveExpect(t, r, "nothing changed", true)
			if err := os.Mkdir(filepath.Join(ws, "excl"), 0o755); err != nil {
				t.Fatal(err)
			}
			saveExpect(t, r, "a directory .git/info/exclude leaves out", true)
			os.MkdirAll(filepath.Join(ws, "src/p"), 0o755)
			os.MkdirAll(filepath.Join(ws, "src/q"), 0o755)
			for i, c := range cases {
				var once sync.Once
				disarm := failpoint.Set("watch/event("+c.mk+")", func(string) error {
					once.Do(func() {
						linkWrite(t, ws, "a/f.txt", c.mk+"/l", fmt.Sprintf("written through a link in %q\n", c.mk))
						if c.then != nil {
							c.then(ws)
						}
					})
					return nil
				})
				if err := os.MkdirAll(filepath.Join(ws, c.mk), 0o755); err != nil {
					t.Fatal(err)
				}
				saveMatchesFull(t, r, fmt.Sprintf("%d %s", i, c.name))
				disarm()
				saveExpect(t, r, c.name+": nothing changed since", true)
			}
		})
	}
}

// Directories made, renamed and removed (ignored and not, hard links made
// to a/f.txt and written through in some) by another goroutine while
// saves run: no save fails, and once it stops, the next save equals a
// full scan and the one after it is incremental again.
func TestWatchUnvouchedConcurrentChurn(t *testing.T) {
	r, ws := openTest(t, map[string]string{"a/f.txt": "v1\n", ".gitignore": "*.cache/\n", "src/a.go": "package a\n", "lib/b.go": "b\n"})
	startWatcher(t, r)
	saveMatchesFull(t, r, "first save")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			names := []string{fmt.Sprintf("src/d%d", i%7), fmt.Sprintf("src/d%d.cache", i%5)}
			for _, n := range names {
				p := filepath.Join(ws, n)
				os.MkdirAll(filepath.Join(p, "sub"), 0o755)
				if i%3 == 0 {
					if os.Link(filepath.Join(ws, "a/f.txt"), filepath.Join(p, "l")) == nil {
						if f, err := os.OpenFile(filepath.Join(p, "l"), os.O_WRONLY|os.O_APPEND, 0); err == nil {
							f.WriteString("x\n")
							f.Close()
						}
						os.Remove(filepath.Join(p, "l"))
					}
				}
				switch i % 4 {
				case 1:
					os.Rename(p, p+"x.cache")
					os.RemoveAll(p + "x.cache")
				case 2:
					os.RemoveAll(p)
				}
			}
		}
	}()
	// a/f.txt is written through links all the time, so a save may find
	// it changing on every one of its reads and say so: that refusal is
	// the guarantee (no torn file is stored), not a failure. Such saves
	// are tried again; any other error fails the test.
	for saved, tries := 0, 0; saved < 15; tries++ {
		_, err := r.Save(context.Background(), SaveOptions{AllowEmpty: true})
		var pe *PathError
		switch {
		case err == nil:
			saved++
		case errors.As(err, &pe) && pe.Path == "a/f.txt" && strings.Contains(pe.Error(), "keeps changing") && tries < 1000:
			runtime.Gosched()
		default:
			close(stop)
			<-done
			t.Fatal(err)
		}
	}
	close(stop)
	<-done
	saveMatchesFull(t, r, "after the churn stopped")
	saveExpect(t, r, "nothing changed since", true)
}
