package restore

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// ops lists a plan's actions as "op path" in plan order.
func ops(p *Plan) []string {
	var out []string
	for _, a := range p.Actions {
		out = append(out, string(a.Op)+" "+a.Path)
	}
	return out
}

// plan builds both states and plans from current to target.
func plan(t *testing.T, o *objects, current, target treegen.State, f *tree.Filter, untracked map[string]bool) *Plan {
	t.Helper()
	p, err := MakePlan(context.Background(), o.load, o.build(t, current), o.build(t, target), f, untracked)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMakePlan checks the actions and prune candidates MakePlan decides:
// creations, updates and deletions per path, type changes between file,
// directory and symlink, mode-only changes, filters and untracked
// directories in the way of a file.
func TestMakePlan(t *testing.T) {
	tests := []struct {
		name            string
		current, target treegen.State
		filter          []string
		untracked       []string
		want            []string // "op path", sorted by path
		prune           []string // deepest first
	}{
		{
			name:    "create update delete",
			current: treegen.State{"a": file("1"), "b": file("2"), "d/x": file("x")},
			target:  treegen.State{"a": file("1"), "b": file("22"), "c": file("3")},
			want:    []string{"update b", "create c", "delete d/x"},
			prune:   []string{"d"},
		},
		{
			name:    "file becomes a directory",
			current: treegen.State{"d": file("was a file"), "e": file("e")},
			target:  treegen.State{"d/x": file("x"), "d/y/z": file("z"), "e": file("e")},
			// The file goes (as a deletion), its path becomes a directory.
			want: []string{"delete d", "create d/x", "create d/y/z"},
		},
		{
			name:    "directory becomes a file",
			current: treegen.State{"d/x": file("x"), "d/y/z": file("z")},
			target:  treegen.State{"d": file("now a file")},
			// Everything below goes, the emptied directories are pruned
			// deepest first, then the file is created.
			want:  []string{"create d", "delete d/x", "delete d/y/z"},
			prune: []string{"d/y", "d"},
		},
		{
			name:    "directory becomes a symlink",
			current: treegen.State{"d/x": file("x")},
			target:  treegen.State{"d": link("elsewhere")},
			want:    []string{"create d", "delete d/x"},
			prune:   []string{"d"},
		},
		{
			name:    "symlink becomes a directory",
			current: treegen.State{"l": link("t")},
			target:  treegen.State{"l/f": file("f")},
			want:    []string{"delete l", "create l/f"},
		},
		{
			name:    "file and symlink swap",
			current: treegen.State{"f": file("t"), "l": link("t")},
			target:  treegen.State{"f": link("t"), "l": file("t")},
			want:    []string{"update f", "update l"},
		},
		{
			name:    "symlink target changes",
			current: treegen.State{"l": link("a")},
			target:  treegen.State{"l": link("b")},
			want:    []string{"update l"},
		},
		{
			name:    "exec bit only",
			current: treegen.State{"run": file("#!/bin/sh\n"), "x": exe("same")},
			target:  treegen.State{"run": exe("#!/bin/sh\n"), "x": exe("same")},
			want:    []string{"update run"},
		},
		{
			name:    "deep deletion prunes up to a directory the target writes in",
			current: treegen.State{"a/b/c/f": file("f"), "a/g": file("g")},
			target:  treegen.State{"a/g": file("g2")},
			want:    []string{"delete a/b/c/f", "update a/g"},
			prune:   []string{"a/b/c", "a/b"},
		},
		{
			name:    "filter restricts to some paths",
			current: treegen.State{"a": file("1"), "b/x": file("x"), "b/z": file("z"), "c": file("c")},
			target:  treegen.State{"a": file("2"), "b/x": file("x2"), "b/y": file("y"), "d": file("d")},
			filter:  []string{"b"},
			want:    []string{"update b/x", "create b/y", "delete b/z"},
		},
		{
			name:    "filter on one file",
			current: treegen.State{"a": file("1"), "b": file("1")},
			target:  treegen.State{"a": file("2"), "b": file("2")},
			filter:  []string{"b"},
			want:    []string{"update b"},
		},
		{
			name:    "filter below a path that is a file now",
			current: treegen.State{"d": file("a file in the way")},
			target:  treegen.State{"d/f": file("f"), "d/g": file("g")},
			filter:  []string{"d/f"},
			// The file d goes although the filter does not name it, as
			// git checkout does it; d/g is not restored.
			want: []string{"delete d", "create d/f"},
		},
		{
			name:    "filter below a directory that is a file in the target",
			current: treegen.State{"d/f": file("f")},
			target:  treegen.State{"d": file("d")},
			filter:  []string{"d/f"},
			want:    []string{"delete d/f"},
			prune:   []string{"d"},
		},
		{
			name:      "untracked files block a directory becoming a file",
			current:   treegen.State{"d/x": file("x"), "d/y/z": file("z"), "e": file("1")},
			target:    treegen.State{"d": file("now a file"), "e": file("2")},
			untracked: []string{"d/y"},
			// d and everything below it are kept; no directory of d pruned.
			want: []string{"keep d", "keep d/x", "keep d/y/z", "update e"},
		},
		{
			name:      "untracked files block a directory becoming a symlink",
			current:   treegen.State{"d/x": file("x")},
			target:    treegen.State{"d": link("x")},
			untracked: []string{"d"},
			want:      []string{"keep d", "keep d/x"},
		},
		{
			name:      "untracked files elsewhere block nothing",
			current:   treegen.State{"d/x": file("x"), "dd/x": file("x")},
			target:    treegen.State{"d": file("d")},
			untracked: []string{"dd", "e/f"},
			want:      []string{"create d", "delete d/x", "delete dd/x"},
			prune:     []string{"dd", "d"},
		},
		{
			name:      "untracked files in a directory the target drops",
			current:   treegen.State{"d/x": file("x")},
			target:    treegen.State{},
			untracked: []string{"d"},
			// Nothing replaces d: its tracked files go, and pruning d
			// will fail harmlessly at apply (it is not empty).
			want:  []string{"delete d/x"},
			prune: []string{"d"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newObjects()
			var untracked map[string]bool
			if tt.untracked != nil {
				untracked = map[string]bool{}
				for _, d := range tt.untracked {
					untracked[d] = true
				}
			}
			p := plan(t, o, tt.current, tt.target, tree.NewFilter(tt.filter), untracked)
			if got := ops(p); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("actions:\ngot  %q\nwant %q", got, tt.want)
			}
			if !reflect.DeepEqual(p.prune, tt.prune) {
				t.Errorf("prune: got %q, want %q", p.prune, tt.prune)
			}
			for _, a := range p.Actions {
				checkEntries(t, a, tt.current, tt.target)
			}
		})
	}
}

