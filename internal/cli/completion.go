package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

// maxCompletions caps the names a completion offers: a shell waits for
// them on every Tab.
const maxCompletions = 300

// completionRepo opens the workspace's store for a completion: read
// only, quickly, and never creating one (nil when there is none).
func (e *env) completionRepo() *ckpt.Repo {
	opts, err := e.storeOptions()
	if err != nil {
		return nil
	}
	ws, err := e.findWorkspace(opts.Store)
	if err != nil {
		return nil
	}
	opts.NoCreate, opts.NoRecover = true, true
	r, err := ckpt.Open(e.ctx, ws, opts)
	if err != nil {
		return nil
	}
	return r
}

// completeNames offers the names names returns that start with
// toComplete, and no file names.
func (e *env) completeNames(toComplete string, names func(*ckpt.Repo) []string) ([]string, cobra.ShellCompDirective) {
	r := e.completionRepo()
	if r == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer r.Close()
	var out []string
	for _, n := range names(r) {
		if strings.HasPrefix(n, toComplete) && len(out) < maxCompletions {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// revisionNames are the names a revision can be: HEAD, @last, and the
// branches, tags and snapshots.
func (e *env) revisionNames(r *ckpt.Repo) []string {
	names := []string{"HEAD", ckpt.LastRevision}
	if bs, err := r.Branches(e.ctx); err == nil {
		for _, b := range bs {
			names = append(names, b.Name)
		}
	}
	return append(append(names, e.tagNames(r)...), e.snapshotNames(r)...)
}

func (e *env) branchNames(r *ckpt.Repo) []string {
	var names []string
	if bs, err := r.Branches(e.ctx); err == nil {
		for _, b := range bs {
			names = append(names, b.Name)
		}
	}
	return names
}

func (e *env) tagNames(r *ckpt.Repo) []string {
	var names []string
	if ts, err := r.Tags(e.ctx); err == nil {
		for _, t := range ts {
			names = append(names, t.Name)
		}
	}
	return names
}

func (e *env) snapshotNames(r *ckpt.Repo) []string {
	var names []string
	if ss, err := r.Snapshots(e.ctx); err == nil {
		for _, s := range ss {
			names = append(names, s.Name)
		}
	}
	return names
}

func (e *env) remoteNames(r *ckpt.Repo) []string {
	var names []string
	if rs, err := r.Remotes(e.ctx); err == nil {
		for _, rc := range rs {
			names = append(names, rc.Name)
		}
	}
	return names
}

// restorableOps are the numbers op restore takes, newest first, each
// described by its kind, the state it left and its branch: among the
// newest 50 operations (each costs a tree diff).
func (e *env) restorableOps(r *ckpt.Repo) []string {
	var out []string
	if es, err := r.OpLog(e.ctx, ckpt.OpLogOptions{Limit: 50}); err == nil {
		for _, op := range es {
			if op.Restorable {
				out = append(out, fmt.Sprintf("%d\t%s %s (%s)", op.Seq, op.Kind, op.After.Short(), op.Branch))
			}
		}
	}
	return out
}

func (e *env) sessionIDs(r *ckpt.Repo) []string {
	var ids []string
	if ss, err := r.Sessions(e.ctx); err == nil {
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// completeArgs completes the positional arguments before position n
// (all of them when n < 0) with names, and leaves the others, and any
// after --, to the shell's file names (paths).
func completeArgs(e *env, n int, names func(*ckpt.Repo) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if (n >= 0 && len(args) >= n) || slices.Contains(e.args, "--") {
			// PATHs (after --, or after the revisions): the shell's own
			// file names.
			return nil, cobra.ShellCompDirectiveDefault
		}
		return e.completeNames(toComplete, names)
	}
}

// completeArgAt completes only the positional argument at index i.
func completeArgAt(e *env, i int, names func(*ckpt.Repo) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) != i {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return e.completeNames(toComplete, names)
	}
}

// setCompletions attaches the dynamic completions: revisions, remote
// names and session ids, read from the store.
func setCompletions(e *env, root *cobra.Command) {
	revs := completeArgs(e, -1, e.revisionNames)
	byPath := map[string]cobra.CompletionFunc{
		"restore":          completeArgs(e, 1, e.revisionNames), // then PATHs
		"diff":             completeArgs(e, 2, e.revisionNames),
		"show":             completeArgAt(e, 0, e.revisionNames),
		"log":              revs,
		"ancestor":         completeArgs(e, 2, e.revisionNames),
		"tag":              completeArgAt(e, 1, e.revisionNames),
		"branch":           completeArgAt(e, 1, e.revisionNames),
		"switch":           completeArgAt(e, 0, e.branchNames),
		"snapshot restore": completeArgAt(e, 0, e.snapshotNames),
		"snapshot diff":    completeArgAt(e, 0, e.snapshotNames),
		"snapshot delete":  completeArgAt(e, 0, e.snapshotNames),
		"push":             completeArgAt(e, 0, e.remoteNames),
		"pull":             completeArgAt(e, 0, e.remoteNames),
		"remote remove":    completeArgAt(e, 0, e.remoteNames),
		"session show":     completeArgAt(e, 0, e.sessionIDs),
		"session delete":   completeArgAt(e, 0, e.sessionIDs),
		"op restore":       completeArgAt(e, 0, e.restorableOps),
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if f, ok := byPath[path]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = f
		}
		if c.Flags().Lookup("session") != nil {
			c.RegisterFlagCompletionFunc("session", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return e.completeNames(toComplete, e.sessionIDs)
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// setCompletionCmd shows cobra's completion command, with how to install
// each shell's script.
func setCompletionCmd(root *cobra.Command) {
	root.CompletionOptions.HiddenDefaultCmd = false
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.GroupID = "integrations"
		c.Short = "Print the shell completion script (bash, zsh, fish, powershell)"
		c.Long = `Completion prints the script that teaches a shell ckpt's commands and flags,
and completes revisions (branches, tags, snapshots, HEAD), remote names and
session ids from the workspace's store (it never creates one).

Load it in the current shell, or install it for every new one (see each
shell's own help: ckpt completion bash --help).`
		c.Example = `  source <(ckpt completion bash)                      # bash, this shell
  ckpt completion bash > ~/.local/share/bash-completion/completions/ckpt
  ckpt completion zsh > "${fpath[1]}/_ckpt"           # zsh (compinit enabled)
  ckpt completion fish > ~/.config/fish/completions/ckpt.fish`
	}
}
