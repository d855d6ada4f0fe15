package attack

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// setJournal writes a journal row into the store as if an interrupted
// restore had left it (a crafted or damaged store).
func setJournal(t *testing.T, e *env, data map[string]any) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, e.Store, e.WS)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update(ctx, func(tx store.Tx) error {
		return tx.SetJournal(&store.Journal{Kind: data["op"].(string), Data: b})
	}); err != nil {
		t.Fatal(err)
	}
}

// fullID returns the full id of a revision.
func (e *env) fullID(rev string) string {
	e.T.Helper()
	out := e.Must("show", "--json", rev)
	var v struct {
		Checkpoint struct {
			ID string `json:"id"`
		} `json:"checkpoint"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Checkpoint.ID) != 64 {
		e.T.Fatalf("no id in show --json %s: %v\n%s", rev, err, out)
	}
	return v.Checkpoint.ID
}

// DEFECT. A journal whose staging directory name is not ckpt's (not
// ".ckpt-tmp-…", e.g. "src" or ".git" in a crafted or damaged store) makes
// recovery delete that directory of the workspace, with everything in it
// — ignored files and all of .git included — before reporting the bad
// name. The applier refuses the name in stage() but its caller then runs
// RemoveAll(a.Stage) on it (internal/restore/restore.go, Apply, "2.
// stage"), and unfinished() (restore.go) removes j.Stage and
// j.Stage+"-back" again without any check. A journal with an invalid
// stage is corrupt store content: it should exit 3 before the workspace
// is touched, as any other crafted content does.
func TestJournalStageNamesUserDirectory(t *testing.T) {
	for _, stage := range []string{"src", ".git"} {
		t.Run(stage, func(t *testing.T) {
			e := newEnv(t)
			testutil.GitInit(t, e.WS)
			e.Write(map[string]string{"a.txt": "1\n", "src/main.go": "package main\n", ".gitignore": "*.env\n", "src/secret.env": "TOKEN=never-checkpointed\n"})
			e.Must("save", "-q", "-m", "one")
			v1 := e.fullID("HEAD")
			e.Write(map[string]string{"a.txt": "2\n"})
			e.Must("save", "-q", "-m", "two")
			v2 := e.fullID("HEAD")
			setJournal(t, e, map[string]any{"op": "restore", "target": v1, "before": v2, "head": v2, "stage": stage})

			code, out, errs := e.Run("recover")
			t.Logf("recover: exit %d\n%s%s", code, out, errs)
			for _, p := range []string{"src/secret.env", "src/main.go", ".git/HEAD"} {
				if _, err := os.Lstat(filepath.Join(e.WS, p)); err != nil {
					t.Errorf("%s is gone after recovering a journal with stage %q: %v", p, stage, err)
				}
			}
			if code != 3 {
				t.Errorf("recover of a journal with stage %q: exit %d, want 3 (corrupt journal)", stage, code)
			}
		})
	}
}

// DEFECT (fixed: scan.OwnTemp matches exactly). While a journal is
// pending, every name that merely starts with
// its staging directory's name, at any depth, is treated as ckpt's own:
// the recovering scan skips it (so it is in no checkpoint) and recovery
// removes it (restore.go, restoreAttempt: "Leftovers of the interrupted
// attempt", strings.HasPrefix(path.Base(t), j.Stage); scan.Options.own
// matches by prefix). ckpt's own leftovers are exactly the stage, the
// rollback's stage+"-back" in the root, and cross-device copies named
// stage+"-"+N (internal/restore, place). A file the user or an agent names
// after the staging directory it sees (an editor's backup of a staged
// file, docs/<stage>.md) is deleted unseen.
func TestRecoveryRemovesLookalikeOfStage(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "1\n", "b.txt": "1\n"})
	e.Must("save", "-q", "-m", "one")
	e.Write(map[string]string{"a.txt": "2\n", "b.txt": "2\n"})
	e.Must("save", "-q", "-m", "two")
	e.Extra = []string{"CKPT_FAILPOINT=restore/change=kill@1"}
	if code, _, _ := e.Run("restore", "HEAD~1"); code == 0 {
		t.Fatal("the killed restore exited 0")
	}
	e.Extra = nil
	stage := ""
	des, _ := os.ReadDir(e.WS)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".ckpt-tmp-") {
			stage = de.Name()
		}
	}
	if stage == "" {
		t.Fatal("no staging directory after the kill")
	}
	mine := "docs/" + stage + ".md"
	e.Write(map[string]string{mine: "the user's notes about the staging directory\n"})
	e.Must("recover")
	// Finishing the restore may remove a file created after the crash, but
	// only once a checkpoint holds it ("found while recovering").
	const notes = "the user's notes about the staging directory\n"
	if got := e.Read(mine); got != notes && !inAnyCheckpoint(t, e, mine, notes) {
		t.Fatalf("%s = %q after recover, and in no checkpoint: a user's file was removed as a leftover", mine, got)
	}
	if got := e.Read("a.txt"); got != "1\n" {
		t.Fatalf("a.txt = %q after recover", got)
	}
}

// DEFECT (crafted store). A journal whose stage is the bare prefix
// ".ckpt-tmp-" names every user's .ckpt-tmp-* entry, at any depth, as a
// leftover: recovery skips them in its scan and deletes them, the very
// class 8 bug. The stage should be validated as ckpt makes it (the prefix
// and 12 hex digits, newStageName in restore.go).
func TestJournalStageBarePrefix(t *testing.T) {
	e := newEnv(t)
	mine := map[string]string{".ckpt-tmp-notes.txt": "notes\n", "sub/.ckpt-tmp-x": "nested\n"}
	e.Write(map[string]string{"a.txt": "1\n"})
	e.Must("save", "-q", "-m", "one")
	v1 := e.fullID("HEAD")
	e.Write(map[string]string{"a.txt": "2\n"})
	e.Must("save", "-q", "-m", "two")
	v2 := e.fullID("HEAD")
	// Made after the last save: only the workspace holds them.
	e.Write(mine)
	setJournal(t, e, map[string]any{"op": "restore", "target": v1, "before": v2, "head": v2, "stage": ".ckpt-tmp-"})
	code, out, errs := e.Run("recover")
	t.Logf("recover: exit %d\n%s%s", code, out, errs)
	for p, c := range mine {
		if got := e.Read(p); got != c {
			t.Errorf("%s = %q after recovering a journal with stage .ckpt-tmp-", p, got)
		}
	}
	if code != 3 {
		t.Errorf("recover of a journal with stage .ckpt-tmp-: exit %d, want 3 (corrupt journal)", code)
	}
}
