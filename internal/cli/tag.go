package cli

import (
	"github.com/spf13/cobra"
)

type tagOptions struct {
	delete bool
	force  bool
	json   bool
}

func newTagCmd(e *env) *cobra.Command {
	o := &tagOptions{}
	c := &cobra.Command{
		Use:   "tag NAME [REV] | -d NAME",
		Short: "Name a checkpoint (default HEAD), or delete a tag",
		Long: `Tag gives the checkpoint REV (default HEAD) a name that revisions accept
(ckpt restore NAME, ckpt diff NAME). Tagged checkpoints are never removed by
gc. An existing tag is moved only with --force. 'ckpt tags' lists them.
Names follow the rules of 'ckpt branch --help'.`,
		Example: `  ckpt tag green-tests
  ckpt tag v1 HEAD~3
  ckpt tag --force green-tests
  ckpt tag -d v1`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(o.json)
			if err != nil {
				return err
			}
			switch {
			case len(args) == 0:
				return listTags(e, o.json)
			case o.delete:
				if len(args) != 1 {
					return usagef("tag -d takes one NAME")
				}
				if err := r.DeleteTag(e.ctx, args[0]); err != nil {
					return err
				}
				return e.result(o.json, deleted{Deleted: args[0], Kind: "tag"}, "", func() {
					e.printf("deleted tag %s\n", args[0])
				})
			}
			rev := ""
			if len(args) == 2 {
				rev = args[1]
			}
			t, err := r.CreateTag(e.ctx, args[0], rev, o.force)
			if err != nil {
				return err
			}
			return e.result(o.json, t, "", func() {
				e.printf("tagged %s as %s\n", t.Checkpoint.Short(), t.Name)
			})
		},
	}
	c.Flags().BoolVarP(&o.delete, "delete", "d", false, "delete the tag NAME")
	c.Flags().BoolVarP(&o.force, "force", "f", false, "move an existing tag")
	jsonFlag(c, &o.json, "")
	return c
}
