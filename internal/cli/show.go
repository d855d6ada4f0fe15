package cli

import (
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type showOptions struct {
	json     bool
	manifest bool
}

func newShowCmd(e *env) *cobra.Command {
	o := &showOptions{}
	c := &cobra.Command{
		Use:   "show REV",
		Short: "Show a checkpoint's metadata and the files it changed",
		Long: `Show prints a checkpoint's id, time, kind, branch, parents, message and names,
then the files it changed against its parent: A added, M modified, D deleted,
T type changed (file, symlink).

With --manifest it prints the checkpoint as a Decree manifest.json instead:
{"files": {"path": {"sha256": ..., "size": N, "mode": "644"}}}.`,
		Example: `  ckpt show HEAD
  ckpt show 3f2a --json
  ckpt show HEAD~2 --manifest > manifest.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runShow(e, o, args[0]) },
	}
	jsonFlag(c, &o.json, "print JSON: {checkpoint, changes}")
	c.Flags().BoolVar(&o.manifest, "manifest", false, "print the checkpoint's Decree manifest (JSON)")
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
	return e.result(o.json, s, s.Checkpoint.ID.String(), func() { printShow(e, s) })
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
