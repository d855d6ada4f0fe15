package ckpt

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/run"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// TestMain lets the test binary act as a random routine (see
// randomRoutine) when a run started by a test runs it, or as another
// process talking to a watcher's socket (sockSend).
func TestMain(m *testing.M) {
	if seed := os.Getenv("CKPT_TEST_ROUTINE"); seed != "" {
		os.Exit(randomRoutine(seed))
	}
	if sock := os.Getenv("CKPT_TEST_SOCKSEND"); sock != "" {
		os.Exit(sockSend(sock))
	}
	os.Exit(m.Run())
}

// randomRoutine is a routine that changes the workspace (its working
// directory) at random, as an agent's routine might: edits, creations,
// deletions, file <-> directory <-> symlink changes, mode changes (0600
// included), binary files, ignore rules appended that cover files the
// run's checkpoint recorded, rules removed that showed the user's ignored
// files, files made and hidden at once, and an ignore file that hides
// itself and everything. Its changes depend on the seed and on the tree
// it finds. In the last attempt of a run (failure-context.md exists)
// it first writes to $CKPT_TEST_REPORT how the tree differs from
// $CKPT_TEST_EXPECT (the state before the run, gob-encoded: names need not be UTF-8): the last attempt must
// start clean. It exits with $CKPT_TEST_EXIT (default 0).
func randomRoutine(seed string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "random routine:", err)
		return 99
	}
	skip := func(rel string) bool { return rel == ".decree" || rel == ".git" }
	st, err := treegen.Snapshot(".", skip)
	if err != nil {
		return fail(err)
	}
	if dir := os.Getenv("message_dir"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "failure-context.md")); err == nil {
			var want treegen.State
			b, err := os.ReadFile(os.Getenv("CKPT_TEST_EXPECT"))
			if err != nil {
				return fail(err)
			}
			if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&want); err != nil {
				return fail(err)
			}
			if d := treegen.Diff(want, st); d != "" {
				os.WriteFile(os.Getenv("CKPT_TEST_REPORT"), []byte("the last attempt did not start clean:\n"+d+"\n"), 0o644)
			}
		}
	}
	h := fnv.New64a()
	h.Write([]byte(seed))
	paths := make([]string, 0, len(st))
	for p := range st {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(h, "%q %v\n", p, st[p])
	}
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	// Files ignored before the run (*.log, in the root) are the user's:
	// no routine touches them, but the ignore rules that hide them may
	// change.
	mine := treegen.State{}
	for p, e := range st {
		if !strings.HasSuffix(p, ".log") {
			mine[p] = e
		}
	}
	after, err := treegen.Mutate(r, ".", mine, 1+r.IntN(8), true)
	if err != nil {
		return fail(err)
	}
	// Ignore rules removed: the user's ignored files show.
	if b, err := os.ReadFile(".gitignore"); err == nil && r.IntN(4) == 0 {
		if err := os.WriteFile(".gitignore", bytes.ReplaceAll(b, []byte("*.log\n"), nil), 0o644); err != nil {
			return fail(err)
		}
	}
	// New ignore rules covering files that were there before: the
	// checkpoint after the attempt leaves them out, and a revert must
	// still put them back.
	if os.Getenv("NOIGN") == "" && r.IntN(3) == 0 {
		var pats []string
		for _, p := range paths {
			if e, ok := after[p]; ok && r.IntN(4) == 0 && !strings.ContainsAny(p, "*?[\\!#\n\t \"") && !underDir(after, p) {
				pats = append(pats, "/"+p)
				if r.IntN(2) == 0 && !e.Symlink {
					// ... and changed after they were ignored.
					if err := os.WriteFile(p, []byte("changed while ignored\n"), e.Mode); err != nil {
						return fail(err)
					}
				}
			}
		}
		if len(pats) > 0 {
			f, err := os.OpenFile(".gitignore", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return fail(err)
			}
			fmt.Fprintf(f, "\n%s\n", strings.Join(pats, "\n"))
			if err := f.Close(); err != nil {
				return fail(err)
			}
		}
	}
	// A file made and hidden in the same attempt: no checkpoint of the
	// run ever holds it.
	if r.IntN(4) == 0 {
		name := fmt.Sprintf("hidden-%d.tmp", r.IntN(100))
		if err := os.WriteFile(name, []byte("made and hidden\n"), 0o644); err != nil {
			return fail(err)
		}
		f, err := os.OpenFile(".gitignore", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(f, "\n/%s\n", name)
		f.Close()
	}
	// An ignore file that hides itself and everything else.
	if r.IntN(8) == 0 {
		if err := os.WriteFile(".ckptignore", []byte("*\n"), 0o644); err != nil {
			return fail(err)
		}
	}
	code, _ := strconv.Atoi(os.Getenv("CKPT_TEST_EXIT"))
	return code
}

