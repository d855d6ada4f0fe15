package restore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"sort"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// TestPropertyApply: for random current and target trees (symlinks, exec
// bits, binary and empty files, non-UTF-8 names, file <-> directory <->
// symlink changes), written on disk as the current tree, the plan to the
// target — whole or filtered to a few paths — applied by a real Applier
// leaves the disk exactly as wanted (types, modes, content, symlink
// targets, no directory more, no staging directory left), and Verify finds
// nothing wrong. Planning again then gives an empty plan, whose Apply
// changes nothing.
func TestPropertyApply(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < testutil.Trials(50); i++ {
		seed := uint64(i + 1)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 14))
			current := treegen.Random(r, treegen.Options{Files: 5 + r.IntN(40), Weird: true})
			var target treegen.State
			if r.IntN(3) == 0 {
				// Unrelated trees: many type changes at the same names.
				target = treegen.Random(r, treegen.Options{Files: r.IntN(40), Weird: true})
			} else {
				scratch := t.TempDir()
				if err := treegen.Write(scratch, current); err != nil {
					t.Fatal(err)
				}
				var err error
				target, err = treegen.Mutate(r, scratch, current, 1+r.IntN(20), true)
				if err != nil {
					t.Fatal(err)
				}
			}
			o := newObjects()
			cur, tgt := o.build(t, current), o.build(t, target)
			dir, a := workspace(t, o, current)
			a.Workers = 1 + r.IntN(4)
			var f *tree.Filter
			want := target
			if r.IntN(3) == 0 {
				f = randFilter(r, current, target)
				want = filtered(f, current, target)
			}
			if r.IntN(2) == 0 {
				// What a scan would have recorded (else Apply compares
				// content).
				seen := map[string]Stat{}
				for p := range current {
					seen[p] = lstat(t, dir, p)
				}
				a.Expect = func(p string) (Stat, bool) {
					st, ok := seen[p]
					return st, ok
				}
			}
			p, err := MakePlan(ctx, o.load, cur, tgt, f, nil)
			if err != nil {
				t.Fatal(err)
			}
			out, err := a.Apply(ctx, p)
			if err != nil {
				t.Fatalf("apply (filter %q): %v", f.Paths(), err)
			}
			checkDisk(t, dir, want)
			if bad := Verify(a.Root, out, p); len(bad) != 0 {
				t.Errorf("Verify: %q", bad)
			}
			if len(out.Kept) != 0 {
				t.Errorf("kept %d paths, want none", len(out.Kept))
			}
			if w, d, _ := p.Count(); len(out.Written) != w || len(out.Deleted) != d {
				t.Errorf("wrote %d and deleted %d paths, want %d and %d", len(out.Written), len(out.Deleted), w, d)
			}
			if out.Changed == p.Empty() {
				t.Errorf("Changed = %v for a plan with Empty() = %v", out.Changed, p.Empty())
			}
			if t.Failed() {
				t.Fatalf("filter %q, plan %q, prune %q", f.Paths(), ops(p), p.prune)
			}

			// Now the workspace is the wanted tree: nothing to do.
			again, err := MakePlan(ctx, o.load, o.build(t, want), tgt, f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !again.Empty() {
				t.Fatalf("plan after apply is not empty: %q", ops(again))
			}
			before := readDisk(t, dir)
			out, err = a.Apply(ctx, again)
			if err != nil {
				t.Fatal(err)
			}
			if out.Changed || len(out.Written)+len(out.Deleted)+len(out.Pruned)+len(out.Made) != 0 {
				t.Errorf("empty plan: outcome %+v", out)
			}
			sameDisk(t, dir, before)
		})
	}
}

// randFilter returns a filter on one to three paths of either tree, their
// directories, or a path neither has.
func randFilter(r *rand.Rand, current, target treegen.State) *tree.Filter {
	var all []string
	seen := map[string]bool{}
	for _, st := range []treegen.State{current, target} {
		for p := range st {
			for q := p; q != "." && !seen[q]; q = path.Dir(q) {
				seen[q] = true
				all = append(all, q)
			}
		}
	}
	sort.Strings(all)
	var paths []string
	for range 1 + r.IntN(3) {
		if len(all) == 0 || r.IntN(8) == 0 {
			paths = append(paths, "no/such/path")
			continue
		}
		paths = append(paths, all[r.IntN(len(all))])
	}
	return tree.NewFilter(paths)
}

