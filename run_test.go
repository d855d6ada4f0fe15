package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// decreeWorkspace makes a workspace with files and one routine, and opens it.
func decreeWorkspace(t *testing.T, files map[string]string, routine string) (*Repo, string) {
	t.Helper()
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, files)
	os.MkdirAll(filepath.Join(ws, ".decree/routines"), 0o755)
	os.MkdirAll(filepath.Join(ws, ".decree/inbox"), 0o755)
	os.WriteFile(filepath.Join(ws, ".decree/routines/develop.sh"), []byte("#!/usr/bin/env bash\nset -e\n"+routine), 0o755)
	repo, err := Open(context.Background(), ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo, ws
}

func message(t *testing.T, ws, name, front, body string) {
	t.Helper()
	data := "---\n" + front + "\n---\n" + body
	if front == "" {
		data = body
	}
	if err := os.WriteFile(filepath.Join(ws, ".decree/inbox", name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func process(t *testing.T, repo *Repo) *ProcessResult {
	t.Helper()
	res, err := repo.Process(context.Background(), ProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors {
		t.Errorf("process: %v", e)
	}
	return res
}

func state(t *testing.T, ws string) treegen.State {
	t.Helper()
	st, err := treegen.Snapshot(ws, func(rel string) bool { return rel == ".decree" || rel == ".git" })
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func runFile(t *testing.T, ws, id, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, ".decree/runs", id, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// AC1: before the routine starts, manifest.json holds the SHA-256 of every
// project file, ignore rules respected.
func TestAC01ManifestBeforeExecution(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"src/main.rs": "fn main() {}\n", "a.log": "log\n", ".gitignore": "*.log\n"},
		`cp "$message_dir/manifest.json" seen-manifest.json`+"\n")
	message(t, ws, "20260101000000-0.md", "", "do it\n")
	process(t, repo)
	var m Manifest
	if err := m.UnmarshalJSON([]byte(runFile(t, ws, "20260101000000-0", "manifest.json"))); err != nil {
		t.Fatal(err)
	}
	seen, err := os.ReadFile(filepath.Join(ws, "seen-manifest.json"))
	if err != nil {
		t.Fatalf("the routine did not find manifest.json when it started: %v", err)
	}
	if !strings.Contains(string(seen), `"src/main.rs"`) {
		t.Fatalf("manifest the routine saw: %s", seen)
	}
	f := m.Files["src/main.rs"]
	if f.SHA256 != Sum([]byte("fn main() {}\n")).String() || f.Size != 13 || f.Mode != "644" {
		t.Fatalf("manifest entry %+v", f)
	}
	if _, ok := m.Files["a.log"]; ok {
		t.Fatal("an ignored file is in the manifest")
	}
}

// AC2: after success, changes.diff holds unified diffs of new, modified and
// deleted files.
func TestAC02ChangesDiffOnSuccess(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"mod.txt": "one\n", "gone.txt": "bye\n"},
		"echo two >> mod.txt\nrm gone.txt\necho hi > new.txt\n")
	message(t, ws, "20260101000000-0.md", "", "")
	res := process(t, repo)
	if len(res.Runs) != 1 || res.Runs[0].Status != "done" {
		t.Fatalf("runs %+v", res.Runs)
	}
	d := runFile(t, ws, "20260101000000-0", "changes.diff")
	for _, want := range []string{"--- a/mod.txt\n+++ b/mod.txt\n", "+two\n", "deleted file mode 100644", "--- a/gone.txt\n+++ /dev/null\n", "-bye\n",
		"new file mode 100644", "--- /dev/null\n+++ b/new.txt\n", "+hi\n"} {
		if !strings.Contains(d, want) {
			t.Errorf("changes.diff lacks %q:\n%s", want, d)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".decree/inbox/done/20260101000000-0.md")); err != nil {
		t.Fatal("message not moved to inbox/done")
	}
}

// AC3: a failure still writes changes.diff (the partial work) and the tree is
// reverted to the manifest.
func TestAC03FailureDiffAndRevert(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"a.txt": "a\n"}, "echo partial >> a.txt\nexit 1\n")
	os.WriteFile(filepath.Join(ws, ".decree/config.yml"), []byte("max_retries: 1\n"), 0o644)
	before := state(t, ws)
	message(t, ws, "20260101000000-0.md", "", "")
	res := process(t, repo)
	if res.Runs[0].Status != "dead" {
		t.Fatalf("status %s", res.Runs[0].Status)
	}
	if d := runFile(t, ws, "20260101000000-0", "changes.diff"); !strings.Contains(d, "+partial") {
		t.Fatalf("changes.diff lacks the partial work:\n%s", d)
	}
	if d := treegen.Diff(before, state(t, ws)); d != "" {
		t.Fatalf("not reverted:\n%s", d)
	}
}

