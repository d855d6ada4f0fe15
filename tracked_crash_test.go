package ckpt

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestHelperTracked runs one step of a session keeping an ignored file
// (in a child process that a failpoint kills): REVIEW_STEP is track (the
// edit tool's hook), end (the turn's end) or rewind (keeping user edits,
// or exact).
func TestHelperTracked(t *testing.T) {
	if os.Getenv("REVIEW_HELPER") == "" {
		return // a helper: it runs only in the child process below
	}
	ctx := context.Background()
	r, err := Open(ctx, os.Getenv("REVIEW_WS"), Options{Store: os.Getenv("REVIEW_STORE")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, _, err := r.Controller(ctx, ControllerOptions{ID: os.Getenv("REVIEW_SESSION"), Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	switch os.Getenv("REVIEW_STEP") {
	case "track":
		_, err = c.TrackIgnored(ctx, []Path{".env"})
	case "end":
		_, err = c.EndTurn(ctx)
	case "rewind":
		_, err = c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	case "exact":
		_, err = c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A session step that keeps or puts back an ignored file, killed at any
// point: after recovery the file is its old or its new content, the store
// is consistent, and the turn can still be rewound (the file back to its
// old content) and the rewind undone.
func TestCrashKeepingIgnoredFile(t *testing.T) {
	testutil.Long(t, "kills a child process at 36 points")
	ctx := context.Background()
	points := []string{"store/before-commit=kill@1", "store/before-commit=kill@2", "store/before-commit=kill@3", "store/before-commit=kill@4",
		"restore/before-change=kill", "restore/change=kill@1", "restore/change=kill@2", "restore/change=kill@3", "restore/placed=kill"}
	for _, step := range []string{"track", "end", "rewind", "exact"} {
		for _, fp := range points {
			t.Run(step+"/"+fp, func(t *testing.T) {
				ws, store := t.TempDir(), t.TempDir()
				testutil.WriteFiles(t, ws, map[string]string{".gitignore": ".env\n", ".env": "old\n", "a.txt": "a\n"})
				r, err := Open(ctx, ws, Options{Store: store})
				if err != nil {
					t.Fatal(err)
				}
				c := newCtl(t, r, "crash")
				s, err := c.Session(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.BeginTurn(ctx, "edit .env"); err != nil {
					t.Fatal(err)
				}
				if step != "track" {
					if _, err := c.TrackIgnored(ctx, []Path{".env"}); err != nil {
						t.Fatal(err)
					}
					writeFile(t, ws, ".env", "new\n")
					writeFile(t, ws, "a.txt", "a2\n")
				}
				if step == "rewind" || step == "exact" {
					if _, err := c.EndTurn(ctx); err != nil {
						t.Fatal(err)
					}
				}
				r.Close()
				err = reviewHelper(t, "TestHelperTracked", "REVIEW_WS="+ws, "REVIEW_STORE="+store, "REVIEW_SESSION="+s.ID,
					"REVIEW_STEP="+step, "CKPT_FAILPOINT="+fp)
				killed := err != nil
				t.Logf("killed: %v", killed)
				r, err = Open(ctx, ws, Options{Store: store})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if _, err := r.Recover(ctx); err != nil {
					t.Fatalf("recover: %v", err)
				}
				if got := readAny(ws, ".env"); got != "old\n" && got != "new\n" {
					t.Fatalf("killed=%v: .env = %q after recovery", killed, got)
				}
				if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) > 0 {
					t.Fatalf("killed=%v: fsck %+v %v", killed, fr, err)
				}
				c, _, err = r.Controller(ctx, ControllerOptions{ID: s.ID, Exact: true})
				if err != nil {
					t.Fatal(err)
				}
				if step == "track" {
					// The tool writes once the hook is done (or dead).
					writeFile(t, ws, ".env", "new\n")
					writeFile(t, ws, "a.txt", "a2\n")
				}
				if step == "track" || step == "end" {
					cur, err := c.Session(ctx)
					if err != nil {
						t.Fatal(err)
					}
					tt := cur.Turns[0]
					if tt.Open() {
						if tt, err = c.EndTurn(ctx); err != nil {
							t.Fatalf("killed=%v: end turn after recovery: %v", killed, err)
						}
					}
					if step == "end" && !slices.Contains(tt.Ignored, ".env") {
						t.Fatalf("killed=%v: the turn lost .env: %q", killed, tt.Ignored)
					}
					if !slices.Contains(tt.Ignored, ".env") {
						return // the hook died before it kept .env: nothing to put back
					}
				}
				if step == "rewind" || step == "exact" {
					if got := readAny(ws, ".env"); got == "old\n" {
						// Recovery finished the rewind: undo it, then rewind
						// again (exact: a rewind in effect counts).
						if _, err := r.Undo(ctx); err != nil {
							t.Fatalf("killed=%v: undo of the recovered rewind: %v", killed, err)
						}
						if got := readAny(ws, ".env"); got != "new\n" {
							t.Fatalf("killed=%v: undo of the recovered rewind: .env = %q", killed, got)
						}
					}
				}
				if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true}); err != nil {
					t.Fatalf("killed=%v: rewind after recovery: %v", killed, err)
				}
				if got := readAny(ws, ".env"); got != "old\n" {
					t.Fatalf("killed=%v: .env = %q after the rewind, want the turn's start", killed, got)
				}
				if _, err := r.Undo(ctx); err != nil {
					t.Fatal(err)
				}
				if got := readAny(ws, ".env"); got != "new\n" {
					t.Fatalf("killed=%v: .env = %q after undo, want the agent's", killed, got)
				}
				if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) > 0 {
					t.Fatalf("killed=%v: fsck %+v %v", killed, fr, err)
				}
			})
		}
	}
}
