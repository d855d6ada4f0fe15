package cli

import (
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
			r, err := e.open(o.json)
			if err != nil {
				return err
			}
			res, err := r.Switch(e.ctx, args[0], ckpt.SwitchOptions{Create: o.create})
			e.doneProgress()
			if err != nil {
				return err
			}
			if o.json {
				return e.printJSON(res)
			}
			if e.quiet {
				return nil
			}
			if res.Saved != nil {
				e.warnf("the state on %s was checkpointed first as %s", res.From, res.Saved.Short())
			}
			e.printf("switched to branch %s at %s (%d file(s) changed)\n", res.To, res.Head.Short(), len(res.Changed()))
			for _, a := range res.Actions {
				if a.Op != "keep" {
					e.printf("%-6s %s\n", a.Op, displayPath(a.Path))
				}
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&o.create, "create", "c", false, "create the branch at HEAD first")
	c.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return c
}
