package cli

import (
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
			r, err := e.open(o.json)
			if err != nil {
				return err
			}
			res, err := r.Undo(e.ctx)
			e.doneProgress()
			if err != nil {
				return err
			}
			return printRestore(e, o.json, res, "undo")
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return c
}