// filtered is the state a restore to target limited by f leaves: the
// current tree outside the filter, the target inside it, less the files
// outside it that lie where a restored path needs a directory (they go, as
// git checkout does it).
func filtered(f *tree.Filter, current, target treegen.State) treegen.State {
	out := treegen.State{}
	for p, e := range current {
		if !f.Match(p) {
			out[p] = e
		}
	}
	for p, e := range target {
		if f.Match(p) {
			out[p] = e
			for d := path.Dir(p); d != "."; d = path.Dir(d) {
				delete(out, d)
			}
		}
	}
	return out
}

// TestPropertyApplyUncaptured: as TestPropertyApply, with files on disk
// that the current tree does not have (ignored or skipped by the scan),
// the directories holding them passed to MakePlan as untracked. Apply
// succeeds; every uncaptured file is left as it was; each path the plan or
// Apply keeps stays as in the current tree, every other path is as in the
// target; Verify finds nothing wrong.
func TestPropertyApplyUncaptured(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < testutil.Trials(50); i++ {
		seed := uint64(i + 1)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1414))
			current := treegen.Random(r, treegen.Options{Files: 5 + r.IntN(30), MaxDepth: 3})
			scratch := t.TempDir()
			if err := treegen.Write(scratch, current); err != nil {
				t.Fatal(err)
			}
			target, err := treegen.Mutate(r, scratch, current, 1+r.IntN(20), false)
			if err != nil {
				t.Fatal(err)
			}
			// Uncaptured files: anywhere they do not collide with the
			// current tree, often where the target has something.
			uncaptured := treegen.State{}
			both := treegen.State{}
			for p, e := range current {
				both[p] = e
			}
			var names []string // where the target differs
			for p, e := range target {
				if ce, ok := current[p]; ok && ce == e {
					continue
				}
				for q := p; q != "."; q = path.Dir(q) {
					names = append(names, q)
				}
			}
			sort.Strings(names)
			for range 1 + r.IntN(8) {
				var p string
				if len(names) > 0 && r.IntN(4) != 0 {
					p = names[r.IntN(len(names))]
				} else {
					p = randPath(r)
				}
				if r.IntN(3) == 0 {
					p += "/ignored"
				}
				if treegen.Conflicts(both, p) {
					continue
				}
				e := file("uncaptured " + p)
				both[p], uncaptured[p] = e, e
			}
			untracked := map[string]bool{}
			for p := range uncaptured {
				untracked[path.Dir(p)] = true
			}
			delete(untracked, ".")

			o := newObjects()
			cur, tgt := o.build(t, current), o.build(t, target)
			dir, a := workspace(t, o, both)
			p, err := MakePlan(ctx, o.load, cur, tgt, nil, untracked)
			if err != nil {
				t.Fatal(err)
			}
			out, err := a.Apply(ctx, p)
			if err != nil {
				t.Fatalf("apply: %v\nuncaptured %q\nplan %q", err, paths(uncaptured), ops(p))
			}
			want := treegen.State{}
			for p, e := range target {
				want[p] = e
			}
			for _, act := range append(planKept(p), out.Kept...) {
				if e, ok := current[act.Path]; ok {
					want[act.Path] = e
				} else {
					delete(want, act.Path)
				}
			}
			for p, e := range uncaptured {
				want[p] = e
			}
			checkDisk(t, dir, want)
			if bad := Verify(a.Root, out, p); len(bad) != 0 {
				t.Errorf("Verify: %q", bad)
			}
			if t.Failed() {
				t.Fatalf("uncaptured %q\nplan %q\nkept by Apply %d", paths(uncaptured), ops(p), len(out.Kept))
			}
		})
	}
}

// planKept returns the plan's Keep actions.
func planKept(p *Plan) []Action {
	var out []Action
	for _, a := range p.Actions {
		if a.Op == Keep {
			out = append(out, a)
		}
	}
	return out
}

// randPath returns a random path one to three names deep.
func randPath(r *rand.Rand) string {
	for p := range treegen.Random(r, treegen.Options{Files: 1, MaxDepth: 3}) {
		return p
	}
	return "x"
}

// paths returns the paths of st, sorted.
func paths(st treegen.State) []string {
	var out []string
	for p := range st {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
