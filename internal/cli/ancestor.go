package cli

import (
	"context"

	"github.com/seed1cedbf7c/ckpt"
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
			c, err := withRepo(e, asJSON, func(r *ckpt.Repo, ctx context.Context) (*ckpt.Checkpoint, error) {
				return r.Ancestor(ctx, args[0], args[1])
			})
			if err != nil {
				return err
			}
			return e.result(asJSON, c, c.ID.String(), func() { e.printf("%s\n", listLine(c)) })
		},
	}
	jsonFlag(c, &asJSON, "")
	return c
}
