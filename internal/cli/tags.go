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
		RunE:    func(cmd *cobra.Command, args []string) error { return listTags(e, asJSON) },
	}
	jsonFlag(c, &asJSON, "")
	return c
}

// listTags is ckpt tags, and ckpt tag without arguments.
func listTags(e *env, asJSON bool) error {
	tags, err := withRepo(e, asJSON, (*ckpt.Repo).Tags)
	if err != nil {
		return err
	}
	return listing(e, asJSON, tags, "no tags",
		func(t *ckpt.Tag) string { return t.Name },
		func(t *ckpt.Tag) string {
			return fmt.Sprintf("%-20s %s %s", t.Name, t.Checkpoint.Short(), oneLine(t.Message))
		})
}