// AC4: files the routine added are deleted by the revert.
func TestAC04NewFilesDeletedOnRevert(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"keep.txt": "k\n"}, "mkdir -p new/deep\necho x > new/deep/f.txt\necho y > top.txt\nexit 2\n")
	os.WriteFile(filepath.Join(ws, ".decree/config.yml"), []byte("max_retries: 1\n"), 0o644)
	before := state(t, ws)
	message(t, ws, "20260101000000-0.md", "", "")
	process(t, repo)
	if d := treegen.Diff(before, state(t, ws)); d != "" {
		t.Fatalf("tree differs from the manifest:\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(ws, "new")); err == nil {
		t.Fatal("the emptied directory was left")
	}
}

// AC5: files the routine deleted are restored from the diff's content
// (binary included).
func TestAC05DeletedFilesRestoredFromDiff(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"text.txt": "line 1\nline 2\n", "bin.dat": "\x00\x01\x02\xff binary"},
		"rm text.txt bin.dat\nexit 1\n")
	os.WriteFile(filepath.Join(ws, ".decree/config.yml"), []byte("max_retries: 1\n"), 0o644)
	before := state(t, ws)
	message(t, ws, "20260101000000-0.md", "", "")
	process(t, repo)
	if d := treegen.Diff(before, state(t, ws)); d != "" {
		t.Fatalf("deleted files not restored:\n%s", d)
	}
	if d := runFile(t, ws, "20260101000000-0", "changes.diff"); !strings.Contains(d, "base64 old 11 ") {
		t.Fatalf("the binary's content is not in the diff:\n%s", d)
	}
}

// AC6: when every attempt failed, the tree is back at the message's
// checkpoint and the message is dead-lettered.
func TestAC06ExhaustionReverts(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"a.txt": "a\n"}, "echo more >> a.txt\necho $RANDOM > r.txt\nexit 1\n")
	before := state(t, ws)
	message(t, ws, "20260101000000-0.md", "", "")
	res := process(t, repo)
	rec := res.Runs[0]
	if rec.Status != "dead" || len(rec.Attempts) != 3 {
		t.Fatalf("status %s after %d attempts", rec.Status, len(rec.Attempts))
	}
	if d := treegen.Diff(before, state(t, ws)); d != "" {
		t.Fatalf("not reverted:\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(ws, ".decree/inbox/dead/20260101000000-0.md")); err != nil {
		t.Fatal("message not dead-lettered")
	}
}

// AC7: no .git anywhere, and git is never executed: a fake git first on
// PATH records any call.
func TestAC07NoGitDependency(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"a.txt": "a\n"}, "echo b >> a.txt\nexit 1\n")
	os.WriteFile(filepath.Join(ws, ".decree/config.yml"), []byte("max_retries: 2\n"), 0o644)
	if _, err := os.Stat(filepath.Join(ws, ".git")); err == nil {
		t.Fatal("test workspace has .git")
	}
	bin := t.TempDir()
	marker := filepath.Join(t.TempDir(), "git-was-called")
	os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\ntouch "+marker+"\nexit 1\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "patch"), []byte("#!/bin/sh\ntouch "+marker+"\nexit 1\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "diff"), []byte("#!/bin/sh\ntouch "+marker+"\nexit 1\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	before := state(t, ws)
	message(t, ws, "20260101000000-0.md", "", "")
	res := process(t, repo)
	if res.Runs[0].Status != "dead" || len(res.Runs[0].Attempts) != 2 {
		t.Fatalf("status %s", res.Runs[0].Status)
	}
	if d := treegen.Diff(before, state(t, ws)); d != "" {
		t.Fatalf("not reverted:\n%s", d)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("git, diff or patch was executed")
	}
}

// AC8: .gitignore'd files never enter the manifest (nor the diff).
func TestAC08GitignoreRespected(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{".gitignore": "build/\n*.tmp\n", ".decreeignore": "secret.txt\n", "a.txt": "a\n"},
		"mkdir -p build\necho o > build/out.o\necho t > x.tmp\necho s > secret.txt\necho b >> a.txt\n")
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	os.WriteFile(filepath.Join(ws, "build/old.o"), []byte("o"), 0o644)
	message(t, ws, "20260101000000-0.md", "", "")
	process(t, repo)
	man := runFile(t, ws, "20260101000000-0", "manifest.json")
	d := runFile(t, ws, "20260101000000-0", "changes.diff")
	for _, p := range []string{"build/", "x.tmp", "secret.txt"} {
		if strings.Contains(man, p) || strings.Contains(d, p) {
			t.Errorf("ignored %s appears in the manifest or diff", p)
		}
	}
	if !strings.Contains(d, "a/a.txt") {
		t.Errorf("diff lacks a.txt:\n%s", d)
	}
}

