package cli

import (
	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type recoverOptions struct{ json bool }

func newRecoverCmd(e *env) *cobra.Command {
	o := &recoverOptions{}
	c := &cobra.Command{
		Use:   "recover",
		Short: "Finish an operation a crash interrupted",
		Long: `Recover finishes a restore, undo, redo, switch, rewind or run revert that was
interrupted (the process was killed, the machine lost power) so the workspace
equals its target, and removes ckpt's leftover temporary files. Every ckpt
command does this automatically first; recover does it explicitly and reports.

Recover also settles guarded runs (ckpt run, ckpt process) that a ckpt which
is gone left "running": what is left of the routine's process group is
killed, and the attempt is recorded as interrupted with its changes kept
(changes.diff), to be resumed by ckpt process or ckpt run --id. The next
ckpt process or ckpt run of that run does the same.`,
		Example: `  ckpt recover`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e.noRecover = true
			res, err := withRepo(e, o.json, (*ckpt.Repo).Recover)
			if err != nil {
				return err
			}
			return e.result(o.json, res, "", func() { printRecover(e, res) })
		},
	}
	jsonFlag(c, &o.json, "")
	return c
}

func printRecover(e *env, res *ckpt.RecoverResult) {
	for _, p := range res.Removed {
		e.printf("removed leftover %s\n", displayPath(p))
	}
	if res.Op != "" {
		e.printf("finished the interrupted %s: now at %s (%d file(s) changed)\n", res.Op, res.Result.Head.Short(), len(res.Result.Changed()))
	}
	for _, id := range res.Runs {
		e.printf("run %s was cut short: its routine's processes were stopped and it is recorded as interrupted; ckpt process (or ckpt run --id %s) resumes it\n", id, id)
	}
	if res.Op == "" && len(res.Runs) == 0 {
		e.printf("nothing to recover\n")
	}
}
