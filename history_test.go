package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

func openTest(t *testing.T, files map[string]string) (*Repo, string) {
	t.Helper()
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, files)
	r, err := Open(context.Background(), ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, ws
}

// writeFile writes c to the workspace path p, making its parents.
func writeFile(t *testing.T, ws, p, c string) {
	t.Helper()
	testutil.WriteFile(t, filepath.Join(ws, p), c)
}

func mustSave(t *testing.T, r *Repo, msg string) *Checkpoint {
	t.Helper()
	res, err := r.Save(context.Background(), SaveOptions{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	return res.Checkpoint
}

func TestBranchSwitchRoundTrip(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "base\n"})
	base := mustSave(t, r, "base")
	if base.Branch != "main" {
		t.Fatalf("first checkpoint on branch %q", base.Branch)
	}
	if _, err := r.CreateBranch(ctx, "feature/x", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateBranch(ctx, "feature/x", ""); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate branch: %v", err)
	}
	// Unsaved work on main is kept by the switch.
	writeFile(t, ws, "a.txt", "main work\n")
	sw, err := r.Switch(ctx, "feature/x", SwitchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sw.Saved == nil || sw.From != "main" || sw.To != "feature/x" {
		t.Fatalf("switch result %+v", sw)
	}
	if got := testutil.ReadFile(t, ws, "a.txt"); got != "base\n" {
		t.Fatalf("after switch a.txt = %q", got)
	}
	writeFile(t, ws, "b.txt", "feature\n")
	feat := mustSave(t, r, "feature work")
	if feat.Branch != "feature/x" || len(feat.Parents) != 1 || feat.Parents[0] != base.ID {
		t.Fatalf("feature checkpoint %+v", feat)
	}
	if _, err := r.Switch(ctx, "main", SwitchOptions{}); err != nil {
		t.Fatal(err)
	}
	if testutil.ReadFile(t, ws, "a.txt") != "main work\n" || testutil.ReadFile(t, ws, "b.txt") != "<absent>" {
		t.Fatalf("back on main: a=%q b=%q", testutil.ReadFile(t, ws, "a.txt"), testutil.ReadFile(t, ws, "b.txt"))
	}
	_, branch, _ := r.Head(ctx)
	if branch != "main" {
		t.Fatalf("HEAD on %q", branch)
	}
	// Undo takes the switch back: feature/x again.
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	head, branch, _ := r.Head(ctx)
	if branch != "feature/x" || head.ID != feat.ID || testutil.ReadFile(t, ws, "b.txt") != "feature\n" {
		t.Fatalf("after undo: branch %q head %s b=%q", branch, head.Short(), testutil.ReadFile(t, ws, "b.txt"))
	}
	if _, err := r.Redo(ctx); err != nil {
		t.Fatal(err)
	}
	if _, branch, _ = r.Head(ctx); branch != "main" || testutil.ReadFile(t, ws, "a.txt") != "main work\n" {
		t.Fatalf("after redo: branch %q", branch)
	}
	bs, err := r.Branches(ctx)
	if err != nil || len(bs) != 2 || bs[0].Name != "feature/x" || !bs[1].Current {
		t.Fatalf("branches %+v %v", bs, err)
	}
	if err := r.DeleteBranch(ctx, "main"); err == nil {
		t.Fatal("deleted the current branch")
	}
	if err := r.DeleteBranch(ctx, "feature/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Switch(ctx, "feature/x", SwitchOptions{}); err == nil || !strings.Contains(err.Error(), "no branch named feature/x") {
		t.Fatalf("switch to deleted: %v", err)
	}
	// switch -c creates the branch at HEAD.
	if _, err := r.Switch(ctx, "spike", SwitchOptions{Create: true}); err != nil {
		t.Fatal(err)
	}
	if _, branch, _ = r.Head(ctx); branch != "spike" {
		t.Fatalf("HEAD on %q", branch)
	}
}

func TestRefNames(t *testing.T) {
	for _, ok := range []string{"main", "feature/new-ui", "v1.0", "release_2", "a.b-c"} {
		if err := ValidRefName("branch", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, why := range map[string]string{"": "empty", "HEAD": "reserved", "-x": "'-'", "a b": "not allowed", "a..b": "'..'",
		"a//b": "empty component", "/a": "empty component", "a/": "ends with", ".hidden": "starts with '.'", "a/.b": "starts with '.'",
		"x.lock": ".lock", "a~1": "not allowed", "a^": "not allowed", "deadbeef": "checkpoint id", "a:b": "not allowed",
		"a.": `ends with "."`, "a.lock/b": `".lock"`, "CAFE": "checkpoint id", "1234": "checkpoint id", "@": "reserved",
		"snapshots/x": "qualified", "tags/x": "qualified", "branches/x": "qualified"} {
		err := ValidRefName("tag", bad)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), fmt.Sprintf("invalid tag name %q", bad)) {
			t.Errorf("%q: got %v, want an error about %s", bad, err, why)
		}
	}
}

// TestRefNamesAgainstGit: a branch or tag name is valid exactly when it
// uses letters, digits, '_', '-', '.' and '/', git check-ref-format accepts
// the refs it becomes, it is at most 200 bytes, does not start with '-' and
// does not read as a revision (HEAD, a checkpoint id, a qualified name).
func TestRefNamesAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := rand.New(rand.NewPCG(7, 4004))
	names := []string{"a", "a.", "a/b.", "a./b", "a.lock/b", "a/b.lock", "a//b", "/a", "a/", "a/.b", "a/-b", "-a",
		"HEAD", "HEAD/x", "x/HEAD", "@", "a/@", "cafe", "cafe/x", "x/cafe", "snapshots/x", "tags/x", "branches/x",
		"snapshots", "tagsx/y", strings.Repeat("a", 200), strings.Repeat("a/", 100) + "b"}
	n := 3000
	if testing.Short() {
		n = 500
	}
	for range n {
		names = append(names, randRefName(r, true))
	}
	charset := regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)
	for _, name := range names {
		first, _, _ := strings.Cut(name, "/")
		qualified := strings.Contains(name, "/") && (first == "snapshots" || first == "tags" || first == "branches")
		for _, kind := range []string{"branch", "tag"} {
			want := charset.MatchString(name) && len(name) <= 200 && name[0] != '-' && !shadowsRevision(name) && !qualified &&
				gitAcceptsRef(t, "refs/ckpt/"+map[string]string{"branch": "branches", "tag": "tags"}[kind]+"/"+name)
			err := ValidRefName(kind, name)
			if (err == nil) != want {
				t.Errorf("ValidRefName(%q, %q) = %v, want valid: %v", kind, name, err, want)
			}
		}
	}
}