// underDir reports whether p is a directory in st (some path is below it).
func underDir(st treegen.State, p string) bool {
	for q := range st {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

// randomRoutineWorkspace makes a random tree with a develop routine that is
// this test binary acting as randomRoutine, and opens it.
func randomRoutineWorkspace(t *testing.T, r *rand.Rand, exit int) (*Repo, string, treegen.State) {
	t.Helper()
	ws := t.TempDir()
	st := treegen.Random(r, treegen.Options{Files: 25, Weird: true})
	if r.IntN(2) == 0 {
		// Ignored files before the run, which a routine's change of the
		// ignore rules may show.
		st[".gitignore"] = treegen.Entry{Mode: 0o644, Data: "*.log\n"}
		st["keep.log"] = treegen.Entry{Mode: 0o644, Data: "the user's log\n"}
		st["old.log"] = treegen.Entry{Mode: 0o600, Data: "another\n"}
	}
	if err := treegen.Write(ws, st); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws, ".decree/routines"), 0o755)
	os.MkdirAll(filepath.Join(ws, ".decree/inbox"), 0o755)
	script := fmt.Sprintf("#!/usr/bin/env bash\nexec %q\n", exe)
	if err := os.WriteFile(filepath.Join(ws, ".decree/routines/develop.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("CKPT_TEST_ROUTINE", fmt.Sprint(r.Uint64()))
	t.Setenv("CKPT_TEST_EXIT", fmt.Sprint(exit))
	t.Setenv("CKPT_TEST_EXPECT", filepath.Join(dir, "expect.gob"))
	t.Setenv("CKPT_TEST_REPORT", filepath.Join(dir, "report"))
	repo, err := Open(context.Background(), ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	pre := state(t, ws)
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(pre); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "expect.gob"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo, ws, pre
}

// TestPropertyProcessRevertsEverything: a message whose routine changes
// the tree at random and fails every attempt ends dead, with the tree
// exactly as it was before the run — and the clean-slate last attempt
// starts from exactly that tree too.
func TestPropertyProcessRevertsEverything(t *testing.T) {
	for i := range testutil.Trials(20) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 0x70c))
			repo, ws, pre := randomRoutineWorkspace(t, r, 1)
			message(t, ws, "task.md", "routine: develop", "do it\n")
			res, err := repo.Process(context.Background(), ProcessOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Errors {
				t.Errorf("process: %v", e)
			}
			if len(res.Runs) != 1 || res.Runs[0].Status != run.StatusDead {
				t.Fatalf("runs = %+v, want one dead run", res.Runs)
			}
			if b, err := os.ReadFile(os.Getenv("CKPT_TEST_REPORT")); err == nil {
				t.Errorf("%s", b)
			}
			if d := treegen.Diff(pre, state(t, ws)); d != "" {
				t.Errorf("after the dead run the tree is not the tree before it:\n%s", d)
			}
			if _, err := os.Stat(filepath.Join(ws, ".decree/inbox/dead/task.md")); err != nil {
				t.Errorf("the message is not in inbox/dead: %v", err)
			}
		})
	}
}

// TestPropertyRunsRevertEverything: a run whose routine changed the tree
// at random and succeeded is reverted by RevertRun to exactly the tree
// before it.
func TestPropertyRunsRevertEverything(t *testing.T) {
	for i := range testutil.Trials(20) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 0x7e7))
			repo, ws, pre := randomRoutineWorkspace(t, r, 0)
			message(t, ws, "task.md", "routine: develop", "do it\n")
			res := process(t, repo)
			if len(res.Runs) != 1 || res.Runs[0].Status != run.StatusDone {
				t.Fatalf("runs = %+v, want one done run", res.Runs)
			}
			if _, err := repo.RevertRun(context.Background(), res.Runs[0].ID); err != nil {
				t.Fatalf("revert: %v", err)
			}
			if d := treegen.Diff(pre, state(t, ws)); d != "" {
				t.Errorf("after the revert the tree is not the tree before the run:\n%s", d)
			}
		})
	}
}
