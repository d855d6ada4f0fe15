package cli

import (
	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

func newForkCmd(e *env) *cobra.Command {
	var session string
	var asJSON bool
	c := &cobra.Command{
		Use:   "fork TURN",
		Short: "Start a new session from a turn, on a new branch",
		Long: `Fork starts a new session with the conversation before turn TURN and a new
history branch (fork/<id>) starting at that turn's checkpoint. The workspace
moves to the fork — the state at the start of TURN — after the current state
is checkpointed on the current branch; the new session becomes the current
one. The original session and its branch are untouched ('ckpt switch' goes
back).`,
		Example: "  ckpt fork 3\n  ckpt fork 2 --session 3fa2",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			turn, err := parseTurn(args[0])
			if err != nil {
				return err
			}
			ctl, err := e.controller(asJSON, session)
			if err != nil {
				return err
			}
			res, err := ctl.Fork(e.ctx, turn)
			e.doneProgress()
			if err != nil {
				return err
			}
			return e.result(asJSON, res, "", func() { printFork(e, ctl.ID(), turn, res) })
		},
	}
	c.Flags().StringVar(&session, "session", "", "the session `ID` (default: the current one)")
	jsonFlag(c, &asJSON, "")
	return c
}

func printFork(e *env, from string, turn int, res *ckpt.ForkResult) {
	e.sayf("forked session %s from turn %d of %s, on branch %s (%d file(s) changed)\n",
		res.Session.ID, turn, from, res.Session.Branch, len(res.Switch.Changed()))
}
