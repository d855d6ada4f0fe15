package restore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// noStage fails if the staging directory is still in dir.
func noStage(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(dir, stage)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("staging directory left behind (lstat: %v)", err)
	}
}

// edit gives the file rel below dir other content and an mtime no test
// writes, so its stat data surely differs from before.
func edit(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// TestApplyChanged checks that Apply stops with a *ChangedError naming the
// path when a path the plan deletes or replaces no longer holds what the
// plan saw (the edit is not in any checkpoint), or a path it creates was
// taken meanwhile. Found before the first change, the error also wraps
// ErrStage and the workspace is as the user left it, staging directory
// removed.
func TestApplyChanged(t *testing.T) {
	current := treegen.State{"a": file("one"), "z": file("delete me"), "keep": file("k")}
	// The target the cases use unless they name their own.
	target := treegen.State{"a": file("two"), "n/new": file("new"), "keep": file("k")}
	tests := []struct {
		name   string
		target treegen.State
		expect bool // Expect returns the stat data seen after writing current
		// before runs between planning and Apply; during runs as
		// BeforeChange.
		before, during func(t *testing.T, dir string)
		path           string // the path the error names
	}{
		{
			name:   "replaced file edited, stat expected",
			expect: true,
			before: func(t *testing.T, dir string) { edit(t, dir, "a", "ONE") },
			path:   "a",
		},
		{
			name:   "deleted file edited, stat expected",
			expect: true,
			before: func(t *testing.T, dir string) { edit(t, dir, "z", "edited, not saved") },
			path:   "z",
		},
		{
			// Without an expectation the content is compared: same size,
			// same mode, other bytes.
			name:   "replaced file edited, content compared",
			before: func(t *testing.T, dir string) { edit(t, dir, "a", "ONE") },
			path:   "a",
		},
		{
			name: "deleted file made a symlink, content compared",
			before: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, "z"))
				if err := os.Symlink("delete me", filepath.Join(dir, "z")); err != nil {
					t.Fatal(err)
				}
			},
			path: "z",
		},
		{
			name: "replaced file removed",
			before: func(t *testing.T, dir string) {
				if err := os.Remove(filepath.Join(dir, "a")); err != nil {
					t.Fatal(err)
				}
			},
			path: "a",
		},
		{
			// Edited after Apply compared its content, before the first
			// change (a is the first path the plan changes).
			name:   "replaced file edited after staging",
			target: treegen.State{"a": file("two"), "n/new": file("new"), "keep": file("k"), "z": file("delete me")},
			during: func(t *testing.T, dir string) { edit(t, dir, "a", "ONE") },
			path:   "a",
		},
		{
			// Created after Apply checked the path was free.
			name:   "created path taken after staging",
			target: treegen.State{"a": file("one"), "n/new": file("new"), "keep": file("k"), "z": file("delete me")},
			during: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, "n"), 0o755); err != nil {
					t.Fatal(err)
				}
				edit(t, dir, "n/new", "the user's")
			},
			path: "n/new",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newObjects()
			dir, a := workspace(t, o, current)
			if tt.expect {
				seen := map[string]Stat{}
				for p := range current {
					seen[p] = lstat(t, dir, p)
				}
				a.Expect = func(p string) (Stat, bool) {
					st, ok := seen[p]
					return st, ok
				}
			}
			tgt := target
			if tt.target != nil {
				tgt = tt.target
			}
			p := plan(t, o, current, tgt, nil, nil)
			var want disk // the user's state, which Apply must leave
			if tt.before != nil {
				tt.before(t, dir)
				want = readDisk(t, dir)
			}
			if tt.during != nil {
				a.BeforeChange = func() error {
					tt.during(t, dir)
					want = withoutStage(readDisk(t, dir))
					return nil
				}
			}
			out, err := a.Apply(context.Background(), p)
			var ce *ChangedError
			if !errors.As(err, &ce) || !errors.Is(err, ErrChanged) || !errors.Is(err, ErrStage) {
				t.Fatalf("Apply: %v, want a *ChangedError wrapping ErrChanged and ErrStage", err)
			}
			if ce.Path != tt.path {
				t.Errorf("error names %q, want %q: %v", ce.Path, tt.path, err)
			}
			if out != nil {
				t.Errorf("outcome %+v, want none", out)
			}
			noStage(t, dir)
			sameDisk(t, dir, want)
		})
	}
}

