package cli

import (
	"github.com/spf13/cobra"
)

func newAncestorCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "ancestor A B",
		Short: "Show the nearest common ancestor of two checkpoints",
		Long: `Ancestor prints the nearest checkpoint both A and B descend from (a checkpoint
is its own ancestor). It exits with status 1 when their histories do not
meet (or gc removed where they meet).`,
		Example: "  ckpt ancestor main experiment\n  ckpt ancestor HEAD v1 --json",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			c, err := r.Ancestor(e.ctx, args[0], args[1])
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				return e.printJSON(c)
			case e.quiet:
				e.printf("%s\n", c.ID)
			default:
				e.printf("%s\n", listLine(c))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
