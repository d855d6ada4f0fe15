package ckpt

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Rows of docs/compatibility.md that no other test held: each test names
// the system and the feature of its document that it checks.

// Reasonix: the controller's event stream lets every frontend re-render
// ("a Rewound event ... lets every frontend re-render uniformly"), and
// CodeBuddy's managers emit events for what they do. Every step of a
// session is an event, in order, on the Repo's subscription.
func TestControllerEventsForEveryFace(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"f.txt": "0\n"})
	var session, restores []string
	cancel := r.Subscribe(func(e Event) {
		if e.Session == "" {
			if e.Kind == EventRewound {
				restores = append(restores, fmt.Sprintf("%s %v", e.Kind, e.Paths))
			}
			return
		}
		session = append(session, fmt.Sprintf("%s %d %s %v", e.Kind, e.Turn, e.Message, e.Paths))
	})
	defer cancel()
	c := newCtl(t, r, "events")
	for i, p := range []string{"one", "two", "three"} {
		turn(t, c, p, func() { writeFile(t, ws, "f.txt", fmt.Sprint(i+1, "\n")) })
	}
	if _, err := c.Rewind(ctx, 3, ScopeCode, RewindOptions{Exact: true, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rewind(ctx, 3, ScopeCode, RewindOptions{Exact: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rewind(ctx, 3, ScopeConversation, RewindOptions{Exact: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Summarize(ctx, 1, SummarizeUpto); err != nil {
		t.Fatal(err)
	}
	fr, err := c.Fork(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"turn-began 1 one []", "message 1 done: one []", "turn-ended 1  [f.txt]",
		"turn-began 2 two []", "message 2 done: two []", "turn-ended 2  [f.txt]",
		"turn-began 3 three []", "message 3 done: three []", "turn-ended 3  [f.txt]",
		// the dry run is no event; the code rewind, then the conversation's
		"rewound 3 code []",
		"rewound 3 conversation []",
		"summarized 1 turns 1-1 []",
		"forked 2 forked from " + c.ID() + " []",
	}
	if !slices.Equal(session, want) {
		t.Errorf("session events:\ngot  %q\nwant %q", session, want)
	}
	// The code rewind's restore is an event too, with the paths it wrote.
	if !slices.Equal(restores, []string{"rewound [f.txt]"}) {
		t.Errorf("restore events of the rewind: %q", restores)
	}
	if fr.Session.Parent != c.ID() {
		t.Errorf("fork parent %q", fr.Session.Parent)
	}
}

// Decree's manifest.json: per file sha256, size and "mode — unix
// permission bits (stored for accurate restore)"; a symlink is mode
// "120000" with the hash and size of its target (DESIGN.md, as git
// records it). The modes come back on restore.
func TestManifestModesAndSymlinks(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "a\n"})
	writeModeFile(t, filepath.Join(ws, "run.sh"), "#!/bin/sh\n", 0o755)
	writeModeFile(t, filepath.Join(ws, "secret.txt"), "s\n", 0o600)
	if err := os.Symlink("a.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	res, err := r.Save(ctx, SaveOptions{Message: "modes"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Manifest(ctx, res.Checkpoint.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]ManifestFile{
		"a.txt":      {SHA256: Sum([]byte("a\n")).String(), Size: 2, Mode: "644"},
		"run.sh":     {SHA256: Sum([]byte("#!/bin/sh\n")).String(), Size: 10, Mode: "755"},
		"secret.txt": {SHA256: Sum([]byte("s\n")).String(), Size: 2, Mode: "600"},
		"link":       {SHA256: Sum([]byte("a.txt")).String(), Size: 5, Mode: "120000"},
	} {
		if got := m.Files[p]; got != want {
			t.Errorf("manifest %s = %+v, want %+v", p, got, want)
		}
	}
	// The JSON has exactly Decree's three fields per file.
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]map[string]map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for p, f := range raw["files"] {
		var keys []string
		for k := range f {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if strings.Join(keys, ",") != "mode,sha256,size" {
			t.Errorf("%s has fields %v, want sha256, size, mode", p, keys)
		}
	}
	// Accurate restore: the bits come back.
	os.Chmod(filepath.Join(ws, "run.sh"), 0o644)
	os.Chmod(filepath.Join(ws, "secret.txt"), 0o666)
	os.Remove(filepath.Join(ws, "link"))
	if _, err := r.Restore(ctx, res.Checkpoint.ID.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{"run.sh": 0o755, "secret.txt": 0o600} {
		if fi, err := os.Stat(filepath.Join(ws, p)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s after restore: %v, %v; want %v", p, fi.Mode(), err, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(ws, "link")); err != nil || target != "a.txt" {
		t.Errorf("link after restore: %q, %v", target, err)
	}
}

// The sandbox snapshot tools: snapshots "cost almost nothing thanks to
// git's content-addressed storage (an unchanged blob across 100 snapshots
// still consumes one object)". ckpt's store is content-addressed too.
func TestHundredSnapshotsStoreAnUnchangedFileOnce(t *testing.T) {
	ctx := context.Background()
	big := make([]byte, 256<<10)
	for i := range big {
		big[i] = byte(i*31 + i>>7)
	}
	r, ws := openTest(t, map[string]string{"big.bin": string(big), "n.txt": "start\n"})
	for i := 0; i < 100; i++ {
		writeFile(t, ws, "n.txt", fmt.Sprint(i, "\n"))
		if _, err := r.SnapshotCreate(ctx, fmt.Sprint("s", i), SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := r.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One blob for big.bin, one per version of n.txt.
	if st.Snapshots != 100 || st.Blobs != 101 {
		t.Errorf("%d snapshots, %d blobs; want 100 snapshots and 101 blobs", st.Snapshots, st.Blobs)
	}
	if st.Stored > int64(len(big))+64<<10 {
		t.Errorf("100 snapshots of a 256 KiB file store %d bytes", st.Stored)
	}
	// Every snapshot still has it.
	os.Remove(filepath.Join(ws, "big.bin"))
	if _, err := r.SnapshotRestore(ctx, "s0"); err != nil {
		t.Fatal(err)
	}
	if testutil.ReadFile(t, ws, "big.bin") != string(big) || testutil.ReadFile(t, ws, "n.txt") != "0\n" {
		t.Error("snapshot s0 did not restore big.bin and n.txt")
	}
}

// CodeBuddy's CheckpointManager, in memory: createCheckpoint(description,
// files?), checkpointBeforeEdit, checkpointBeforeCreate, rewindTo(id),
// rewindToLast(), getCheckpoints(), the maxCheckpoints bound (older ones
// go), and its checkpoint-created and rewind events — on the memory
// backend, nothing on disk but the workspace.
func TestInMemoryCheckpointManager(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	writeFile(t, ws, "src/my-file.ts", "v1\n")
	r, err := Open(ctx, ws, Options{Backend: BackendMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var events []string
	r.Subscribe(func(e Event) { events = append(events, fmt.Sprintf("%s %s %v", e.Kind, e.Message, e.Paths)) })

	// createCheckpoint(description): the whole workspace.
	if _, err := r.Save(ctx, SaveOptions{Message: "Initial project setup"}); err != nil {
		t.Fatal(err)
	}
	// checkpointBeforeEdit(file, description).
	edit, err := r.SaveFiles(ctx, "Before refactoring function X", "src/my-file.ts")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "src/my-file.ts", "v2\n")
	// checkpointBeforeCreate(file): the file is recorded as absent.
	if _, err := r.SaveFiles(ctx, "Before creating src/new.ts", "src/new.ts"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "src/new.ts", "new\n")
	writeFile(t, ws, "src/my-file.ts", "v3\n")

	// getCheckpoints(): newest first, with their descriptions.
	list, err := r.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var descs []string
	for _, c := range list {
		descs = append(descs, c.Message)
	}
	if want := []string{"Before creating src/new.ts", "Before refactoring function X", "Initial project setup"}; !slices.Equal(descs, want) {
		t.Fatalf("checkpoints %q, want %q", descs, want)
	}

	// rewindToLast(): the newest checkpoint, a file that did not exist is
	// deleted; nothing else is touched.
	res, err := r.Restore(ctx, LastRevision, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if testutil.ReadFile(t, ws, "src/new.ts") != "<absent>" || testutil.ReadFile(t, ws, "src/my-file.ts") != "v3\n" {
		t.Fatalf("rewindToLast: new.ts %q, my-file.ts %q", testutil.ReadFile(t, ws, "src/new.ts"), testutil.ReadFile(t, ws, "src/my-file.ts"))
	}
	if fmt.Sprint(res.Changed()) != "[src/new.ts]" {
		t.Errorf("rewindToLast restored %v", res.Changed())
	}
	// rewindTo(id): the file's content before the edit.
	if _, err := r.Restore(ctx, edit.Checkpoint.ID.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "src/my-file.ts"); got != "v1\n" {
		t.Fatalf("rewindTo: my-file.ts %q", got)
	}
	// Events: checkpoint-created is "checkpoint", rewind is "restored".
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, strings.Fields(e)[0])
	}
	if !slices.Contains(kinds, "checkpoint") || !slices.Contains(kinds, "restored") {
		t.Errorf("events %q lack checkpoint and restored", events)
	}
	if !slices.Contains(events, "checkpoint Before refactoring function X [src/my-file.ts]") {
		t.Errorf("no checkpoint event for the edit checkpoint: %q", events)
	}

	// maxCheckpoints: only the newest N are kept, the older ones go.
	for i := 0; i < 10; i++ {
		writeFile(t, ws, "n.txt", fmt.Sprint(i, "\n"))
		if _, err := r.Save(ctx, SaveOptions{Message: fmt.Sprint("cp ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 3}}); err != nil {
		t.Fatal(err)
	}
	list, err = r.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	descs = descs[:0]
	for _, c := range list {
		descs = append(descs, c.Message)
	}
	if want := []string{"cp 9", "cp 8", "cp 7"}; !slices.Equal(descs, want) {
		t.Errorf("after gc keep 3: %q, want %q", descs, want)
	}
}

// CodeBuddy's GhostSnapshotManager runs git commands (child_process.execFile)
// and the sandbox snapshot tools run git init, git add, write-tree,
// commit-tree, update-ref and checkout-index. The git backend does all of
// it — the lazy `git init -b main` included — without running git: with a
// git on PATH that only records being called, every operation works, and
// the real git then reads back what was written.
func TestGitBackendExecutesNoGit(t *testing.T) {
	testutil.NeedGit(t)
	realGit, _ := exec.LookPath("git")
	ctx := context.Background()
	ws := t.TempDir()
	writeFile(t, ws, "a.txt", "v1\n")
	bin := t.TempDir()
	marker := filepath.Join(t.TempDir(), "git-was-called")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\ntouch "+marker+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	r, err := Open(ctx, ws, Options{Backend: BackendGit, GitRefPrefix: "refs/sandbox", Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s1, err := r.SnapshotCreate(ctx, "s1", SnapshotOptions{Description: "before refactor"})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "a.txt", "v2\n")
	writeFile(t, ws, "b.txt", "new\n")
	if _, err := r.Save(ctx, SaveOptions{Message: "turn 1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.SnapshotRestore(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Redo(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the git backend ran git")
	}
	if testutil.ReadFile(t, ws, "a.txt") != "v1\n" || testutil.ReadFile(t, ws, "b.txt") != "<absent>" {
		t.Fatal("the snapshot was not restored")
	}
	sha, err := r.GitCommit(ctx, s1.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(realGit, "-C", ws, "show", "refs/sandbox/snapshots/s1:a.txt").Output()
	if err != nil || string(out) != "v1\n" {
		t.Fatalf("git show of the snapshot: %q, %v", out, err)
	}
	out, err = exec.Command(realGit, "-C", ws, "rev-parse", "refs/sandbox/snapshots/s1").Output()
	if err != nil || strings.TrimSpace(string(out)) != sha {
		t.Fatalf("refs/sandbox/snapshots/s1 = %q (%v), want %s", out, err, sha)
	}
}

// CodeBuddy's CheckpointVersioning prunes "old versions based on a
// maxVersionsPerBranch limit": gc's keep counts per branch (the branch a
// checkpoint was taken on), so a busy branch never pushes another's
// history out.
func TestGCKeepsNewestPerBranch(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "0\n"})
	for i := 0; i < 6; i++ {
		writeFile(t, ws, "a.txt", fmt.Sprint("main ", i, "\n"))
		mustSave(t, r, fmt.Sprint("main ", i))
	}
	if _, err := r.Switch(ctx, "feature/new-ui", SwitchOptions{Create: true}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		writeFile(t, ws, "a.txt", fmt.Sprint("feature ", i, "\n"))
		mustSave(t, r, fmt.Sprint("feature ", i))
	}
	if _, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 2}}); err != nil {
		t.Fatal(err)
	}
	list, err := r.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		got = append(got, c.Branch+":"+c.Message)
	}
	want := []string{"feature/new-ui:feature 5", "feature/new-ui:feature 4", "main:main 5", "main:main 4"}
	if !slices.Equal(got, want) {
		t.Errorf("after gc keep 2:\ngot  %q\nwant %q", got, want)
	}
	// Each branch's history still reads back.
	if _, err := r.Switch(ctx, "main", SwitchOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "a.txt"); got != "main 5\n" {
		t.Errorf("main's tip: a.txt = %q", got)
	}
}