// withoutStage drops the staging directory from a disk state.
func withoutStage(d disk) disk {
	out := disk{entries: treegen.State{}}
	for p, e := range d.entries {
		if !strings.HasPrefix(p, stage+"/") {
			out.entries[p] = e
		}
	}
	for _, p := range d.dirs {
		if p != stage && !strings.HasPrefix(p, stage+"/") {
			out.dirs = append(out.dirs, p)
		}
	}
	return out
}

// TestApplyChangedMidway checks that a path edited after Apply changed the
// workspace stops it with ErrChanged but not ErrStage (the caller must roll
// back), and that the edit survives.
func TestApplyChangedMidway(t *testing.T) {
	current := treegen.State{"a": file("one"), "z": file("delete me")}
	target := treegen.State{"a": file("two")}
	o := newObjects()
	dir, a := workspace(t, o, current)
	p := plan(t, o, current, target, nil, nil)
	a.Hook = func(n int) error {
		if n == 1 { // z deleted, a not replaced yet
			edit(t, dir, "a", "the user's edit")
		}
		return nil
	}
	out, err := a.Apply(context.Background(), p)
	if !errors.Is(err, ErrChanged) || errors.Is(err, ErrStage) {
		t.Fatalf("Apply: %v, want ErrChanged without ErrStage", err)
	}
	if out == nil || !out.Changed || !reflect.DeepEqual(out.Deleted, []string{"z"}) || len(out.Written) != 0 {
		t.Fatalf("outcome %+v, want z deleted and nothing written", out)
	}
	if got := testutil.ReadFile(t, dir, "a"); got != "the user's edit" {
		t.Errorf("a = %q, want the user's edit", got)
	}
}

// TestApplyCorruptBlob checks that a blob whose content does not match its
// id (or that is missing) fails the restore while staging: the error wraps
// ErrStage, the workspace is exactly as before and no staging directory is
// left.
func TestApplyCorruptBlob(t *testing.T) {
	current := treegen.State{"a": file("old"), "d/x": file("x"), "gone": file("g")}
	target := treegen.State{"a": file("new!"), "b/c": exe("#!/bin/sh\n"), "l": link("a"), "d/x": file("x")}
	tests := []struct {
		name  string
		entry treegen.Entry // the target entry whose blob is damaged
		bad   []byte        // its blob's content (nil: missing)
	}{
		{"same size", file("new!"), []byte("NEW!")},
		{"shorter", exe("#!/bin/sh\n"), []byte("#!")},
		{"longer", file("new!"), []byte("new! and more")},
		{"symlink target", link("a"), []byte("/etc")},
		{"missing", exe("#!/bin/sh\n"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newObjects()
			dir, a := workspace(t, o, current)
			a.Workers = 1
			p := plan(t, o, current, target, nil, nil)
			id := object.Sum([]byte(tt.entry.Data))
			if tt.bad == nil {
				delete(o.blobs, id)
			} else {
				o.blobs[id] = tt.bad
			}
			before := readDisk(t, dir)
			changed := false
			a.BeforeChange = func() error { changed = true; return nil }
			out, err := a.Apply(context.Background(), p)
			if !errors.Is(err, ErrStage) || errors.Is(err, ErrChanged) || out != nil {
				t.Fatalf("Apply: %v (outcome %+v), want an error wrapping ErrStage", err, out)
			}
			if changed {
				t.Error("Apply went past staging")
			}
			sameDisk(t, dir, before)
			noStage(t, dir)
		})
	}
}

