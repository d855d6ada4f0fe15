package cli

import (
	"bufio"
	"context"
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type diffOptions struct {
	stat     bool
	nameOnly bool
	json     bool
}

func newDiffCmd(e *env) *cobra.Command {
	o := &diffOptions{}
	c := &cobra.Command{
		Use:   "diff [A [B]] [-- PATH...]",
		Short: "Show changes between checkpoints or against the working tree",
		Long: `Diff prints a git-style unified diff (3 lines of context):
  ckpt diff          HEAD against the working tree
  ckpt diff A        checkpoint A against the working tree
  ckpt diff A B      checkpoint A against checkpoint B

The diff is written as 'git diff --binary' writes it: 'git apply' applies it
(and 'git apply -R' reverses it), binary files, modes and symlinks included.
Binary files (a NUL byte in their first 8000 bytes, as git decides) are git
binary patches with full blob ids; 'patch -p1' applies diffs without them
and refuses (exit status 1) those with them.`,
		Example: `  ckpt diff
  ckpt diff --stat
  ckpt diff HEAD~1 HEAD --name-only
  ckpt diff HEAD -- src/ README.md
  ckpt diff A B | git apply -R`,
		Args: func(cmd *cobra.Command, args []string) error {
			// At most two revisions; any number of PATHs after --.
			revs := args
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				revs = args[:n]
			}
			if len(revs) > 2 {
				return fmt.Errorf("diff takes at most 2 revisions before --, got %d", len(revs))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var revs, paths []string
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				revs, paths = args[:n], args[n:]
			} else {
				revs = args
			}
			return runDiff(e, o, revs, paths)
		},
	}
	c.Flags().BoolVar(&o.stat, "stat", false, "show a diffstat instead of the patch")
	c.Flags().BoolVar(&o.nameOnly, "name-only", false, "show only the names of changed files")
	jsonFlag(c, &o.json, "print JSON: added, modified (with hunks) and deleted paths, and every change")
	return c
}

func runDiff(e *env, o *diffOptions, revs, paths []string) error {
	if o.stat && o.nameOnly {
		return usagef("--stat and --name-only cannot be combined")
	}
	d, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.DiffResult, error) {
		wp, err := workspacePaths(e, r, paths)
		if err != nil {
			return nil, err
		}
		opts := ckpt.DiffOptions{Paths: wp}
		if len(revs) > 0 {
			opts.From = revs[0]
		}
		if len(revs) > 1 {
			opts.To = revs[1]
		}
		return r.Diff(ctx, opts)
	})
	if err != nil {
		return err
	}
	if o.json {
		rep, err := d.Report(e.ctx)
		if err != nil {
			return err
		}
		return e.printJSON(struct {
			*ckpt.DiffReport
			Changes []ckpt.FileChange `json:"changes"`
		}{rep, d.Changes()})
	}
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	defer w.Flush()
	switch {
	case o.nameOnly:
		for _, f := range d.Files {
			w.WriteString(displayPath(f.Path) + "\n")
		}
		return nil
	case o.stat:
		return d.WriteStat(e.ctx, w)
	}
	return d.WritePatch(e.ctx, w)
}