// checkEntries fails unless an action's Old and New are the entries the
// two states have at its path (nil for a directory or nothing), and a Keep
// has a reason.
func checkEntries(t *testing.T, a Action, current, target treegen.State) {
	t.Helper()
	o := newObjects()
	want := func(st treegen.State) *object.Entry {
		e, ok := st[a.Path]
		if !ok {
			return nil
		}
		return o.entry(e)
	}
	same := func(got, want *object.Entry) bool {
		if got == nil || want == nil {
			return got == want
		}
		return got.Mode == want.Mode && got.ID == want.ID && got.Size == want.Size
	}
	if w := want(current); !same(a.Old, w) {
		t.Errorf("%s: Old = %+v, want %+v", a.Path, a.Old, w)
	}
	if w := want(target); !same(a.New, w) {
		t.Errorf("%s: New = %+v, want %+v", a.Path, a.New, w)
	}
	if (a.Op == Keep) != (a.Reason != "") {
		t.Errorf("%s: op %s with reason %q", a.Path, a.Op, a.Reason)
	}
}

// TestPlanEmpty checks that identical trees give an empty plan, and that
// a plan whose every action is a Keep is empty too.
func TestPlanEmpty(t *testing.T) {
	st := treegen.State{"a": file("1"), "d/e/f": exe("f"), "l": link("a")}
	o := newObjects()
	p := plan(t, o, st, st, nil, nil)
	if !p.Empty() || len(p.Actions) != 0 || len(p.prune) != 0 {
		t.Errorf("identical trees: plan %q, prune %q", ops(p), p.prune)
	}
	if w, d, k := p.Count(); w+d+k != 0 {
		t.Errorf("identical trees: Count = %d, %d, %d", w, d, k)
	}
	// A filter on a path that differs elsewhere: nothing to do either.
	p = plan(t, o, st, treegen.State{"a": file("2"), "d/e/f": exe("f"), "l": link("a")}, tree.NewFilter([]string{"d"}), nil)
	if !p.Empty() {
		t.Errorf("filtered out: plan %q is not empty", ops(p))
	}
	// Every change kept.
	p = plan(t, o, treegen.State{"d/x": file("x")}, treegen.State{"d": file("d")}, nil, map[string]bool{"d": true})
	if !p.Empty() {
		t.Errorf("all kept: plan %q is not empty", ops(p))
	}
	// A plan that only prunes is not empty.
	p = &Plan{prune: []string{"d"}}
	if p.Empty() {
		t.Error("a plan pruning d is empty")
	}
}

// TestPlanCount checks Count against a plan with writes, deletions and
// kept paths.
func TestPlanCount(t *testing.T) {
	o := newObjects()
	p := plan(t, o,
		treegen.State{"a": file("1"), "b": file("b"), "k/x": file("x"), "k/y": file("y"), "gone": file("g")},
		treegen.State{"a": file("2"), "c": file("c"), "k": file("k")},
		nil, map[string]bool{"k": true})
	w, d, k := p.Count()
	// writes: a, c; deletes: b, gone; kept: k, k/x, k/y.
	if w != 2 || d != 2 || k != 3 {
		t.Errorf("Count = %d writes, %d deletes, %d kept; want 2, 2, 3 (plan %q)", w, d, k, ops(p))
	}
}

