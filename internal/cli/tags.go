package cli

import (
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

func newTagsCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:     "tags",
		Short:   "List tags",
		Example: "  ckpt tags\n  ckpt tags --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			return listTags(e, r, asJSON)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func listTags(e *env, r *ckpt.Repo, asJSON bool) error {
	tags, err := r.Tags(e.ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return e.printJSON(tags)
	}
	if len(tags) == 0 && !e.quiet {
		fmt.Fprintln(e.stderr, "ckpt: no tags")
	}
	for _, t := range tags {
		if e.quiet {
			e.printf("%s\n", t.Name)
			continue
		}
		e.printf("%-20s %s %s\n", t.Name, t.Checkpoint.Short(), oneLine(t.Message))
	}
	return nil
}
