package cli

import (
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type branchOptions struct {
	delete bool
	json   bool
}

func newBranchCmd(e *env) *cobra.Command {
	o := &branchOptions{}
	c := &cobra.Command{
		Use:   "branch [NAME [REV]] | -d NAME",
		Short: "List branches, or create one at REV",
		Long: `Branch without arguments lists the branches, the current one marked with '*'.
With NAME it creates a branch at REV (default HEAD); HEAD stays where it is
until 'ckpt switch NAME'. -d deletes a branch (not the current one); its
checkpoints stay until gc's retention drops them.

Names: letters, digits, '_', '-', '.', and '/' for groups (feature/x); a
valid git ref (no '..', no component starting with '.' or ending in
'.lock', no trailing '.'), no leading '-'; not HEAD, not 4 to 64 hex digits
(a checkpoint id), not snapshots/x, tags/x or branches/x.`,
		Example: `  ckpt branch
  ckpt branch experiment
  ckpt branch fix/retry HEAD~2
  ckpt branch -d experiment`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runBranch(e, o, args) },
	}
	c.Flags().BoolVarP(&o.delete, "delete", "d", false, "delete the branch NAME")
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

// deleted is the --json answer of a deletion.
type deleted struct {
	Deleted string `json:"deleted"`
	Kind    string `json:"kind"`
}

func runBranch(e *env, o *branchOptions, args []string) error {
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	switch {
	case o.delete:
		if len(args) != 1 {
			return usagef("branch -d takes one NAME")
		}
		if err := r.DeleteBranch(e.ctx, args[0]); err != nil {
			return err
		}
		if o.json {
			return e.printJSON(deleted{Deleted: args[0], Kind: "branch"})
		}
		if !e.quiet {
			e.printf("deleted branch %s\n", args[0])
		}
		return nil
	case len(args) > 0:
		rev := ""
		if len(args) == 2 {
			rev = args[1]
		}
		b, err := r.CreateBranch(e.ctx, args[0], rev)
		if err != nil {
			return err
		}
		if o.json {
			return e.printJSON(b)
		}
		if !e.quiet {
			e.printf("created branch %s at %s\n", b.Name, b.Checkpoint.Short())
		}
		return nil
	}
	bs, err := r.Branches(e.ctx)
	if err != nil {
		return err
	}
	if o.json {
		return e.printJSON(bs)
	}
	if len(bs) == 0 && !e.quiet {
		fmt.Fprintln(e.stderr, "ckpt: no branches yet; the first `ckpt save` starts main")
	}
	for _, b := range bs {
		if e.quiet {
			e.printf("%s\n", b.Name)
			continue
		}
		mark := " "
		if b.Current {
			mark = "*"
		}
		e.printf("%s %-20s %s %s %s\n", mark, b.Name, b.Checkpoint.Short(), fmtTime(b.Time), oneLine(b.Message))
	}
	return nil
}

type switchOptions struct {
	create bool
	json   bool
}

func newSwitchCmd(e *env) *cobra.Command {
	o := &switchOptions{}
	c := &cobra.Command{
		Use:   "switch [-c] NAME",
		Short: "Move the workspace to another branch",
		Long: `Switch checkpoints the current state on the current branch (so switching back
returns to it exactly), restores the tip of branch NAME with the verified
restore, and moves HEAD to NAME: later saves advance NAME. If any step fails,
the workspace is rolled back to exactly its prior state. 'ckpt undo' takes a
switch back. -c creates NAME at HEAD first.`,
		Example: `  ckpt switch -c experiment    # branch here and move to it
  ckpt switch main             # back: the state left on main returns
  ckpt undo                    # and back to experiment`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(o.json)
			if err != nil {
				return err
			}
			res, err := r.Switch(e.ctx, args[0], ckpt.SwitchOptions{Create: o.create})
			e.doneProgress()
			if err != nil {
				return err
			}
			if o.json {
				return e.printJSON(res)
			}
			if e.quiet {
				return nil
			}
			if res.Saved != nil {
				e.warnf("the state on %s was checkpointed first as %s", res.From, res.Saved.Short())
			}
			e.printf("switched to branch %s at %s (%d file(s) changed)\n", res.To, res.Head.Short(), len(res.Changed()))
			for _, a := range res.Actions {
				if a.Op != "keep" {
					e.printf("%-6s %s\n", a.Op, displayPath(a.Path))
				}
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&o.create, "create", "c", false, "create the branch at HEAD first")
	c.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return c
}

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
				return listTags(e, r, o.json)
			case o.delete:
				if len(args) != 1 {
					return usagef("tag -d takes one NAME")
				}
				if err := r.DeleteTag(e.ctx, args[0]); err != nil {
					return err
				}
				if o.json {
					return e.printJSON(deleted{Deleted: args[0], Kind: "tag"})
				}
				if !e.quiet {
					e.printf("deleted tag %s\n", args[0])
				}
				return nil
			}
			rev := ""
			if len(args) == 2 {
				rev = args[1]
			}
			t, err := r.CreateTag(e.ctx, args[0], rev, o.force)
			if err != nil {
				return err
			}
			if o.json {
				return e.printJSON(t)
			}
			if !e.quiet {
				e.printf("tagged %s as %s\n", t.Checkpoint.Short(), t.Name)
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&o.delete, "delete", "d", false, "delete the tag NAME")
	c.Flags().BoolVarP(&o.force, "force", "f", false, "move an existing tag")
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

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
