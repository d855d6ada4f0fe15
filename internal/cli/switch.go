package cli

import (
	"context"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type switchOptions struct {
	create bool
	json   bool
}

func newSwitchCmd(e *env) *cobra.Command {
	o := &switchOptions{}
	c := &cobra.Command{
		Use:   "switch [-c] NAME",
		Short: "Move the workspace to another branch",
		Long: `Switch checkpoints the current state on the current branch (so switching back
returns to it exactly), restores the tip of branch NAME with the verified
restore, and moves HEAD to NAME: later saves advance NAME. If any step fails,
the workspace is rolled back to exactly its prior state. 'ckpt undo' takes a
switch back. -c creates NAME at HEAD first.`,
		Example: `  ckpt switch -c experiment    # branch here and move to it
  ckpt switch main             # back: the state left on main returns
  ckpt undo                    # and back to experiment`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.SwitchResult, error) {
				return r.Switch(ctx, args[0], ckpt.SwitchOptions{Create: o.create})
			})
			if err != nil {
				return err
			}
			return e.result(o.json, res, "", func() {
				if res.Saved != nil {
					e.warnf("the state on %s was checkpointed first as %s", res.From, res.Saved.Short())
				}
				e.printf("switched to branch %s at %s (%d file(s) changed)\n", res.To, res.Head.Short(), len(res.Changed()))
				for _, a := range res.Actions {
					if a.Op != "keep" {
						e.printf("%-6s %s\n", a.Op, displayPath(a.Path))
					}
				}
			})
		},
	}
	c.Flags().BoolVarP(&o.create, "create", "c", false, "create the branch at HEAD first")
	jsonFlag(c, &o.json, "print the result as JSON")
	return c
}
