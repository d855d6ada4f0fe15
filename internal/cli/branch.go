package cli

import (
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type branchOptions struct {
	delete bool
	json   bool
}

func newBranchCmd(e *env) *cobra.Command {
	o := &branchOptions{}
	c := &cobra.Command{
		Use:   "branch [NAME [REV]] | -d NAME",
		Short: "List branches, or create one at REV",
		Long: `Branch without arguments lists the branches, the current one marked with '*'.
With NAME it creates a branch at REV (default HEAD); HEAD stays where it is
until 'ckpt switch NAME'. -d deletes a branch (not the current one); its
checkpoints stay until gc's retention drops them.

Names: letters, digits, '_', '-', '.', and '/' for groups (feature/x); a
valid git ref (no '..', no component starting with '.' or ending in
'.lock', no trailing '.'), no leading '-'; not HEAD, not 4 to 64 hex digits
(a checkpoint id), not snapshots/x, tags/x or branches/x.`,
		Example: `  ckpt branch
  ckpt branch experiment
  ckpt branch fix/retry HEAD~2
  ckpt branch -d experiment`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runBranch(e, o, args) },
	}
	c.Flags().BoolVarP(&o.delete, "delete", "d", false, "delete the branch NAME")
	jsonFlag(c, &o.json, "")
	return c
}

// deleted is the --json answer of a deletion.
type deleted struct {
	Deleted string `json:"deleted"`
	Kind    string `json:"kind"`
}

func runBranch(e *env, o *branchOptions, args []string) error {
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	switch {
	case o.delete:
		if len(args) != 1 {
			return usagef("branch -d takes one NAME")
		}
		if err := r.DeleteBranch(e.ctx, args[0]); err != nil {
			return err
		}
		return e.result(o.json, deleted{Deleted: args[0], Kind: "branch"}, "", func() {
			e.printf("deleted branch %s\n", args[0])
		})
	case len(args) > 0:
		rev := ""
		if len(args) == 2 {
			rev = args[1]
		}
		b, err := r.CreateBranch(e.ctx, args[0], rev)
		if err != nil {
			return err
		}
		return e.result(o.json, b, "", func() {
			e.printf("created branch %s at %s\n", b.Name, b.Checkpoint.Short())
		})
	}
	bs, err := r.Branches(e.ctx)
	if err != nil {
		return err
	}
	return listing(e, o.json, bs, "no branches yet; the first `ckpt save` starts main",
		func(b *ckpt.Branch) string { return b.Name },
		func(b *ckpt.Branch) string {
			mark := " "
			if b.Current {
				mark = "*"
			}
			return fmt.Sprintf("%s %-20s %s %s %s", mark, b.Name, b.Checkpoint.Short(), fmtTime(b.Time), oneLine(b.Message))
		})
}
