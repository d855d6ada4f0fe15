package ckpt_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/seed1cedbf7c/ckpt"
)

// Save a checkpoint, let an "agent" change files, see the change, and
// restore: the workspace is back, verified, and the restore is undoable.
func Example() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "ckpt-example")
	defer os.RemoveAll(ws)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)

	repo, err := ckpt.Open(ctx, ws, ckpt.Options{Backend: ckpt.BackendMemory})
	if err != nil {
		log.Fatal(err)
	}
	defer repo.Close()

	before, err := repo.Save(ctx, ckpt.SaveOptions{Message: "before the agent's turn"})
	if err != nil {
		log.Fatal(err)
	}

	// The agent edits a file and a build writes another.
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "out.bin"), []byte{0, 1, 2}, 0o755)

	d, _ := repo.Diff(ctx, ckpt.DiffOptions{})
	for _, f := range d.Files {
		fmt.Println(f.Status, f.Path)
	}

	res, err := repo.Restore(ctx, before.Checkpoint.ID.String(), ckpt.RestoreOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("restored, changed:", res.Changed())
	fmt.Println("unsaved work kept as", res.PreRestore.Kind)

	// Output:
	// modified main.go
	// added out.bin
	// restored, changed: [main.go out.bin]
	// unsaved work kept as pre-restore
}

// Subscribe to events: every face (CLI, MCP, HTTP) is a subscriber.
func ExampleRepo_Subscribe() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "ckpt-example")
	defer os.RemoveAll(ws)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	repo, _ := ckpt.Open(ctx, ws, ckpt.Options{Backend: ckpt.BackendMemory})
	defer repo.Close()

	cancel := repo.Subscribe(func(e ckpt.Event) {
		if e.Kind == ckpt.EventCheckpoint {
			fmt.Println(e.Kind, e.CheckpointKind, e.Message)
			return
		}
		fmt.Println(e.Kind, e.Paths)
	})
	defer cancel()
	repo.Save(ctx, ckpt.SaveOptions{Message: "one"})
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("b\n"), 0o644)
	repo.Save(ctx, ckpt.SaveOptions{Message: "two"})
	repo.Undo(ctx)
	// Output:
	// checkpoint manual one
	// checkpoint manual two
	// undone [a.txt]
}

// Record files just before an edit tool writes them; restoring that
// partial checkpoint puts them back and deletes the ones it created.
func ExampleRepo_SaveFiles() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "ckpt-example")
	defer os.RemoveAll(ws)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("original\n"), 0o644)
	repo, _ := ckpt.Open(ctx, ws, ckpt.Options{Backend: ckpt.BackendMemory})
	defer repo.Close()

	pre, _ := repo.SaveFiles(ctx, "before edit", "a.txt", "new.txt")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("edited\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "new.txt"), []byte("created\n"), 0o644)

	repo.Restore(ctx, pre.Checkpoint.ID.String(), ckpt.RestoreOptions{})
	b, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
	_, err := os.Stat(filepath.Join(ws, "new.txt"))
	fmt.Printf("a.txt: %snew.txt exists: %v\n", b, err == nil)
	// Output:
	// a.txt: original
	// new.txt exists: false
}

// The git backend: the store lives in the repository's .git/ckpt and every
// checkpoint of the timeline is also a detached git commit under the ref
// prefix, readable with git show. A directory that is not a repository is
// initialised (branch main), and Notes says so once.
func ExampleRepo_GitCommit() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "ckpt-example")
	defer os.RemoveAll(ws)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)
	state, _ := os.MkdirTemp("", "ckpt-example-state")
	defer os.RemoveAll(state)

	repo, err := ckpt.Open(ctx, ws, ckpt.Options{Backend: ckpt.BackendGit, GitRefPrefix: "refs/sandbox",
		Store: filepath.Join(state, "store")})
	if err != nil {
		log.Fatal(err)
	}
	defer repo.Close()
	fmt.Println(len(repo.Notes()), "note")

	res, err := repo.Save(ctx, ckpt.SaveOptions{Message: "turn 1"})
	if err != nil {
		log.Fatal(err)
	}
	if err := repo.GitSyncError(); err != nil {
		log.Fatal(err)
	}
	sha, err := repo.GitCommit(ctx, res.Checkpoint.ID)
	if err != nil {
		log.Fatal(err)
	}
	ref, _ := repo.GitRef("s1")
	fmt.Println(len(sha), "hex digits")
	fmt.Println(ref)
	// Output:
	// 1 note
	// 40 hex digits
	// refs/sandbox/snapshots/s1
}