// TestApplyNeverThroughSymlink checks that a directory swapped for a
// symlink to a directory outside the workspace after staging (as an
// attacker racing the restore would) stops the restore before it writes,
// deletes or creates anything through the link: the outside directory
// stays empty, and the moved directory keeps its files. A symlink at the
// staging directory's name fails the restore too (Apply removes it, never
// following it).
func TestApplyNeverThroughSymlink(t *testing.T) {
	tests := []struct {
		name            string
		current, target treegen.State
		swapStage       bool // put the symlink at the staging directory's name instead
		midway          bool // swap after the first change, not before it
	}{
		{
			name:    "replace below",
			current: treegen.State{"d/x": file("old")},
			target:  treegen.State{"d/x": file("new")},
		},
		{
			name:    "create below",
			current: treegen.State{"d/x": file("x")},
			target:  treegen.State{"d/x": file("x"), "d/y": file("y")},
		},
		{
			name:    "create deeper below",
			current: treegen.State{"d/x": file("x")},
			target:  treegen.State{"d/x": file("x"), "d/e/f": file("f")},
		},
		{
			name:    "delete below",
			current: treegen.State{"d/x": file("x"), "d/y": file("y")},
			target:  treegen.State{"d/x": file("x")},
		},
		{
			name:    "delete all below",
			current: treegen.State{"d/x": file("x"), "d/e/y": file("y")},
			target:  treegen.State{"a": file("a")},
		},
		{
			name:    "create below, after a first change",
			current: treegen.State{"a": file("1"), "d/x": file("old")},
			target:  treegen.State{"a": file("2"), "d/x": file("new"), "d/y": file("y")},
			midway:  true,
		},
		{
			name:    "delete below, after a first change",
			current: treegen.State{"d/x": file("x"), "d/y": file("y"), "z": file("z")},
			target:  treegen.State{"d/x": file("x")},
			midway:  true,
		},
		{
			name:      "staging directory",
			current:   treegen.State{"d/x": file("old")},
			target:    treegen.State{"d/x": file("new")},
			swapStage: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newObjects()
			dir, a := workspace(t, o, tt.current)
			outside := t.TempDir()
			p := plan(t, o, tt.current, tt.target, nil, nil)
			var want disk
			if tt.swapStage {
				want = readDisk(t, dir)
				if err := os.Symlink(outside, filepath.Join(dir, stage)); err != nil {
					t.Fatal(err)
				}
			} else {
				swap := func() error {
					d := filepath.Join(dir, "d")
					if err := os.Rename(d, filepath.Join(dir, "moved")); err != nil {
						return err
					}
					if err := os.Symlink(outside, d); err != nil {
						return err
					}
					want = withoutStage(readDisk(t, dir))
					return nil
				}
				a.BeforeChange = swap
				if tt.midway {
					a.BeforeChange = nil
					a.Hook = func(n int) error {
						if n == 1 {
							return swap()
						}
						return nil
					}
				}
			}
			out, err := a.Apply(context.Background(), p)
			if err == nil {
				t.Fatalf("Apply succeeded (outcome %+v)", out)
			}
			if tt.midway == errors.Is(err, ErrStage) {
				t.Errorf("Apply: %v, want an error wrapping ErrStage: %v", err, !tt.midway)
			}
			if !tt.swapStage && !errors.Is(err, ErrChanged) {
				t.Errorf("Apply: %v, want an error wrapping ErrChanged", err)
			}
			if des, err := os.ReadDir(outside); err != nil || len(des) != 0 {
				t.Errorf("outside the workspace: %v (%v)", des, err)
			}
			if tt.midway {
				// The staging directory stays for the caller's rollback.
				equalDisk(t, withoutStage(readDisk(t, dir)), want)
				return
			}
			noStage(t, dir)
			sameDisk(t, dir, want)
		})
	}
}

