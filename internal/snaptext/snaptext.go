// Package snaptext words ckpt's named snapshots as the sandbox snapshot
// tools answer: the exact responses to create, list, restore, diff and
// delete, which the ckpt snapshot commands and the MCP tools share. It is
// a face: the engine returns values, and the words are chosen here.
package snaptext

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// Created is the response to a create:
// "snapshot NAME created: <64-hex checkpoint id>".
func Created(s *ckpt.Snapshot) string {
	return fmt.Sprintf("snapshot %s created: %s", s.Name, s.ID())
}

// List is the response to a list: one row per snapshot that
// has not expired, in the order given (newest first from [ckpt.Repo.Snapshots]),
// "name<TAB>12-hex id<TAB>time<TAB>description" with the time in
// [ckpt.SnapshotTimeLayout] and the description's first line (tabs turned into
// spaces); or "no snapshots".
func List(snaps []*ckpt.Snapshot) string {
	var b strings.Builder
	for _, s := range snaps {
		if s.Expired {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		desc, _, _ := strings.Cut(s.Description, "\n")
		desc = strings.ReplaceAll(strings.TrimSuffix(desc, "\r"), "\t", " ")
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s", s.Name, s.ID()[:12], s.Time.UTC().Format(ckpt.SnapshotTimeLayout), desc)
	}
	if b.Len() == 0 {
		return "no snapshots"
	}
	return b.String()
}

// Restored is the response to a restore:
// "restored snapshot NAME (N file(s) changed):" and then each path written
// or deleted on its own line (quoted as git quotes unusual names).
func Restored(name string, res *ckpt.RestoreResult) string {
	changed := res.Changed()
	var b strings.Builder
	fmt.Fprintf(&b, "restored snapshot %s (%d file(s) changed):", name, len(changed))
	for _, p := range changed {
		b.WriteByte('\n')
		b.WriteString(ckpt.QuotePath(string(p)))
	}
	return b.String()
}

// Diff is the response to a diff: the git-style patch
// ("-" lines are the snapshot, "+" lines the working tree), or
// "no differences".
func Diff(ctx context.Context, d *ckpt.DiffResult) (string, error) {
	if len(d.Files) == 0 {
		return "no differences", nil
	}
	var b strings.Builder
	if err := d.WritePatch(ctx, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Deleted is the response to a delete: "snapshot NAME deleted".
func Deleted(name string) string {
	return fmt.Sprintf("snapshot %s deleted", name)
}
