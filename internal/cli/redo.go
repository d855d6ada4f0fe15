package cli

import (
	"github.com/spf13/cobra"
)

func newRedoCmd(e *env) *cobra.Command {
	o := &undoOptions{}
	c := &cobra.Command{
		Use:   "redo",
		Short: "Step the timeline forward again after undo",
		Example: `  ckpt undo
  ckpt redo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(o.json)
			if err != nil {
				return err
			}
			res, err := r.Redo(e.ctx)
			e.doneProgress()
			if err != nil {
				return err
			}
			return printRestore(e, o.json, res, "redo")
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return c
}
