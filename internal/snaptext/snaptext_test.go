package snaptext

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// snapshotRepo opens a workspace holding files, with a clock.
func snapshotRepo(t *testing.T, backend string, files map[string]string) (*ckpt.Repo, string, *testutil.Clock) {
	t.Helper()
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, files)
	clk := testutil.NewClock("2026-04-23T12:00:00Z")
	opts := ckpt.Options{Backend: backend, Now: clk.Now}
	if backend == ckpt.BackendSQLite {
		opts.Store = t.TempDir()
	}
	repo, err := ckpt.Open(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	return repo, ws, clk
}

func mustSnapshots(t *testing.T, repo *ckpt.Repo) []*ckpt.Snapshot {
	t.Helper()
	s, err := repo.Snapshots(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSnapshotResponses: the responses are the sandbox snapshot tools',
// byte for byte.
func TestSnapshotResponses(t *testing.T) {
	for _, backend := range []string{ckpt.BackendSQLite, ckpt.BackendMemory} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			repo, ws, clk := snapshotRepo(t, backend, map[string]string{"a.txt": "v1\n", "b.txt": "b\n"})

			if got := List(mustSnapshots(t, repo)); got != "no snapshots" {
				t.Errorf("empty list = %q", got)
			}
			clk.Set("2026-04-23T12:15:00Z")
			s2, err := repo.SnapshotCreate(ctx, "s2", ckpt.SnapshotOptions{Description: "initial checkpoint"})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := Created(s2), "snapshot s2 created: "+s2.Checkpoint.String(); got != want {
				t.Errorf("created = %q, want %q", got, want)
			}
			if len(s2.Checkpoint.String()) != 64 {
				t.Errorf("checkpoint id %q is not 64 hex", s2.Checkpoint)
			}
			cp, err := repo.Get(ctx, "snapshots/s2")
			if err != nil {
				t.Fatal(err)
			}
			if cp.Message != "initial checkpoint" || cp.Meta["snapshot"] != "s2" || cp.Kind != ckpt.KindManual {
				t.Errorf("snapshot checkpoint = %+v", cp)
			}

			testutil.WriteFiles(t, ws, map[string]string{"a.txt": "v2\n"})
			clk.Set("2026-04-23T12:30:00Z")
			s1, err := repo.SnapshotCreate(ctx, "s1", ckpt.SnapshotOptions{Description: "before refactor"})
			if err != nil {
				t.Fatal(err)
			}
			want := "s1\t" + s1.Checkpoint.Short() + "\t2026-04-23T12:30:00+00:00\tbefore refactor\n" +
				"s2\t" + s2.Checkpoint.Short() + "\t2026-04-23T12:15:00+00:00\tinitial checkpoint"
			if got := List(mustSnapshots(t, repo)); got != want {
				t.Errorf("list:\ngot  %q\nwant %q", got, want)
			}

			// The tools' diff: "-" is the snapshot, "+" the working tree.
			d, err := repo.SnapshotDiff(ctx, "s2")
			if err != nil {
				t.Fatal(err)
			}
			text, err := Diff(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			// (Their documentation shows e5c5594 for "v2\n"; git hash-object says 8c1384d.)
			wantDiff := "diff --git a/a.txt b/a.txt\nindex 626799f..8c1384d 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-v1\n+v2\n"
			if text != wantDiff {
				t.Errorf("diff:\ngot  %q\nwant %q", text, wantDiff)
			}
			d, err = repo.SnapshotDiff(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if text, _ := Diff(ctx, d); text != "no differences" {
				t.Errorf("diff of an equal snapshot = %q", text)
			}

			// The tools' restore: two files changed.
			testutil.WriteFiles(t, ws, map[string]string{"b.txt": "b2\n"})
			res, err := repo.SnapshotRestore(ctx, "s2")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := Restored("s2", res), "restored snapshot s2 (2 file(s) changed):\na.txt\nb.txt"; got != want {
				t.Errorf("restored = %q, want %q", got, want)
			}
			if res.PreRestore == nil {
				t.Errorf("the unsaved b.txt was not checkpointed before the restore")
			}
			if got := Restored("s2", &ckpt.RestoreResult{}); got != "restored snapshot s2 (0 file(s) changed):" {
				t.Errorf("empty restore = %q", got)
			}

			del, err := repo.SnapshotDelete(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if del.Name != "s1" || del.Checkpoint != s1.Checkpoint {
				t.Errorf("deleted %+v", del)
			}
			if got := Deleted("s1"); got != "snapshot s1 deleted" {
				t.Errorf("deleted = %q", got)
			}
			if got := List(mustSnapshots(t, repo)); !strings.HasPrefix(got, "s2\t") || strings.Contains(got, "s1") {
				t.Errorf("list after delete = %q", got)
			}
			// The deleted snapshot's checkpoint is still there.
			if _, err := repo.Get(ctx, s1.Checkpoint.String()); err != nil {
				t.Errorf("checkpoint of a deleted snapshot: %v", err)
			}
		})
	}
}

// TestListRows: one row per snapshot that has not expired, the description
// cut to its first line with tabs turned into spaces.
func TestListRows(t *testing.T) {
	at := time.Date(2026, 4, 23, 11, 0, 0, 0, time.FixedZone("", 2*3600))
	var id ckpt.ID
	snaps := []*ckpt.Snapshot{
		{Name: "east", Checkpoint: id, Time: at, Description: "line one\tcol\r\nline two"},
		{Name: "short", Checkpoint: id, Time: at, Expired: true},
		{Name: "west", Checkpoint: id, Time: at},
	}
	want := "east\t000000000000\t2026-04-23T09:00:00+00:00\tline one col\n" +
		"west\t000000000000\t2026-04-23T09:00:00+00:00\t"
	if got := List(snaps); got != want {
		t.Errorf("List:\ngot  %q\nwant %q", got, want)
	}
	if got := List(snaps[1:2]); got != "no snapshots" {
		t.Errorf("only expired: %q", got)
	}
}
