//go:build linux

package ckpt

import (
	"os"
	"path/filepath"
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
