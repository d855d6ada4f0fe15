package cli

import (
	"context"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type restoreOptions struct {
	dryRun bool
	json   bool
}

func newRestoreCmd(e *env) *cobra.Command {
	o := &restoreOptions{}
	c := &cobra.Command{
		Use:   "restore REV [PATH...]",
		Short: "Make the workspace (or PATHs) equal to a checkpoint",
		Long: `Restore makes the workspace — or only the given PATHs — equal to checkpoint REV.

Before changing anything it checkpoints the current state if it differs from
HEAD (kind pre-restore), so 'ckpt undo' brings it back. It writes only what
differs (temp file + rename), removes files REV does not have and prunes
directories it emptied, and never touches ignored or skipped files. Every
written path is then hash-verified against REV; a mismatch exits with status 3.

--dry-run prints every path it would create, update or delete, and changes
nothing.`,
		Example: `  ckpt restore HEAD~1
  ckpt restore 3f2a9c -- src/
  ckpt restore before-refactor --dry-run`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRestore(e, o, args[0], args[1:]) },
	}
	c.Flags().BoolVarP(&o.dryRun, "dry-run", "n", false, "show what would change, change nothing")
	jsonFlag(c, &o.json, "print the result as JSON")
	return c
}

func runRestore(e *env, o *restoreOptions, rev string, paths []string) error {
	res, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.RestoreResult, error) {
		wp, err := workspacePaths(e, r, paths)
		if err != nil {
			return nil, err
		}
		return r.Restore(ctx, rev, ckpt.RestoreOptions{Paths: wp, DryRun: o.dryRun})
	})
	if err != nil {
		return err
	}
	return printRestore(e, o.json, res, "restore")
}

func printRestore(e *env, asJSON bool, res *ckpt.RestoreResult, verb string) error {
	return e.result(asJSON, res, "", func() { printRestoreText(e, res, verb) })
}

func printRestoreText(e *env, res *ckpt.RestoreResult, verb string) {
	n := len(res.Changed())
	switch {
	case res.DryRun:
		e.printf("would %s %s (%d file(s) to change):\n", verb, res.Target.Short(), n)
	case verb == "restore":
		e.printf("restored %s (%d file(s) changed)\n", res.Target.Short(), n)
	default:
		e.printf("%s: now at %s (%d file(s) changed)\n", verb, res.Head.Short(), n)
	}
	printActions(e, res)
}

// printActions prints a restore's changes, a line a path, and says where
// unsaved changes went.
func printActions(e *env, res *ckpt.RestoreResult) {
	for _, a := range res.Actions {
		if a.Op == "keep" {
			e.printf("keep   %s (%s)\n", displayPath(a.Path), a.Reason)
			continue
		}
		e.printf("%-6s %s\n", a.Op, displayPath(a.Path))
	}
	if res.PreRestore != nil {
		e.warnf("unsaved changes were checkpointed first as %s (ckpt undo brings them back)", res.PreRestore.Short())
	}
}
