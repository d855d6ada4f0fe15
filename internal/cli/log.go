package cli

import (
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type logOptions struct {
	json    bool
	limit   int
	all     bool
	noPager bool
}

func newLogCmd(e *env) *cobra.Command {
	o := &logOptions{}
	c := &cobra.Command{
		Use:   "log [REV|BRANCH...] [--all]",
		Short: "Show the history graph leading to HEAD (or REV, or every branch)",
		Long: `Log shows the checkpoints leading to HEAD (or to each REV or BRANCH given, or
with --all to every branch, tag and snapshot), newest first, as a graph: each
'*' is a checkpoint, lanes show where branches fork. Names (HEAD, branches,
tags, snapshots) are shown in parentheses. Where gc removed older history the
graph ends with '~'. At the end it shows where 'ckpt undo' and 'ckpt redo'
would take the workspace.`,
		Example: `  ckpt log
  ckpt log --all
  ckpt log experiment -n 10
  ckpt log --json`,
		RunE: func(cmd *cobra.Command, args []string) error { return runLog(e, o, args) },
	}
	jsonFlag(c, &o.json, "print JSON: {checkpoints, head, undo, redo}")
	c.Flags().IntVarP(&o.limit, "limit", "n", 0, "show at most `N` checkpoints")
	c.Flags().BoolVar(&o.all, "all", false, "every branch, tag and snapshot, not only HEAD")
	noPagerFlag(c, &o.noPager)
	return c
}

func runLog(e *env, o *logOptions, from []string) error {
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	nodes, err := r.Graph(e.ctx, ckpt.GraphOptions{From: from, All: o.all, Limit: o.limit})
	if err != nil {
		return err
	}
	tl, err := r.Timeline(e.ctx)
	if err != nil {
		return err
	}
	if o.json {
		return e.printJSON(struct {
			Checkpoints []*ckpt.GraphNode `json:"checkpoints"`
			Head        *ckpt.ID          `json:"head"`
			Undo        *ckpt.Step        `json:"undo"`
			Redo        *ckpt.Step        `json:"redo"`
		}{nonNil(nodes), idPtr(tl.Head), tl.Undo, tl.Redo})
	}
	if e.quiet {
		for _, n := range nodes {
			e.printf("%s\n", n.ID)
		}
		return nil
	}
	if len(nodes) == 0 {
		if all, err := r.List(e.ctx, ckpt.ListOptions{Limit: 1}); err == nil && len(all) > 0 && len(from) == 0 {
			// Partial checkpoints do not move HEAD, so the log is empty.
			fmt.Fprintf(e.stderr, "no whole-workspace checkpoint yet, only partial ones (`ckpt list` shows them, `ckpt restore %s` restores the newest); `ckpt save` records the whole workspace\n", ckpt.LastRevision)
			return nil
		}
		fmt.Fprintln(e.stderr, "no checkpoints yet; `ckpt save` records one")
		return nil
	}
	return e.withPager(o.noPager, func() error {
		printLog(e, nodes, tl)
		return nil
	})
}

func printLog(e *env, nodes []*ckpt.GraphNode, tl *ckpt.Timeline) {
	for _, line := range graphLines(nodes, listLine) {
		e.printf("%s\n", line)
	}
	if tl.Undo != nil {
		e.printf("undo: back to %s (%s #%d)%s\n", tl.Undo.To.Short(), tl.Undo.OpKind, tl.Undo.Op, onBranch(tl.Undo.Branch))
	} else {
		e.printf("undo: nothing to undo\n")
	}
	if tl.Redo != nil {
		e.printf("redo: forward to %s (%s #%d)%s\n", tl.Redo.To.Short(), tl.Redo.OpKind, tl.Redo.Op, onBranch(tl.Redo.Branch))
	}
}

func onBranch(b string) string {
	if b == "" {
		return ""
	}
	return ", on branch " + b
}

// graphLines draws nodes (children before parents) as a lane graph, git
// log --graph style: '*' a checkpoint, '|' a lane, '/' a lane joining the
// one to its left where branches fork, '~' history gc removed.
func graphLines(nodes []*ckpt.GraphNode, label func(*ckpt.Checkpoint) string) []string {
	in := map[ckpt.ID]bool{}
	for _, n := range nodes {
		in[n.ID] = true
	}
	var lanes []ckpt.ID // the checkpoint each lane waits for
	var out []string
	bars := func(upto int) string {
		var b strings.Builder
		for i := 0; i < upto; i++ {
			b.WriteString("| ")
		}
		return b.String()
	}
	for _, n := range nodes {
		var at []int
		for i, id := range lanes {
			if id == n.ID {
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			lanes = append(lanes, n.ID)
			at = []int{len(lanes) - 1}
		}
		// Lanes waiting for the same checkpoint join the first one.
		for k := len(at) - 1; k >= 1; k-- {
			j := at[k]
			var b strings.Builder
			b.WriteString(bars(j - 1))
			b.WriteString("|/")
			for range lanes[j+1:] {
				b.WriteString(" /")
			}
			out = append(out, b.String())
			lanes = append(lanes[:j], lanes[j+1:]...)
		}
		col := at[0]
		var b strings.Builder
		for i := range lanes {
			if i == col {
				b.WriteString("* ")
			} else {
				b.WriteString("| ")
			}
		}
		out = append(out, b.String()+label(n.Checkpoint))
		parent := ckpt.ID{}
		if len(n.Parents) > 0 && in[n.Parents[0]] {
			parent = n.Parents[0]
		}
		if parent.IsZero() {
			if len(n.Pruned) > 0 {
				out = append(out, bars(col)+"~ (older history removed by gc)")
			}
			lanes = append(lanes[:col], lanes[col+1:]...)
			continue
		}
		lanes[col] = parent
	}
	return out
}

func idPtr(id ckpt.ID) *ckpt.ID {
	if id.IsZero() {
		return nil
	}
	return &id
}