// TestCheck checks that Check turns the writes that uncaptured data is in
// the way of into Keep with a reason, changing nothing, and that Apply
// keeps the same paths and leaves that data alone. Uncaptured (ignored or
// skipped) data is on disk but not in the current tree: a file where a
// directory must be made, a file or a directory holding files where a file
// is created. A tree of empty directories holds nothing and is replaced.
func TestCheck(t *testing.T) {
	current := treegen.State{"a": file("1")}
	uncaptured := treegen.State{"d": file("ignored"), "f": file("ignored too"), "e/junk": file("skipped")}
	target := treegen.State{"a": file("2"), "d/x": file("x"), "f": file("f"), "e": file("e"), "empty": file("was empty dirs")}
	o := newObjects()
	all := treegen.State{}
	for _, st := range []treegen.State{current, uncaptured} {
		for p, e := range st {
			all[p] = e
		}
	}
	dir, a := workspace(t, o, all)
	if err := os.MkdirAll(filepath.Join(dir, "empty", "sub", "subsub"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := plan(t, o, current, target, nil, nil)
	if want := []string{"update a", "create d/x", "create e", "create empty", "create f"}; !reflect.DeepEqual(ops(p), want) {
		t.Fatalf("plan %q, want %q", ops(p), want)
	}
	before := readDisk(t, dir)
	acts, err := a.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	sameDisk(t, dir, before)
	var got []string
	for _, act := range acts {
		got = append(got, string(act.Op)+" "+act.Path)
	}
	want := []string{"update a", "keep d/x", "keep e", "create empty", "keep f"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Check = %q, want %q", got, want)
	}
	reasons := map[string]string{
		"d/x": "d is a file that was not checkpointed",
		"e":   "a directory holding files that were not checkpointed",
		"f":   "it holds a file that was not checkpointed",
	}
	for _, act := range acts {
		if r, ok := reasons[act.Path]; ok && !strings.Contains(act.Reason, r) {
			t.Errorf("%s: reason %q, want it to say %q", act.Path, act.Reason, r)
		}
	}
	// The plan itself is unchanged.
	if ops(p)[1] != "create d/x" {
		t.Errorf("Check changed the plan: %q", ops(p))
	}

	out, err := a.Apply(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, act := range out.Kept {
		kept = append(kept, act.Path)
	}
	if want := []string{"d/x", "e", "f"}; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	checkDisk(t, dir, treegen.State{"a": file("2"), "empty": file("was empty dirs"),
		"d": file("ignored"), "f": file("ignored too"), "e/junk": file("skipped")})
	if bad := Verify(a.Root, out, p); len(bad) != 0 {
		t.Errorf("Verify = %q", bad)
	}
}

// TestApplyPrunes checks that directories emptied by deletions are
// removed, deepest first, while a directory that still holds files (the
// target's, or untracked ones) stays.
func TestApplyPrunes(t *testing.T) {
	current := treegen.State{"a/b/c/f": file("f"), "a/g": file("g"), "u/x": file("x"), "v/w/x": file("x")}
	target := treegen.State{"a/g": file("g")}
	o := newObjects()
	dir, a := workspace(t, o, current)
	// u holds a file the scan did not capture, and v/w an empty directory.
	if err := os.WriteFile(filepath.Join(dir, "u", "ignored"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "v", "w", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := plan(t, o, current, target, nil, map[string]bool{"u": true})
	out, err := a.Apply(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	checkDisk(t, dir, treegen.State{"a/g": file("g"), "u/ignored": file("")})
	for _, d := range []string{"a/b/c", "a/b", "v/w", "v"} {
		if !slices.Contains(out.Pruned, d) {
			t.Errorf("%s not among the pruned %q", d, out.Pruned)
		}
	}
	for _, d := range []string{"a", "u"} {
		if slices.Contains(out.Pruned, d) {
			t.Errorf("%s pruned", d)
		}
	}
	if slices.Index(out.Pruned, "a/b/c") > slices.Index(out.Pruned, "a/b") || slices.Index(out.Pruned, "v/w") > slices.Index(out.Pruned, "v") {
		t.Errorf("pruned %q, want the deepest first", out.Pruned)
	}
}

// TestApplyKeepsUntrackedDirectory checks that a directory the target has
// as a file, but that holds files the scan did not capture, is kept whole
// by the plan and Apply, and that the rest of the plan is carried out.
func TestApplyKeepsUntrackedDirectory(t *testing.T) {
	current := treegen.State{"d/x": file("x"), "e": file("1")}
	target := treegen.State{"d": file("a file now"), "e": file("2")}
	o := newObjects()
	dir, a := workspace(t, o, treegen.State{"d/x": file("x"), "d/ignored": file("i"), "e": file("1")})
	p := plan(t, o, current, target, nil, map[string]bool{"d": true})
	out, err := a.Apply(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	checkDisk(t, dir, treegen.State{"d/x": file("x"), "d/ignored": file("i"), "e": file("2")})
	var kept []string
	for _, act := range out.Kept {
		kept = append(kept, act.Path)
	}
	if want := []string{"d", "d/x"}; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	if !reflect.DeepEqual(out.Written, []string{"e"}) || len(out.Deleted)+len(out.Pruned) != 0 {
		t.Errorf("wrote %q, deleted %q, pruned %q; want only e written", out.Written, out.Deleted, out.Pruned)
	}
	if bad := Verify(a.Root, out, p); len(bad) != 0 {
		t.Errorf("Verify = %q", bad)
	}
}