// TestKeepBelow checks that KeepBelow turns every action at or below the
// nested directories into a Keep with the reason, leaves the others, and
// drops the prune candidates inside them.
func TestKeepBelow(t *testing.T) {
	o := newObjects()
	p := plan(t, o,
		treegen.State{"sub/x": file("x"), "sub/old/y": file("y"), "subway": file("1"), "other/z": file("z")},
		treegen.State{"sub/x": file("x2"), "sub/new": file("n"), "subway": file("2")},
		nil, nil)
	if want := []string{"other", "sub/old"}; !reflect.DeepEqual(slices.Sorted(slices.Values(p.prune)), want) {
		t.Fatalf("prune before: %q, want %q", p.prune, want)
	}
	p.KeepBelow([]string{"sub"}, "a nested repository")
	want := []string{"delete other/z", "keep sub/new", "keep sub/old/y", "keep sub/x", "update subway"}
	if got := ops(p); !reflect.DeepEqual(got, want) {
		t.Errorf("actions:\ngot  %q\nwant %q", got, want)
	}
	for _, a := range p.Actions {
		if strings.HasPrefix(a.Path, "sub/") && a.Reason != "a nested repository" {
			t.Errorf("%s: reason %q", a.Path, a.Reason)
		}
	}
	if want := []string{"other"}; !reflect.DeepEqual(p.prune, want) {
		t.Errorf("prune after: %q, want %q", p.prune, want)
	}
	// No directories: nothing changes.
	before := ops(p)
	p.KeepBelow(nil, "x")
	if got := ops(p); !reflect.DeepEqual(got, before) {
		t.Errorf("KeepBelow(nil) changed the plan: %q", got)
	}
}

// TestPruneAlso checks how recovery merges the prune candidates of an
// interrupted restore's plan q into the plan p from the workspace as it is
// now: q's candidates are added deepest first, except those p's target
// has as directories, and those at or below a path q's target has as a
// file or symlink.
func TestPruneAlso(t *testing.T) {
	o := newObjects()
	// The interrupted restore deleted a/b/c/f, e/x and s/y, made s a
	// symlink and put n/new in place.
	q := plan(t, o,
		treegen.State{"a/b/c/f": file("f"), "e/x": file("x"), "s/y": file("y"), "keep": file("k")},
		treegen.State{"s": link("k"), "n/new": file("n"), "keep": file("k"), "e/back": file("b")},
		nil, nil)
	if want := []string{"a/b/c", "a/b", "s", "a"}; !reflect.DeepEqual(q.prune, want) {
		t.Fatalf("q.prune = %q, want %q", q.prune, want)
	}
	// Now: the deletions are done, e/back and n/new are not written yet.
	p := plan(t, o,
		treegen.State{"s": link("k"), "keep": file("k")},
		treegen.State{"s": link("k"), "n/new": file("n"), "keep": file("k"), "e/back": file("b")},
		nil, nil)
	if len(p.prune) != 0 {
		t.Fatalf("p.prune = %q, want none", p.prune)
	}
	p.PruneAlso(q)
	if want := []string{"a/b/c", "a/b", "a"}; !reflect.DeepEqual(p.prune, want) {
		t.Errorf("after PruneAlso: prune %q, want %q", p.prune, want)
	}
	if p.Empty() {
		t.Error("a plan with prune candidates is empty")
	}
	// Merging again adds nothing twice.
	p.PruneAlso(q)
	if want := []string{"a/b/c", "a/b", "a"}; !reflect.DeepEqual(p.prune, want) {
		t.Errorf("after a second PruneAlso: prune %q, want %q", p.prune, want)
	}
	// Recovery of a finished restore: an empty plan gets q's candidates.
	done := treegen.State{"s": link("k"), "n/new": file("n"), "keep": file("k"), "e/back": file("b")}
	p = plan(t, o, done, done, nil, nil)
	p.PruneAlso(q)
	if want := []string{"a/b/c", "a/b", "a"}; !reflect.DeepEqual(p.prune, want) {
		t.Errorf("empty plan after PruneAlso: prune %q, want %q", p.prune, want)
	}
	// A candidate of q's below one of p's own candidates is still added:
	// the interrupted restore deleted a/b/f (leaving a/b empty), and the
	// plan from now prunes a only. Recovery must remove a/b as the
	// uninterrupted restore would, even when a stays (it holds something
	// no checkpoint has).
	q = plan(t, o, treegen.State{"a/b/f": file("f"), "a/g": file("g")}, treegen.State{}, nil, nil)
	if want := []string{"a/b", "a"}; !reflect.DeepEqual(q.prune, want) {
		t.Fatalf("q.prune = %q, want %q", q.prune, want)
	}
	p = plan(t, o, treegen.State{"a/g": file("g")}, treegen.State{}, nil, nil)
	p.PruneAlso(q)
	if want := []string{"a/b", "a"}; !reflect.DeepEqual(p.prune, want) {
		t.Errorf("below p's own candidate: prune %q, want %q", p.prune, want)
	}
}
