package ckpt_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// Name the state before a risky change, look at what the change did, and
// roll back: the sandbox snapshot tools' snapshot flow.
func ExampleRepo_SnapshotCreate() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "ckpt-example")
	defer os.RemoveAll(ws)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("v1\n"), 0o644)

	now := time.Date(2026, 4, 23, 12, 30, 0, 0, time.UTC)
	repo, err := ckpt.Open(ctx, ws, ckpt.Options{Backend: ckpt.BackendMemory, Now: func() time.Time { return now }})
	if err != nil {
		log.Fatal(err)
	}
	defer repo.Close()

	if _, err := repo.SnapshotCreate(ctx, "before-refactor", ckpt.SnapshotOptions{Description: "tests pass"}); err != nil {
		log.Fatal(err)
	}
	snaps, _ := repo.Snapshots(ctx)
	fmt.Println(snaps[0].Name, snaps[0].Time.Format(ckpt.SnapshotTimeLayout), snaps[0].Description)

	// The risky change.
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("v2\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("new\n"), 0o644)

	d, _ := repo.SnapshotDiff(ctx, "before-refactor")
	d.WritePatch(ctx, os.Stdout)

	res, err := repo.SnapshotRestore(ctx, "before-refactor")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("restored snapshot before-refactor (%d file(s) changed):\n", len(res.Changed()))
	for _, p := range res.Changed() {
		fmt.Println(p)
	}

	// Reusing the name needs Force.
	_, err = repo.SnapshotCreate(ctx, "before-refactor", ckpt.SnapshotOptions{})
	fmt.Println(ckpt.Hint(err))

	// Output:
	// before-refactor 2026-04-23T12:30:00+00:00 tests pass
	// diff --git a/a.txt b/a.txt
	// index 626799f..8c1384d 100644
	// --- a/a.txt
	// +++ b/a.txt
	// @@ -1 +1 @@
	// -v1
	// +v2
	// diff --git a/b.txt b/b.txt
	// new file mode 100644
	// index 0000000..3e75765
	// --- /dev/null
	// +++ b/b.txt
	// @@ -0,0 +1 @@
	// +new
	// restored snapshot before-refactor (2 file(s) changed):
	// a.txt
	// b.txt
	// replace it with --force (MCP: force: true), or pick another name
}
