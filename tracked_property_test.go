package ckpt

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// diskFiles reads every file of the workspace, ignored ones included
// (symlinks as "-> target").
func diskFiles(t *testing.T, ws string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			out[filepath.ToSlash(rel)] = "-> " + l
			return err
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPropertyIgnoredFilesRewound: sessions whose edit tools change,
// create and delete ignored files (among tracked ones, with the user's
// edits between turns, to both), rewound at random — three-way or exact —
// and undone. Invariants:
//   - an ignored file no edit tool changed is never touched;
//   - an exact rewind to turn N puts back every ignored file the turns
//     from N on had their tools change as the first of them found it, and
//     every other file as turn N began;
//   - a three-way rewind puts back such an ignored file unless the user
//     changed it after the turn's tool did (then it stays the user's);
//   - undo brings back every file, ignored ones included, exactly as it
//     was before the rewind; status is clean after each step.
func TestPropertyIgnoredFilesRewound(t *testing.T) {
	ctx := context.Background()
	for trial := range testutil.Trials(25) {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(trial), 0x1a7))
			gi := ".gitignore"
			initial := map[string]string{gi: "*.env\nsecret/\nbuild/\n", "a.txt": "a\n", "b.txt": "b\n",
				"x.env": "X0\n", "secret/k": "K0\n", "build/out": "O0\n"}
			r, ws := openTest(t, initial)
			c := newCtl(t, r, "prop")
			ignored := []string{"x.env", "y.env", "secret/k", "secret/new/n"}
			tracked := []string{"a.txt", "b.txt", "c.txt"}
			put := func(p, content string) {
				if content == "" {
					os.Remove(filepath.Join(ws, p))
					return
				}
				writeFile(t, ws, p, content)
			}
			val := func(tag string) string {
				if rng.IntN(5) == 0 {
					return "" // deleted
				}
				return fmt.Sprintf("%s%d\n", tag, rng.IntN(1000))
			}
			type turnRec struct {
				// firstSeen: each ignored file as the turn's tool found
				// it ("" absent).
				firstSeen map[string]string
				begin     map[string]string // non-ignored files at the start
			}
			var turns []turnRec
			userTouched := map[string]int{} // ignored file -> last turn after which the user changed it
			nTurns := 2 + rng.IntN(3)
			for n := 1; n <= nTurns; n++ {
				if _, err := c.BeginTurn(ctx, fmt.Sprint("turn ", n)); err != nil {
					t.Fatal(err)
				}
				rec := turnRec{firstSeen: map[string]string{}, begin: map[string]string{}}
				for p, v := range diskFiles(t, ws) {
					if !strings.HasSuffix(p, ".env") && !strings.HasPrefix(p, "secret/") && !strings.HasPrefix(p, "build/") {
						rec.begin[p] = v
					}
				}
				for _, p := range ignored {
					if rng.IntN(2) == 0 {
						continue
					}
					if _, err := c.TrackIgnored(ctx, []Path{Path(p)}); err != nil {
						t.Fatal(err)
					}
					rec.firstSeen[p] = diskFiles(t, ws)[p]
					put(p, val("agent-"+p))
				}
				for _, p := range tracked {
					if rng.IntN(2) == 0 {
						put(p, val("agent-"+p))
					}
				}
				if rng.IntN(3) == 0 {
					put("build/out", val("build")) // ignored, no tool's: never rewound
				}
				if _, err := c.EndTurn(ctx); err != nil {
					t.Fatal(err)
				}
				turns = append(turns, rec)
				// The user, between turns.
				for _, p := range append(slices.Clone(ignored), tracked...) {
					if rng.IntN(4) == 0 {
						put(p, val("user-"+p))
						userTouched[p] = n
					}
				}
			}
			for step := 0; step < 3; step++ {
				n := 1 + rng.IntN(len(turns))
				exact := rng.IntN(2) == 0
				before := diskFiles(t, ws)
				t.Logf("step %d: rewind %d exact %v before %q", step, n, exact, before)
				for i, tr := range turns {
					t.Logf("turn %d firstSeen %q", i+1, tr.firstSeen)
				}
				res, err := c.Rewind(ctx, n, ScopeCode, RewindOptions{Exact: exact})
				if err != nil {
					t.Fatalf("rewind %d exact=%v: %v", n, exact, err)
				}
				// Kept as the user's: a conflict, or below one (a
				// directory the turn removed that the user added to).
				userSide := func(p string) bool {
					for _, q := range append(slices.Clone(res.Conflicts), res.Kept...) {
						if string(q) == p || strings.HasPrefix(p, string(q)+"/") {
							return true
						}
					}
					return false
				}
				after := diskFiles(t, ws)
				if after["build/out"] != before["build/out"] {
					t.Fatalf("rewind %d touched build/out, which no edit tool changed", n)
				}
				// The state each ignored file goes back to: as the first
				// turn from n on whose tool changed it found it.
				want := map[string]*string{}
				for _, tr := range turns[n-1:] {
					for p, v := range tr.firstSeen {
						if _, ok := want[p]; !ok {
							v := v
							want[p] = &v
						}
					}
				}
				for _, p := range ignored {
					w, ok := want[p]
					switch {
					case !ok:
						if after[p] != before[p] {
							t.Fatalf("rewind %d (exact %v) changed %s, which no turn from %d on changed: %q -> %q", n, exact, p, n, before[p], after[p])
						}
					case exact:
						if after[p] != *w {
							t.Fatalf("exact rewind %d: %s = %q, want %q", n, p, after[p], *w)
						}
					case step == 0 && userTouched[p] == 0 && !userSide(p):
						// Untouched by the user since: it goes back.
						if after[p] != *w {
							t.Fatalf("rewind %d: %s = %q, want %q", n, p, after[p], *w)
						}
					}
				}
				if exact {
					for p, v := range turns[n-1].begin {
						if after[p] != v {
							t.Fatalf("exact rewind %d: %s = %q, want %q", n, p, after[p], v)
						}
					}
				}
				wantClean(t, r)
				if _, err := r.Undo(ctx); err != nil {
					t.Fatalf("undo: %v", err)
				}
				if got := diskFiles(t, ws); !maps.Equal(got, before) {
					ops, _ := r.st.Ops(ctx, 0)
					for _, op := range ops {
						t.Logf("op %d %s before %s after %s target %d %s", op.Seq, op.Kind, op.Before.Short(), op.After.Short(), op.Target, op.Detail)
					}
					t.Fatalf("undo of rewind %d (exact %v):\n got %q\nwant %q", n, exact, got, before)
				}
				wantClean(t, r)
				if rng.IntN(2) == 0 {
					// The rewind again, left in place for the next step.
					if _, err := c.Rewind(ctx, n, ScopeCode, RewindOptions{Exact: exact}); err != nil {
						t.Fatal(err)
					}
					if got := diskFiles(t, ws); !maps.Equal(got, after) {
						t.Fatalf("the same rewind again gave\n%q\nwant %q", got, after)
					}
				}
			}
		})
	}
}
