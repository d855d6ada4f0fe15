package cli

import (
	"github.com/seed1cedbf7c/ckpt"
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
			res, err := withRepo(e, o.json, (*ckpt.Repo).Redo)
			if err != nil {
				return err
			}
			return printRestore(e, o.json, res, "redo")
		},
	}
	jsonFlag(c, &o.json, "print the result as JSON")
	return c
}
