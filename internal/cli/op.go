package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

func newOpCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "op",
		Short: "The operation log: list it, put back the state of any entry",
		Long: `Every save, restore, undo, redo, switch, rewind, revert, and every branch,
tag or snapshot change, is an entry of the operation log: the history of
what ckpt did, which 'ckpt undo' and 'ckpt redo' step through. 'ckpt op log'
lists it; 'ckpt op restore OP' goes straight back to the state entry OP left.`,
		Example: `  ckpt op log
  ckpt op restore 12
  ckpt undo            # takes the op restore back`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdUsageError(cmd, errors.New("op needs a subcommand: log or restore"), "")
		},
	}
	c.AddCommand(newOpLogCmd(e), newOpRestoreCmd(e))
	return c
}

type opLogOptions struct {
	limit int
	json  bool
}

func newOpLogCmd(e *env) *cobra.Command {
	o := &opLogOptions{}
	c := &cobra.Command{
		Use:   "log [-n N]",
		Short: "List the operation log, newest first",
		Long: `Log lists the operation log, newest first, one operation a line:

  undo →   12  2026-11-26 07:50  restore          9e8d7c6b5a41 → 3f2a9c01b2d4  +0 ~1 -2  main  (op 7)
           11  2026-11-26 07:49  save             3f2a9c01b2d4 → 9e8d7c6b5a41  +2 ~1 -0  main
           10  2026-11-26 07:48  tag              v1 at 3f2a9c01b2d4                     main

The columns: the operation's number (what 'ckpt op restore' takes), its
time, its kind, HEAD before → after, the paths that differ between them
(+added ~modified -deleted; the first save counts its files as added), and
the branch HEAD was on afterwards. Operations that change no files (branch,
tag, snapshot deletion, pull) show their name instead of HEAD; a saved
partial checkpoint (save-paths) shows the checkpoint. At the end, '(op N)'
names the operation an undo took back, a redo did again, or an 'ckpt op
restore' put back.

'undo →' marks the operation 'ckpt undo' would take back now (it returns to
that operation's BEFORE); 'redo →' the one 'ckpt redo' would do again (to
its AFTER). gc drops the oldest operations once it removes a checkpoint they
name.

--json prints an array of entries: seq, time, kind, before, after,
checkpoint, branch, target, detail, change {added, modified, deleted},
restorable, undo, redo.`,
		Example: `  ckpt op log
  ckpt op log -n 10
  ckpt op log --json | jq '.[] | select(.undo)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runOpLog(e, o) },
	}
	c.Flags().IntVarP(&o.limit, "limit", "n", 0, "show the newest `N` operations")
	jsonFlag(c, &o.json, "print a JSON array of entries")
	return c
}

func runOpLog(e *env, o *opLogOptions) error {
	if o.limit < 0 {
		return usagef("op log: -n wants a number of operations, 0 or more (0: all), not %d", o.limit)
	}
	es, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) ([]ckpt.OpEntry, error) {
		return r.OpLog(ctx, ckpt.OpLogOptions{Limit: o.limit})
	})
	if err != nil {
		return err
	}
	return listing(e, o.json, es, "no operations yet; `ckpt save` records the first",
		func(op ckpt.OpEntry) string { return strconv.FormatInt(op.Seq, 10) }, opLine)
}

// opLine is an entry of the op log for people (see op log's help).
func opLine(op ckpt.OpEntry) string {
	mark := ""
	switch {
	case op.Undo:
		mark = "undo →"
	case op.Redo:
		mark = "redo →"
	}
	var what, change string
	switch {
	case op.Kind.HasState():
		before := "-"
		if !op.Before.IsZero() {
			before = op.Before.Short()
		}
		what = fmt.Sprintf("%-12s → %s", before, op.After.Short())
		if op.Change != nil {
			change = ckpt.FormatCounts(op.Change.Added, op.Change.Modified, op.Change.Deleted)
		}
	case op.Kind == ckpt.OpSavePaths:
		what = op.Checkpoint.Short() + " (HEAD unmoved)"
	case op.Kind == ckpt.OpBranch || op.Kind == ckpt.OpTag:
		what = op.Detail + " at " + op.After.Short()
	case op.Kind == ckpt.OpBranchDelete || op.Kind == ckpt.OpTagDelete:
		what = op.Detail + " (was " + op.Before.Short() + ")"
	case op.Kind == ckpt.OpSnapshotDelete:
		what = op.Detail + " (" + op.Checkpoint.Short() + ")"
	default:
		what = op.Detail
	}
	branch := op.Branch
	if branch == "" {
		branch = "(detached)"
	}
	line := fmt.Sprintf("%-6s %4d  %s  %-15s  %-27s  %-8s  %s", mark, op.Seq, op.Time.Local().Format("2006-01-02 15:04"),
		op.Kind, what, change, branch)
	if op.Target != 0 {
		line += fmt.Sprintf("  (op %d)", op.Target)
	}
	return line
}

type opRestoreOptions struct {
	dryRun bool
	json   bool
}

func newOpRestoreCmd(e *env) *cobra.Command {
	o := &opRestoreOptions{}
	c := &cobra.Command{
		Use:   "restore OP",
		Short: "Put back the state operation OP of the log left",
		Long: `Restore puts the workspace back in the state operation OP (its number in
'ckpt op log') left: HEAD after it, on the branch HEAD was on then (that
branch moves there, and is made again if it was deleted since).

It is a restore like 'ckpt restore': unsaved changes are checkpointed first
(kind pre-restore), only what differs is written, and every written path is
hash-verified (a mismatch exits with status 3). It is recorded in the
operation log as a restore (a switch when it changes branch) naming OP, so
'ckpt undo' takes it back and 'ckpt redo' does it again.

Operations that change no files (branch, tag, snapshot deletion, pull, a
partial save) leave no state to put back: OP naming one is refused, with
the operation to restore instead. An operation gc dropped from the log is
not found (exit status 1).

--dry-run prints every path it would create, update or delete, and changes
nothing.`,
		Example: `  ckpt op log -n 5
  ckpt op restore 12 --dry-run
  ckpt op restore 12
  ckpt undo                  # back to where you were`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runOpRestore(e, o, args[0]) },
	}
	c.Flags().BoolVarP(&o.dryRun, "dry-run", "n", false, "show what would change, change nothing")
	jsonFlag(c, &o.json, "print the result as JSON")
	return c
}

func runOpRestore(e *env, o *opRestoreOptions, arg string) error {
	seq, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil || seq <= 0 {
		return usagef("op restore: %q is not an operation number (the first column of `ckpt op log`)", arg)
	}
	var branch string
	res, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.RestoreResult, error) {
		res, err := r.OpRestore(ctx, seq, ckpt.OpRestoreOptions{DryRun: o.dryRun})
		if err == nil && !res.DryRun {
			_, branch, _ = r.Head(ctx)
		}
		return res, err
	})
	if err != nil {
		return err
	}
	if res.DryRun {
		return printRestore(e, o.json, res, "restore")
	}
	return e.result(o.json, res, "", func() {
		e.printf("op restore: now at %s%s, the state after operation %d (%d file(s) changed)\n",
			res.Head.Short(), onBranch(branch), seq, len(res.Changed()))
		printActions(e, res)
	})
}
