//go:build unix

package faults

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
)

// Class 18: a partial restore across a type change (restore REV -- d/f
// where d is now a file, and the reverse) leaves HEAD equal to the disk.
func TestPartialRestoreAcrossTypeChange(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		before  map[string]string // the checkpoint restored from
		now     map[string]string // the workspace when restoring
		path    string
		want    map[string]string // the workspace after
		wantOff []string          // paths absent after
	}{
		{"a directory where a file is now",
			map[string]string{"d/f": "f1\n", "d/g": "g1\n", "x": "x\n"},
			map[string]string{"d": "a file now\n", "x": "x\n"},
			"d/f", map[string]string{"d/f": "f1\n", "x": "x\n"}, []string{"d/g"}},
		{"a deeper directory where a file is now",
			map[string]string{"a/b/c/f": "f1\n", "x": "x\n"},
			map[string]string{"a/b": "b is a file\n", "x": "x\n"},
			"a/b/c/f", map[string]string{"a/b/c/f": "f1\n", "x": "x\n"}, nil},
		{"a file where a directory is now",
			map[string]string{"d": "d was a file\n", "x": "x\n"},
			map[string]string{"d/f": "f now\n", "d/g": "g now\n", "x": "x\n"},
			"d/f", map[string]string{"d/g": "g now\n", "x": "x\n"}, []string{"d/f"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.Write(tc.before)
			r := e.Open(ckpt.Options{})
			v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "before"})
			if err != nil {
				t.Fatal(err)
			}
			for p := range tc.before {
				os.RemoveAll(filepath.Join(e.WS, strings.Split(p, "/")[0]))
			}
			e.Write(tc.now)
			if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "now"}); err != nil {
				t.Fatal(err)
			}
			res, err := r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{Paths: []string{tc.path}})
			if err != nil {
				t.Fatalf("restore -- %s: %v", tc.path, err)
			}
			got := e.Snapshot()
			for p, c := range tc.want {
				if got[p].Data != c {
					t.Errorf("%s = %q, want %q (actions %+v)", p, got[p].Data, c, res.Actions)
				}
			}
			for _, p := range tc.wantOff {
				if _, ok := got[p]; ok {
					t.Errorf("%s is there", p)
				}
			}
			st, err := r.Status(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Changes) != 0 {
				t.Fatalf("HEAD does not match the disk after the partial restore: %+v (actions %+v)", st.Changes, res.Actions)
			}
			// Undo returns to the state before.
			if _, err := r.Undo(ctx); err != nil {
				t.Fatal(err)
			}
			got = e.Snapshot()
			for p, c := range tc.now {
				if got[p].Data != c {
					t.Errorf("after undo %s = %q, want %q", p, got[p].Data, c)
				}
			}
		})
	}
}