func TestTagsAndAncestor(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "1\n"})
	c1 := mustSave(t, r, "one")
	writeFile(t, ws, "a.txt", "2\n")
	c2 := mustSave(t, r, "two")
	if _, err := r.CreateTag(ctx, "v1", c1.ID.String(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateTag(ctx, "v1", "", false); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate tag: %v", err)
	}
	if id, err := r.Resolve(ctx, "v1"); err != nil || id != c1.ID {
		t.Fatalf("resolve v1: %v %v", id, err)
	}
	if _, err := r.CreateTag(ctx, "v1", "", true); err != nil {
		t.Fatal(err)
	}
	if id, _ := r.Resolve(ctx, "tags/v1"); id != c2.ID {
		t.Fatal("--force did not move the tag")
	}
	// Fork: a branch from c1 with its own work.
	if _, err := r.CreateBranch(ctx, "side", c1.ID.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Switch(ctx, "side", SwitchOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "s.txt", "side\n")
	s1 := mustSave(t, r, "side one")
	anc, err := r.Ancestor(ctx, s1.ID.String(), "main")
	if err != nil || anc.ID != c1.ID {
		t.Fatalf("ancestor = %v, %v; want %s", anc, err, c1.Short())
	}
	if anc, err := r.Ancestor(ctx, "v1", "v1"); err != nil || anc.ID != c2.ID {
		t.Fatalf("self ancestor: %v %v", anc, err)
	}
	g, err := r.Graph(ctx, GraphOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	pos := map[ID]int{}
	for i, n := range g {
		pos[n.ID] = i
	}
	if len(g) != 3 || pos[s1.ID] > pos[c1.ID] || pos[c2.ID] > pos[c1.ID] {
		t.Fatalf("graph order wrong: %v", pos)
	}
	if err := r.DeleteTag(ctx, "v1"); err != nil {
		t.Fatal(err)
	}
	if tags, _ := r.Tags(ctx); len(tags) != 0 {
		t.Fatalf("tags left: %v", tags)
	}
}

func TestGCKeepAndWindow(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "0\n"})
	states := map[ID]string{}
	var ids []ID
	for i := 0; i < 20; i++ {
		writeFile(t, ws, "a.txt", fmt.Sprintf("%d\n", i))
		writeFile(t, ws, fmt.Sprintf("f%d.txt", i), strings.Repeat("x", 1000*i))
		c := mustSave(t, r, fmt.Sprint(i))
		states[c.ID] = fmt.Sprintf("%d\n", i)
		ids = append(ids, c.ID)
	}
	if _, err := r.CreateTag(ctx, "first", ids[0].String(), false); err != nil {
		t.Fatal(err)
	}
	dry, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 5}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Removed) != 14 || dry.Kept != 6 {
		t.Fatalf("dry run: removed %d kept %d", len(dry.Removed), dry.Kept)
	}
	if n, _ := r.List(ctx, ListOptions{}); len(n) != 20 {
		t.Fatal("a dry run removed checkpoints")
	}
	res, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 14 || res.Objects == 0 || res.Freed <= 0 {
		t.Fatalf("gc: %+v", res)
	}
	list, _ := r.List(ctx, ListOptions{})
	kept := map[ID]bool{}
	for _, c := range list {
		kept[c.ID] = true
	}
	if !kept[ids[0]] || !kept[ids[19]] || kept[ids[10]] || len(list) != 6 {
		t.Fatalf("kept %d: first %v last %v mid %v", len(list), kept[ids[0]], kept[ids[19]], kept[ids[10]])
	}
	// Every kept checkpoint restores exactly; the tree is verified.
	for _, c := range list {
		if _, err := r.Restore(ctx, c.ID.String(), RestoreOptions{}); err != nil {
			t.Fatalf("restore %s: %v", c.Short(), err)
		}
		if got := testutil.ReadFile(t, ws, "a.txt"); got != states[c.ID] {
			t.Fatalf("restore %s: a.txt = %q, want %q", c.Short(), got, states[c.ID])
		}
	}
	if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
	// Undo still works within the window and never reaches a removed one.
	for i := 0; i < 30; i++ {
		if _, err := r.Undo(ctx); err != nil {
			if errors.Is(err, ErrNothingToUndo) {
				break
			}
			t.Fatalf("undo %d: %v", i, err)
		}
	}
	// History shows where gc cut it.
	g, err := r.Graph(ctx, GraphOptions{From: []string{ids[19].String()}})
	if err != nil || len(g) == 0 || len(g[len(g)-1].Pruned) != 1 {
		t.Fatalf("graph after gc: %d nodes %v", len(g), err)
	}
}

