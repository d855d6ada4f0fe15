package cli

import (
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type saveOptions struct {
	message    string
	allowEmpty bool
	json       bool
	kind       string
	author     string
	meta       []string
	paths      []string
	force      bool
}

func newSaveCmd(e *env) *cobra.Command {
	o := &saveOptions{}
	c := &cobra.Command{
		Use:   "save [-m MSG] [PATH...]",
		Short: "Checkpoint the workspace (or only PATHs)",
		Long: `Save records a checkpoint of the whole workspace: every file and symlink that is
not ignored (.gitignore, .git/info/exclude, .ckptignore, .decreeignore). Only
files that changed since the last save are read.

With PATHs, save records a partial checkpoint of just those paths (a path that
does not exist is recorded as absent, so restoring the checkpoint deletes it);
HEAD does not move.

It prints the new checkpoint's short id and what changed against HEAD
(+added ~modified -deleted). If nothing changed, nothing is recorded (unless
--allow-empty) and save names the checkpoint the workspace already equals.`,
		Example: `  ckpt save -m "before the refactor"
  ckpt save -q                      # print only the full id
  ckpt save src/main.go             # partial checkpoint of one file
  ckpt save --allow-empty -m marker
  ckpt save --author agent --meta turn=3 --meta model=x -m "turn 3"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			return runSave(e, o)
		},
	}
	c.Flags().StringVarP(&o.message, "message", "m", "", "checkpoint message")
	c.Flags().BoolVar(&o.allowEmpty, "allow-empty", false, "record a checkpoint even if nothing changed")
	jsonFlag(c, &o.json, "print the result as JSON")
	c.Flags().StringVar(&o.kind, "kind", "", "checkpoint kind: manual, turn, run, edit (default manual; edit with PATHs)")
	c.Flags().StringVar(&o.author, "author", "", "who made the changes (default: $CKPT_AUTHOR, else $USER)")
	c.Flags().StringArrayVar(&o.meta, "meta", nil, "free metadata `KEY=VALUE` (repeatable)")
	c.Flags().BoolVar(&o.force, "force", false, "save even a home directory, / or a first save of over a million entries")
	return c
}

func runSave(e *env, o *saveOptions) error {
	if !o.force && len(o.paths) == 0 {
		// A whole-workspace save: is it the workspace meant?
		e.noCreate = noStoreError
		_, err := e.open(o.json)
		e.noCreate = createStore
		var ns *ckpt.NoStoreError
		switch {
		case errors.As(err, &ns):
			err = checkSavePlace(ns.Workspace, true)
		case err == nil:
			err = checkSavePlace(e.repo.Root(), false)
		}
		if err != nil {
			return err
		}
	}
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	paths, err := workspacePaths(e, r, o.paths)
	if err != nil {
		return err
	}
	if o.kind != "" && !slices.Contains(listKinds, o.kind) {
		return usagef("--kind %q: want manual, turn, run or edit", o.kind)
	}
	meta := map[string]string{}
	for _, kv := range o.meta {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--meta %q: want KEY=VALUE", kv)
		}
		meta[k] = v
	}
	if len(meta) == 0 {
		meta = nil
	}
	author := o.author
	if author == "" {
		author = os.Getenv("CKPT_AUTHOR")
	}
	if author == "" {
		author = os.Getenv("USER")
	}
	res, err := r.Save(e.ctx, ckpt.SaveOptions{Message: o.message, AllowEmpty: o.allowEmpty, Kind: o.kind, Paths: paths, Author: author, Meta: meta})
	e.doneProgress()
	if err != nil {
		return err
	}
	for _, s := range res.Skipped {
		e.warnf("skipped %s: %s", quotePath(s.Path), s.Reason)
	}
	if res.Warning != "" {
		e.warnf("%s", res.Warning)
	}
	cp := res.Checkpoint
	v := struct {
		Created    bool             `json:"created"`
		Checkpoint *ckpt.Checkpoint `json:"checkpoint"`
		Skipped    []ckpt.Skipped   `json:"skipped"`
		Served     bool             `json:"served"`
		Warning    string           `json:"warning,omitempty"`
	}{res.Created, cp, nonNil(res.Skipped), res.Served, res.Warning}
	return e.result(o.json, v, cp.ID.String(), func() {
		if !res.Created {
			e.printf("%s unchanged: the workspace equals HEAD (use --allow-empty to record anyway)\n", cp.Short())
			return
		}
		e.printf("%s %s\n", cp.Short(), summary(cp.Stats))
	})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
