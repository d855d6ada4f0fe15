package cli

import (
	"context"
	"fmt"
	"slices"
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
	jsonFlag(c, &o.json, "print JSON (fields: id, time, message, kind, names, stats, ...)")
	c.Flags().IntVarP(&o.limit, "limit", "n", 0, "show at most `N` checkpoints")
	c.Flags().StringVar(&o.kind, "kind", "", "only checkpoints of this `KIND` (manual, turn, run, pre-restore, edit, restore)")
	return c
}

// listKinds are the kinds --kind takes.
var listKinds = ckpt.Kinds

func runList(e *env, o *listOptions) error {
	if o.kind != "" && !slices.Contains(listKinds, o.kind) {
		return usagef("--kind %q: want one of %s", o.kind, strings.Join(listKinds, ", "))
	}
	cps, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) ([]*ckpt.Checkpoint, error) {
		return r.List(ctx, ckpt.ListOptions{Limit: o.limit, Kind: o.kind})
	})
	if err != nil {
		return err
	}
	empty := "no checkpoints yet; `ckpt save` records one"
	if o.kind != "" {
		empty = fmt.Sprintf("no %s checkpoints", o.kind)
	}
	return listing(e, o.json, nonNil(cps), empty, checkpointID, listLine)
}

func checkpointID(c *ckpt.Checkpoint) string { return c.ID.String() }

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