func TestGCSnapshotsAndSize(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ws := t.TempDir()
	r, err := Open(ctx, ws, Options{Store: t.TempDir(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rnd := rand.New(rand.NewPCG(1, 2))
	junk := func() string {
		b := make([]byte, 200<<10)
		for i := range b {
			b[i] = byte(rnd.IntN(256))
		}
		return string(b)
	}
	var ids []ID
	for i := 0; i < 12; i++ {
		writeFile(t, ws, "big.bin", junk())
		ids = append(ids, mustSave(t, r, fmt.Sprint(i)).ID)
		now = now.Add(time.Hour)
	}
	// A snapshot ref protects a checkpoint; an expired one does not.
	err = r.st.Update(ctx, func(tx store.Tx) error {
		if err := tx.SetRef(store.Ref{Name: "snapshots/keep", ID: ids[1]}); err != nil {
			return err
		}
		return tx.SetRef(store.Ref{Name: "snapshots/old", ID: ids[2], Expires: now.Add(-time.Minute)})
	})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := r.st.Usage(ctx)
	res, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 100, MaxSize: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ExpiredSnapshots) != 1 || res.ExpiredSnapshots[0] != "old" {
		t.Fatalf("expired %v", res.ExpiredSnapshots)
	}
	after, _ := r.st.Usage(ctx)
	if after.File > 1<<20+256<<10 || after.File >= before.File {
		t.Fatalf("size %d -> %d, limit 1 MiB", before.File, after.File)
	}
	kept := map[ID]bool{}
	list, _ := r.List(ctx, ListOptions{})
	for _, c := range list {
		kept[c.ID] = true
	}
	if !kept[ids[1]] || !kept[ids[11]] || kept[ids[2]] || kept[ids[5]] {
		t.Fatalf("kept: snapshot %v head %v expired %v old %v", kept[ids[1]], kept[ids[11]], kept[ids[2]], kept[ids[5]])
	}
	if _, err := r.Restore(ctx, "keep", RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
}

// TestPropertyHistoryOps: random sequences of save, edit, restore, undo,
// redo, switch, branch, tag and gc on random trees never lose a state that
// is still referenced: every checkpoint still listed restores to exactly
// the state it recorded, and fsck stays clean.
func TestPropertyHistoryOps(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < testutil.Trials(12); i++ {
		seed := uint64(i + 100)
		backend := []string{BackendSQLite, BackendMemory}[i%2]
		t.Run(fmt.Sprintf("seed%d-%s", seed, backend), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 7))
			ws := t.TempDir()
			tree := treegen.Random(rnd, treegen.Options{Files: 10 + rnd.IntN(30), Weird: true})
			if err := treegen.Write(ws, tree); err != nil {
				t.Fatal(err)
			}
			r, err := Open(ctx, ws, Options{Store: t.TempDir(), Backend: backend})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			known := map[ID]treegen.State{} // checkpoint -> the state it recorded
			record := func(c *Checkpoint, st treegen.State) {
				if c != nil && !c.Partial() {
					known[c.ID] = st
				}
			}
			c := mustSave(t, r, "start")
			record(c, snapshot(t, ws))
			branches := []string{"main"}
			var log []string
			for step := 0; step < 40; step++ {
				before := snapshot(t, ws)
				switch op := rnd.IntN(10); op {
				case 0, 1:
					if _, err := treegen.Mutate(rnd, ws, before, 1+rnd.IntN(6), true); err != nil {
						t.Fatal(err)
					}
					log = append(log, "edit")
				case 2:
					res, err := r.Save(ctx, SaveOptions{Message: fmt.Sprint(step)})
					if err != nil {
						t.Fatalf("%v: save: %v", log, err)
					}
					record(res.Checkpoint, before)
					log = append(log, "save")
				case 3:
					list, _ := r.List(ctx, ListOptions{})
					target := list[rnd.IntN(len(list))]
					res, err := r.Restore(ctx, target.ID.String(), RestoreOptions{})
					if err != nil {
						t.Fatalf("%v: restore %s: %v", log, target.Short(), err)
					}
					record(res.PreRestore, before)
					log = append(log, "restore")
				case 4:
					if _, err := r.Undo(ctx); err != nil && !errors.Is(err, ErrNothingToUndo) {
						t.Fatalf("%v: undo: %v", log, err)
					}
					log = append(log, "undo")
				case 5:
					if _, err := r.Redo(ctx); err != nil && !errors.Is(err, ErrNothingToRedo) {
						t.Fatalf("%v: redo: %v", log, err)
					}
					log = append(log, "redo")
				case 6:
					name := fmt.Sprintf("b%d", step)
					if _, err := r.CreateBranch(ctx, name, ""); err != nil {
						t.Fatalf("%v: branch: %v", log, err)
					}
					branches = append(branches, name)
					log = append(log, "branch")
				case 7:
					name := branches[rnd.IntN(len(branches))]
					res, err := r.Switch(ctx, name, SwitchOptions{})
					if err != nil && !strings.Contains(err.Error(), "already on") {
						t.Fatalf("%v: switch %s: %v", log, name, err)
					}
					if err == nil {
						record(res.Saved, before)
					}
					log = append(log, "switch "+name)
				case 8:
					if _, err := r.CreateTag(ctx, fmt.Sprintf("t%d", step), "", false); err != nil {
						t.Fatalf("%v: tag: %v", log, err)
					}
					log = append(log, "tag")
				case 9:
					if _, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 1 + rnd.IntN(4)}}); err != nil {
						t.Fatalf("%v: gc: %v", log, err)
					}
					log = append(log, "gc")
				}
			}
			if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
				t.Fatalf("%v: fsck: %+v %v", log, fr, err)
			}
			list, err := r.List(ctx, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range list {
				if _, err := r.Restore(ctx, c.ID.String(), RestoreOptions{}); err != nil {
					t.Fatalf("%v: restore kept %s: %v", log, c.Short(), err)
				}
				if want, ok := known[c.ID]; ok {
					if d := treegen.Diff(want, snapshot(t, ws)); d != "" {
						t.Fatalf("%v: checkpoint %s (%s) restores to another state:\n%s", log, c.Short(), c.Message, d)
					}
				}
			}
		})
	}
}

// A retention's max_age is written as config.toml writes it, and reads back.
func TestRetentionJSON(t *testing.T) {
	for _, r := range []Retention{{Keep: 100, MaxAge: 30 * 24 * time.Hour, MaxSize: 1 << 30}, {},
		{Keep: 1, KeepHourly: 2, KeepDaily: 3, KeepWeekly: 4, KeepMonthly: 5}} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Retention
		if err := json.Unmarshal(b, &back); err != nil || back != r {
			t.Errorf("%s: read back %+v, %v; want %+v", b, back, err, r)
		}
	}
	b, _ := json.Marshal(Retention{Keep: 5, MaxAge: 12 * time.Hour})
	if want := `{"keep":5,"max_age":"12h","max_size":0,"keep_hourly":0,"keep_daily":0,"keep_weekly":0,"keep_monthly":0}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
