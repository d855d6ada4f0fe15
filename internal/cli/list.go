package cli

import (
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type listOptions struct {
	json  bool
	limit int
	kind  string
}

func newListCmd(e *env) *cobra.Command {
	o := &listOptions{}
	c := &cobra.Command{
		Use:   "list",
		Short: "List checkpoints, newest first",
		Long: `List shows every checkpoint of the workspace, newest first: short id, time,
kind, +added ~modified -deleted against its parent, message, and the names
(HEAD, branches, tags, snapshots) pointing at it.`,
		Example: `  ckpt list
  ckpt list -n 5
  ckpt list --kind pre-restore
  ckpt list --json | jq '.[0].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runList(e, o) },
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON (fields: id, time, message, kind, names, stats, ...)")
	c.Flags().IntVarP(&o.limit, "limit", "n", 0, "show at most `N` checkpoints")
	c.Flags().StringVar(&o.kind, "kind", "", "only checkpoints of this `KIND` (manual, turn, run, pre-restore, edit, restore)")
	return c
}

func runList(e *env, o *listOptions) error {
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	cps, err := r.List(e.ctx, ckpt.ListOptions{Limit: o.limit, Kind: o.kind})
	if err != nil {
		return err
	}
	if o.json {
		return e.printJSON(nonNil(cps))
	}
	if e.quiet {
		for _, c := range cps {
			e.printf("%s\n", c.ID)
		}
		return nil
	}
	if len(cps) == 0 {
		fmt.Fprintln(e.stderr, "ckpt: no checkpoints yet; `ckpt save` records one")
		return nil
	}
	for _, c := range cps {
		e.printf("%s\n", listLine(c))
	}
	return nil
}

func listLine(c *ckpt.Checkpoint) string {
	parts := []string{c.Short(), fmtTime(c.Time), fmt.Sprintf("%-11s", c.Kind), fmt.Sprintf("%-14s", summary(c.Stats))}
	msg := oneLine(c.Message)
	if l := refLabel(c); l != "" {
		msg = strings.TrimSpace(l + " " + msg)
	}
	parts = append(parts, msg)
	return strings.TrimRight(strings.Join(parts, " "), " ")
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

type logOptions struct {
	json  bool
	limit int
}

func newLogCmd(e *env) *cobra.Command {
	o := &logOptions{}
	c := &cobra.Command{
		Use:   "log [REV]",
		Short: "Show the timeline leading to HEAD (or REV)",
		Long: `Log shows the checkpoints leading to HEAD (or REV), newest first, following
first parents. HEAD is marked with '*'. At the end it shows where 'ckpt undo'
and 'ckpt redo' would take the workspace.`,
		Example: `  ckpt log
  ckpt log -n 10
  ckpt log HEAD~3
  ckpt log --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			from := ""
			if len(args) == 1 {
				from = args[0]
			}
			return runLog(e, o, from)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON: {checkpoints, head, undo, redo}")
	c.Flags().IntVarP(&o.limit, "limit", "n", 0, "show at most `N` checkpoints")
	return c
}

func runLog(e *env, o *logOptions, from string) error {
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	cps, err := r.Log(e.ctx, ckpt.LogOptions{From: from, Limit: o.limit})
	if err != nil {
		return err
	}
	tl, err := r.Timeline(e.ctx)
	if err != nil {
		return err
	}
	if o.json {
		return e.printJSON(struct {
			Checkpoints []*ckpt.Checkpoint `json:"checkpoints"`
			Head        *ckpt.ID           `json:"head"`
			Undo        *ckpt.Step         `json:"undo"`
			Redo        *ckpt.Step         `json:"redo"`
		}{nonNil(cps), idPtr(tl.Head), tl.Undo, tl.Redo})
	}
	if e.quiet {
		for _, c := range cps {
			e.printf("%s\n", c.ID)
		}
		return nil
	}
	if len(cps) == 0 {
		fmt.Fprintln(e.stderr, "ckpt: no checkpoints yet; `ckpt save` records one")
		return nil
	}
	for _, c := range cps {
		mark := " "
		if c.ID == tl.Head {
			mark = "*"
		}
		e.printf("%s %s\n", mark, listLine(c))
	}
	if tl.Undo != nil {
		e.printf("undo: back to %s (%s #%d)\n", tl.Undo.To.Short(), tl.Undo.OpKind, tl.Undo.Op)
	} else {
		e.printf("undo: nothing to undo\n")
	}
	if tl.Redo != nil {
		e.printf("redo: forward to %s (%s #%d)\n", tl.Redo.To.Short(), tl.Redo.OpKind, tl.Redo.Op)
	}
	return nil
}

func idPtr(id ckpt.ID) *ckpt.ID {
	if id.IsZero() {
		return nil
	}
	return &id
}
