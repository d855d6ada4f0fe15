package cli

import (
	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type undoOptions struct{ json bool }

func newUndoCmd(e *env) *cobra.Command {
	o := &undoOptions{}
	c := &cobra.Command{
		Use:   "undo",
		Short: "Step the timeline back (undo the last save or restore)",
		Long: `Undo restores the state before the last save or restore, as recorded in the
operation log. Unsaved changes are first recorded as a checkpoint, so that
'ckpt redo' brings them back. Undo again to go further back.`,
		Example: `  ckpt undo
  ckpt undo && ckpt undo   # two steps back
  ckpt redo                # and forward again`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := withRepo(e, o.json, (*ckpt.Repo).Undo)
			if err != nil {
				return err
			}
			return printRestore(e, o.json, res, "undo")
		},
	}
	jsonFlag(c, &o.json, "print the result as JSON")
	return c
}