// AC9: after a revert every affected file is hash-checked against the
// manifest; a mismatch is a hard error, and the workspace is not left
// half-reverted.
func TestAC09IntegrityVerification(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, "echo more >> a.txt\necho more >> b.txt\n")
	message(t, ws, "20260101000000-0.md", "", "")
	process(t, repo)
	after := state(t, ws)
	// Tamper with the record: the manifest now claims another content.
	mp := filepath.Join(ws, ".decree/runs/20260101000000-0/manifest.json")
	data, _ := os.ReadFile(mp)
	var raw map[string]map[string]map[string]any
	json.Unmarshal(data, &raw)
	raw["files"]["b.txt"]["sha256"] = strings.Repeat("0", 64)
	data, _ = json.Marshal(raw)
	os.WriteFile(mp, data, 0o644)
	_, err := repo.RevertRun(context.Background(), "20260101000000-0")
	var ie *IntegrityError
	if !errors.As(err, &ie) || len(ie.Paths) != 1 || ie.Paths[0] != "b.txt" {
		t.Fatalf("got %v, want an IntegrityError naming b.txt", err)
	}
	if d := treegen.Diff(after, state(t, ws)); d != "" {
		t.Fatalf("a failed revert changed the workspace:\n%s", d)
	}
	// Untampered, the same revert succeeds and verifies.
	os.WriteFile(filepath.Join(ws, "c.txt"), []byte("unrelated\n"), 0o644)
	repo2, ws2 := decreeWorkspace(t, map[string]string{"a.txt": "a\n"}, "echo more >> a.txt\n")
	message(t, ws2, "20260101000000-0.md", "", "")
	process(t, repo2)
	if _, err := repo2.RevertRun(context.Background(), "2026"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws2, "a.txt")); string(b) != "a\n" {
		t.Fatalf("a.txt = %q after revert", b)
	}
}

// AC10: changes.diff is a human-readable unified diff that standard tools
// (and ckpt's own parser) read.
func TestAC10HumanReadableDiff(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"a.txt": "one\ntwo\nthree\n"}, "sed -i 's/two/TWO/' a.txt\necho new > n.txt\n")
	message(t, ws, "20260101000000-0.md", "", "")
	process(t, repo)
	d := runFile(t, ws, "20260101000000-0", "changes.diff")
	if !strings.HasPrefix(d, "diff --git a/a.txt b/a.txt\n") || !strings.Contains(d, "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n") {
		t.Fatalf("not a readable unified diff:\n%s", d)
	}
	if strings.ContainsFunc(d, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' }) {
		t.Fatal("control characters in a text diff")
	}
	if _, err := diff.Parse([]byte(d)); err != nil {
		t.Fatal(err)
	}
}

// The last attempt starts clean and can read failure-context.md; earlier
// attempts keep their partial work for the next one.
func TestRetriesKeepWorkThenCleanSlate(t *testing.T) {
	repo, ws := decreeWorkspace(t, map[string]string{"a.txt": "a\n"}, `n=$(ls "$message_dir" | grep -c '^attempt-.*\.log$' || true)
echo "attempt $((n+1))" >> progress.txt
cp progress.txt "$message_dir/seen-$((n+1)).txt"
if [ -f "$message_dir/failure-context.md" ]; then cp "$message_dir/failure-context.md" fc-seen.md; exit 0; fi
exit 1
`)
	message(t, ws, "20260101000000-0.md", "", "")
	res := process(t, repo)
	rec := res.Runs[0]
	if rec.Status != "done" || len(rec.Attempts) != 3 {
		t.Fatalf("status %s after %d attempts", rec.Status, len(rec.Attempts))
	}
	if s := runFile(t, ws, "20260101000000-0", "seen-2.txt"); s != "attempt 1\nattempt 2\n" {
		t.Fatalf("attempt 2 did not see attempt 1's work: %q", s)
	}
	if s := runFile(t, ws, "20260101000000-0", "seen-3.txt"); s != "attempt 3\n" {
		t.Fatalf("the last attempt did not start clean: %q", s)
	}
	fc, err := os.ReadFile(filepath.Join(ws, "fc-seen.md"))
	if err != nil {
		t.Fatal("the last attempt did not see failure-context.md")
	}
	for _, want := range []string{"# Failure Context", "failed 2 previous attempt(s)", "## Attempt 1", "## Attempt 2", "Exit code: 1", "Changes: +1 ~0 -0", "progress.txt | 1 +"} {
		if !strings.Contains(string(fc), want) {
			t.Errorf("failure-context.md lacks %q:\n%s", want, fc)
		}
	}
}

// A revert brings back a large binary file (one the store keeps in chunks)
// and a file the routine deleted, exactly, and the store stays consistent.
func TestRevertLargeBinary(t *testing.T) {
	big := make([]byte, 5<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>9)
	}
	repo, ws := decreeWorkspace(t, map[string]string{"big.bin": string(big), "gone.txt": "bye\n"},
		"printf 'x' | dd of=big.bin bs=1 seek=3000000 conv=notrunc 2>/dev/null\nrm gone.txt\nexit 1\n")
	os.WriteFile(filepath.Join(ws, ".decree/config.yml"), []byte("max_retries: 1\n"), 0o644)
	before := state(t, ws)
	message(t, ws, "20260101000000-0.md", "", "")
	if rec := process(t, repo).Runs[0]; rec.Status != "dead" || rec.Attempts[0].Modified != 1 {
		t.Fatalf("run %s, %+v", rec.Status, rec.Attempts)
	}
	if d := treegen.Diff(before, state(t, ws)); d != "" {
		t.Fatalf("not reverted:\n%s", d)
	}
	if _, err := repo.Fsck(context.Background()); err != nil {
		t.Fatal(err)
	}
}
