//go:build unix

package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Class 13: the store's disk fills up just as a restore records its
// result. The restore says truthfully that the workspace is restored but
// not yet recorded; reading commands keep working while the disk is full;
// the next command records it once space returns.
func TestStoreFullAtRestoresLastCommit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "one\n", "b.txt": "one\n"})
	r := e.Open(ckpt.Options{})
	v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "one"})
	if err != nil {
		t.Fatal(err)
	}
	e.Write(map[string]string{"a.txt": "two\n", "b.txt": "two\n"})
	v2, err := r.Save(ctx, ckpt.SaveOptions{Message: "two"})
	if err != nil {
		t.Fatal(err)
	}

	// The restore's first commit (its journal) goes through; from the
	// second on, the disk is full.
	commits := 0
	full := fmt.Errorf("commit: %w: database or disk is full", store.ErrFull)
	disarm := failpoint.Set("store/before-commit", func(string) error {
		if commits++; commits >= 2 {
			return full
		}
		return nil
	})
	_, err = r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{})
	if err == nil {
		t.Fatal("the restore reported success without recording it")
	}
	if !errors.Is(err, ckpt.ErrFull) || !strings.Contains(err.Error(), "the workspace is now "+v1.Checkpoint.Short()) {
		t.Errorf("the restore's error does not say what happened: %v", err)
	}
	if hint := ckpt.Hint(err); !strings.Contains(hint, "next ckpt command records it") {
		t.Errorf("hint: %q", hint)
	}
	if e.Read("a.txt") != "one\n" || e.Read("b.txt") != "one\n" {
		t.Fatalf("workspace: a.txt %q, b.txt %q", e.Read("a.txt"), e.Read("b.txt"))
	}

	// While the disk is full, a new command opens the store (its recovery
	// fails, with a warning) and reading works.
	r2, err := ckpt.Open(ctx, e.WS, ckpt.Options{Store: e.Store})
	if err != nil {
		t.Fatalf("open while the store's disk is full: %v", err)
	}
	if len(r2.Warnings()) == 0 {
		t.Error("no warning about the unrecorded restore")
	}
	if cps, err := r2.List(ctx, ckpt.ListOptions{}); err != nil || len(cps) < 2 {
		t.Errorf("list: %d, %v", len(cps), err)
	}
	if _, err := r2.Log(ctx, ckpt.LogOptions{}); err != nil {
		t.Errorf("log: %v", err)
	}
	if _, err := r2.Show(ctx, v2.Checkpoint.ID.String()); err != nil {
		t.Errorf("show: %v", err)
	}
	st, err := r2.Status(ctx, true)
	if err != nil {
		t.Errorf("status: %v", err)
	} else if st.Pending == "" {
		t.Error("status does not show the pending restore")
	}
	if _, err := r2.Save(ctx, ckpt.SaveOptions{Message: "while full"}); err == nil {
		t.Error("a save while the store's disk is full succeeded")
	}
	r2.Close()
	// The CLI: reading commands exit 0 with a warning.
	e.Extra = []string{"CKPT_FAILPOINT=store/before-commit=fail"}
	for _, args := range [][]string{{"list"}, {"log"}, {"status"}, {"diff", v2.Checkpoint.ID.String()}} {
		code, out, errs := e.Run(args...)
		if code != 0 || !strings.Contains(errs, "ckpt: warning:") {
			t.Errorf("ckpt %s while full: exit %d\n%s%s", args[0], code, out, errs)
		}
	}
	e.Extra = nil

	// Space returns: the next command records the restore.
	disarm()
	r3, err := ckpt.Open(ctx, e.WS, ckpt.Options{Store: e.Store})
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	if len(r3.Warnings()) != 0 {
		t.Errorf("warnings once space returned: %v", r3.Warnings())
	}
	head, _, err := r3.Head(ctx)
	if err != nil || head.ID != v1.Checkpoint.ID {
		t.Fatalf("HEAD = %v, %v; want the restored %s", head, err, v1.Checkpoint.Short())
	}
	if _, err := r3.Undo(ctx); err != nil {
		t.Fatalf("undo of the recorded restore: %v", err)
	}
	if e.Read("a.txt") != "two\n" {
		t.Fatalf("after undo a.txt = %q", e.Read("a.txt"))
	}
}
