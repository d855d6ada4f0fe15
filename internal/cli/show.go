package cli

import (
	"path"
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type showOptions struct {
	json     bool
	manifest bool
	noPager  bool
}

func newShowCmd(e *env) *cobra.Command {
	o := &showOptions{}
	c := &cobra.Command{
		Use:   "show [REV | REV:PATH]",
		Short: "Show a checkpoint, or a file as it was at one",
		Long: `Show prints a checkpoint's id, time, kind, branch, parents, message and names,
then the files it changed against its parent: A added, M modified, D deleted,
T type changed (file, symlink). REV defaults to HEAD.

With --manifest it prints the checkpoint as a Decree manifest.json instead:
{"files": {"path": {"sha256": ..., "size": N, "mode": "644"}}}.

REV:PATH, as in git, prints file PATH at checkpoint REV to stdout byte for
byte (a symlink prints its target), and a directory its entries, a
subdirectory with a trailing /; :PATH is HEAD's (ckpt has no index). PATH is relative to the top of the
workspace, or to the current directory when it starts with ./ or ../.
'ckpt cat' and 'ckpt ls' do the same with paths relative to the current
directory.` + restoreNote,
		Example: `  ckpt show
  ckpt show 3f2a --json
  ckpt show HEAD~2 --manifest > manifest.json
  ckpt show HEAD~1:src/main.go
  ckpt show before-refactor:src`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rev := "HEAD"
			if len(args) > 0 {
				rev = args[0]
			}
			if r, p, ok := strings.Cut(rev, ":"); ok {
				return runShowPath(e, o, r, p)
			}
			return runShow(e, o, rev)
		},
	}
	jsonFlag(c, &o.json, "print JSON: {checkpoint, changes}")
	c.Flags().BoolVar(&o.manifest, "manifest", false, "print the checkpoint's Decree manifest (JSON)")
	noPagerFlag(c, &o.noPager)
	return c
}

func runShow(e *env, o *showOptions, rev string) error {
	r, err := e.open(true)
	if err != nil {
		return err
	}
	if o.manifest {
		m, err := r.Manifest(e.ctx, rev)
		if err != nil {
			return err
		}
		b, err := m.MarshalJSON()
		if err != nil {
			return err
		}
		e.printf("%s\n", b)
		return nil
	}
	s, err := r.Show(e.ctx, rev)
	if err != nil {
		return err
	}
	if o.json || e.quiet {
		return e.result(o.json, s, s.Checkpoint.ID.String(), nil)
	}
	return e.withPager(o.noPager, func() error {
		printShow(e, s)
		return nil
	})
}

// runShowPath prints the file or directory p at rev, as git show REV:PATH.
func runShowPath(e *env, o *showOptions, rev, p string) error {
	if o.json || o.manifest {
		return usagef("show %s:%s: --json and --manifest show a checkpoint, not a path; 'ckpt ls --json %s %s' lists a path", rev, p, rev, p)
	}
	if rev == "" {
		rev = "HEAD"
	}
	r, err := e.open(true)
	if err != nil {
		return err
	}
	if p == "." || strings.HasPrefix(p, "./") || p == ".." || strings.HasPrefix(p, "../") {
		ps, err := workspacePaths(e, r, []string{p})
		if err != nil {
			return err
		}
		p = ps[0]
	}
	t, err := r.Stat(e.ctx, rev, p)
	if err != nil {
		return err
	}
	if !t.IsDir() {
		return catFile(e, r, rev, string(t.Path))
	}
	es, err := r.ListTree(e.ctx, rev, string(t.Path), false)
	if err != nil {
		return err
	}
	e.printf("tree %s:%s\n\n", rev, displayPath(t.Path))
	for _, c := range es {
		name := displayPath(ckpt.Path(path.Base(string(c.Path))))
		if c.IsDir() {
			name += "/"
		}
		e.printf("%s\n", name)
	}
	return nil
}

func printShow(e *env, s *ckpt.ShowResult) {
	c := s.Checkpoint
	e.printf("%s\n", strings.TrimRight("checkpoint "+c.ID.String()+" "+refLabel(c), " "))
	e.printf("time:      %s\n", fmtTime(c.Time))
	e.printf("kind:      %s\n", c.Kind)
	if c.Branch != "" {
		e.printf("branch:    %s\n", c.Branch)
	}
	if c.Author != "" {
		e.printf("author:    %s\n", c.Author)
	}
	for _, p := range c.Parents {
		e.printf("parent:    %s\n", p)
	}
	if len(c.Paths) > 0 {
		var ps []string
		for _, p := range c.Paths {
			ps = append(ps, displayPath(p))
		}
		e.printf("paths:     %s\n", strings.Join(ps, " "))
	}
	keys := make([]string, 0, len(c.Meta))
	for k := range c.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e.printf("meta:      %s=%s\n", k, c.Meta[k])
	}
	e.printf("files:     %d (%s)\n", c.Stats.Files, ckpt.HumanSize(c.Stats.Bytes))
	e.printf("changes:   %s\n", summary(c.Stats))
	if c.Message != "" {
		e.printf("\n")
		for _, l := range strings.Split(c.Message, "\n") {
			e.printf("    %s\n", l)
		}
	}
	if len(s.Changes) > 0 {
		e.printf("\n")
	}
	for _, ch := range s.Changes {
		e.printf("%s %s\n", statusLetter(ch.Status), displayPath(ch.Path))
	}
}

func statusLetter(s string) string {
	switch s {
	case "added":
		return "A"
	case "deleted":
		return "D"
	case "type-changed":
		return "T"
	}
	return "M"
}
